import Foundation
import Testing

@testable import FanoutReport

/// The live page and its document: the document round-trips through its JSON, the page holds it
/// inline where no string can end its script, and fetches nothing but `/live.json`.
@Suite struct LivePageTests {
    static func document(rejected: [String: Int] = ["Unregistered": 3]) -> LiveDocument {
        LiveDocument(
            command: "send",
            elapsedSeconds: 7.6,
            finished: 7_100,
            ratePerSecond: 1_002.5,
            accepted: 7_097,
            rejected: rejected,
            failed: [:],
            seconds: [
                .init(
                    second: 6,
                    completed: 1_001,
                    p50Ms: 0.41,
                    p99Ms: 2.5,
                    rejected: rejected,
                    failed: ["timeout": 1],
                    loopLagMaxMs: 0.2,
                    readDelayP99Ms: 0.05,
                    senderCores: 0.31
                )
            ]
        )
    }

    @Test func theDocumentSaysTheCurrentSecondAndRoundTrips() throws {
        let document = Self.document()
        #expect(document.second == 7 && document.version == 2 && !document.done)
        let read = try JSONDecoder().decode(LiveDocument.self, from: Data(document.json.utf8))
        #expect(read == document)
    }

    /// `/live.json` names its keys as summary.json does, snake_case (issue 64: it was camelCase).
    @Test func theDocumentsKeysAreSnakeCaseAsSummaryJSONs() throws {
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data(Self.document().json.utf8)) as? [String: Any]
        )
        #expect(
            Set(object.keys) == [
                "version", "command", "second", "elapsed_seconds", "finished", "rate_per_second", "accepted",
                "rejected", "failed", "done", "seconds",
            ]
        )
        let second = try #require((object["seconds"] as? [[String: Any]])?.first)
        #expect(
            Set(second.keys) == [
                "second", "completed", "p50_ms", "p99_ms", "rejected", "failed", "loop_lag_max_ms",
                "read_delay_p99_ms", "sender_cores",
            ]
        )
    }

    @Test func thePageHoldsTheDocumentInlineAndFetchesOnlyItsOwnServer() throws {
        let page = LivePage.html(Self.document())
        let start = try #require(page.range(of: "<script id=\"live-data\" type=\"application/json\">"))
        let end = try #require(page[start.upperBound...].range(of: "</script>"))
        let inline = String(page[start.upperBound..<end.lowerBound])
        #expect(try JSONDecoder().decode(LiveDocument.self, from: Data(inline.utf8)) == Self.document())
        for pattern in ["src=", "<link", "@import", "url(", "https:"] {
            #expect(!page.contains(pattern), "the page contains \(pattern)")
        }
        #expect(page.ranges(of: "fetch(").count == 1 && page.contains("fetch(\"/live.json\""))
    }

    /// A reason that holds `</script>` (none does; a scenario's custom one could) stays data.
    @Test func noStringInTheDocumentEndsItsScript() throws {
        let page = LivePage.html(Self.document(rejected: ["</script><b>": 1]))
        #expect(!page.contains("</script><b>"))
        let start = try #require(page.range(of: "type=\"application/json\">"))
        let end = try #require(page[start.upperBound...].range(of: "</script>"))
        let inline = String(page[start.upperBound..<end.lowerBound])
        let read = try JSONDecoder().decode(LiveDocument.self, from: Data(inline.utf8))
        #expect(read.rejected["</script><b>"] == 1)
    }
}
