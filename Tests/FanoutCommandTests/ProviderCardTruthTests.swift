import FanoutReport
import FanoutResults
import FanoutTestSupport
import Foundation
import Testing

/// Issue #43: the conformance card accuses only the guilty. Each test plants exactly one
/// behaviour with a provider written for it (`Peers/card_peer.py`, Python's h2) and reads the
/// card `fanout sink --output` wrote: correct providers get a clean card (a first flight of
/// streams before the SETTINGS was read, streams in flight when the GOAWAY left, a certificate
/// connection's burst), faults are counted exactly (streams opened after reading the GOAWAY,
/// answers a provider died without reading).
@Suite(.requires(.h2, .hyperframe), .serialized) struct ProviderCardTruthTests {
    static let peer = CommandRunner.repositoryRoot + "/Tests/FanoutCommandTests/Peers/card_peer.py"

    /// The last line `card_peer.py` writes: what the provider saw (each key only in the modes
    /// that report it).
    struct Said: Decodable {
        /// How many streams ended in each status (`-7`: reset with REFUSED_STREAM).
        var statuses: [String: Int]?
        var lastStream: Int?
        var answered: Int?

        enum CodingKeys: String, CodingKey {
            case statuses
            case lastStream = "last_stream"
            case answered
        }
    }

    struct Outcome {
        var folder: String
        /// The peer's line as written, for messages.
        var said: String
        var saw: Said
        var summary: SummaryDocument
        var card: [String: Int]
        var sinkOutput: String

        var provider: SummaryDocument.Provider? { summary.provider }
        var statuses: [String: Int]? { saw.statuses }

        func gate(_ threshold: String) throws -> CommandRunner.Result {
            try CommandRunner.run(["gate", folder, "--threshold", threshold])
        }
    }

    /// Runs the sink with `sinkOptions` and `card_peer.py MODE PORT COUNT` as its trigger; the
    /// sink ends a second after the peer's last request (at most 60 s).
    static func plant(
        _ mode: String,
        count: Int,
        sinkOptions: [String],
        peerOptions: [String] = []
    ) throws -> Outcome {
        let folder = NSTemporaryDirectory() + "fanout-card-\(mode)-\(UUID().uuidString)"
        // The sink picks its port; the peer, its trigger, finds it in FANOUT_SINK_PORT.
        let peer = ["python3", Self.peer, mode, "\"$FANOUT_SINK_PORT\"", "\(count)"] + peerOptions
        // The card's counts are exact, not statistics: a handful of requests is enough for them.
        let result = try CommandRunner.run(
            [
                "sink", "--listen", "127.0.0.1:0", "--output", folder, "--idle-exit", "1s", "--duration", "60s",
                "--min-measured", "1",
            ]
                + sinkOptions + ["--trigger", peer.joined(separator: " ")],
            timeout: .seconds(90)
        )
        #expect(result.status == 0, "\(result.standardError)")
        let log = try String(contentsOfFile: folder + "/trigger.log", encoding: .utf8)
        let last = try #require(log.split(separator: "\n").last, "\(log)")
        let saw = try JSONDecoder().decode(Said.self, from: Data(last.utf8))
        let summary = try CommandRunner.summary(in: folder)
        return Outcome(
            folder: folder,
            said: String(last),
            saw: saw,
            summary: summary,
            card: try ProviderUnderTestTests.card(summary),
            sinkOutput: result.standardOutput
        )
    }

    /// 20 streams in the first flight, before the sink's SETTINGS (1 stream until a request is
    /// accepted) could be read: RFC 9113 lets a client open them (§6.5.3), the sink answers them
    /// all, and the card is clean (it counted 20 a connection before).
    @Test func aFirstFlightOfStreamsIsNoFault() throws {
        let outcome = try Self.plant("first-flight", count: 20, sinkOptions: ["--no-auth", "--latency", "fixed:20ms"])
        defer { try? FileManager.default.removeItem(atPath: outcome.folder) }
        #expect(outcome.statuses == ["200": 20], "\(outcome.said)")
        #expect(outcome.card.values.allSatisfy { $0 == 0 }, "\(outcome.card)")
        #expect(try outcome.gate("violations == 0").status == 0)
    }

    /// 500 requests in one write; the sink sends GOAWAY after 100 with the rest on the wire (it
    /// answers at once: Python's h2 fails on an answer that comes after a GOAWAY).
    /// Those were sent before the GOAWAY could arrive (RFC 9113 §6.8's race): not counted (it
    /// counted 242 before).
    @Test func streamsInFlightWhenTheGoAwayLeftAreNoFault() throws {
        let outcome = try Self.plant(
            "goaway-race",
            count: 500,
            sinkOptions: ["--no-auth", "--goaway-after-requests", "100"]
        )
        defer { try? FileManager.default.removeItem(atPath: outcome.folder) }
        let last = try #require(outcome.saw.lastStream, "\(outcome.said)")
        #expect(last >= 199 && last < 999, "\(outcome.said)")
        #expect(outcome.saw.answered == (last + 1) / 2, "\(outcome.said)")
        #expect(outcome.card["after-goaway"] == 0, "\(outcome.card)")
        #expect(try outcome.gate("violations == 0").status == 0)
    }

    /// Streams opened after the provider read the GOAWAY (it acknowledged the PING in front of
    /// it): each one counted.
    @Test func streamsOpenedAfterReadingTheGoAwayAreCounted() throws {
        let outcome = try Self.plant(
            "after-goaway",
            count: 7,
            // The first answer held 1.5 s: the connection stays open for the planted streams
            // however slow the machine.
            sinkOptions: ["--no-auth", "--latency", "fixed:1500ms", "--goaway-after-requests", "1"]
        )
        defer { try? FileManager.default.removeItem(atPath: outcome.folder) }
        #expect(outcome.card["after-goaway"] == 7, "\(outcome.card)")
        #expect(try outcome.gate("violations.after-goaway == 7").status == 0)
        #expect(try outcome.gate("violations == 0").status == 1)
    }

    /// A provider that dies with 50 answers unread (its socket closed with them in its receive
    /// buffer: a reset): the sink accepted 50 the provider never saw, and says so.
    @Test func answersAProviderDiedWithoutReadingAreCounted() throws {
        let outcome = try Self.plant("unread", count: 50, sinkOptions: ["--no-auth", "--latency", "fixed:20ms"])
        defer { try? FileManager.default.removeItem(atPath: outcome.folder) }
        #expect(outcome.summary.accepted == 50)
        let connections = try #require(outcome.provider?.connections)
        let unread = connections.compactMap(\.maybeUnread).reduce(0, +)
        #expect(unread == 50, "\(connections)")
        #expect(
            lines(of: outcome.sinkOutput, keyed: "answered, maybe unread: ") == [
                "answered, maybe unread: 50 answers the provider never acknowledged reading before its connection broke "
                    + "(connection 1): the sink's counts are ahead of the provider's"
            ],
            "\(outcome.sinkOutput)"
        )
        #expect(try outcome.gate("unread == 0").status == 1)
        let markdown = MarkdownDocument(try String(contentsOfFile: outcome.folder + "/summary.md", encoding: .utf8))
        #expect(
            markdown.lines.count { $0.components(separatedBy: "**: ").first == "⚠️ **50 answered, maybe unread" } == 1,
            "\(markdown)"
        )
    }

    /// The control: a correct provider's answers are all acknowledged read, none counted.
    @Test func aProviderThatReadsEverythingLeavesNothingUnread() throws {
        let outcome = try Self.plant("first-flight", count: 50, sinkOptions: ["--no-auth", "--latency", "fixed:20ms"])
        defer { try? FileManager.default.removeItem(atPath: outcome.folder) }
        let connections = try #require(outcome.provider?.connections)
        #expect(connections.compactMap(\.maybeUnread).allSatisfy { $0 == 0 })
        #expect(try outcome.gate("unread == 0").status == 0)
    }

    /// Three streams at once after the provider read and acknowledged SETTINGS with a limit of
    /// 1: two refused, two counted.
    @Test func aBurstPastAnAcknowledgedLimitIsCounted() throws {
        let outcome = try Self.plant("settled-burst", count: 3, sinkOptions: ["--no-auth", "--latency", "fixed:100ms"])
        defer { try? FileManager.default.removeItem(atPath: outcome.folder) }
        #expect(outcome.statuses == ["200": 1, "-7": 2], "\(outcome.said)")
        #expect(outcome.card["stream-limit"] == 2, "\(outcome.card)")
    }

    /// A certificate-authenticated provider: 100 streams at once before any answer. Apple's
    /// "one stream until a valid authentication token" is a token connection's rule; the sink
    /// raises a certificate connection's limit at the handshake, and the card is clean (271
    /// stream-limit counts before).
    @Test(.requires(.openssl)) func aCertificateConnectionIsNotHeldToOneStream() throws {
        let folder = try SinkSecurityCommandTests.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try SinkSecurityCommandTests.certificate("ca", subject: "/CN=Fanout test push CA", in: folder)
        try SinkSecurityCommandTests.certificate(
            "uid",
            subject: "/UID=com.example.app/CN=Apple Push Services: com.example.app/O=Example",
            in: folder,
            ca: folder + "/ca"
        )
        let outcome = try Self.plant(
            "certificate",
            count: 100,
            sinkOptions: [
                "--tls-self-signed", folder + "/tls", "--client-ca", folder + "/ca.pem", "--latency", "fixed:20ms",
            ],
            peerOptions: ["--tls", folder + "/tls/cert.pem", folder + "/uid.pem", folder + "/uid.key"]
        )
        defer { try? FileManager.default.removeItem(atPath: outcome.folder) }
        #expect(outcome.statuses == ["200": 100], "\(outcome.said)")
        #expect(outcome.card.values.allSatisfy { $0 == 0 }, "\(outcome.card)")
    }
}

/// A sink no provider ever reaches: it stops by itself, says it measured nothing (not a
/// fan-out of 0 s and a passed card), and its folder never passes a gate.
@Suite struct EmptyProviderRunTests {
    @Test func aSinkNoRequestReachesStopsAndItsFolderIsInvalid() throws {
        let folder = NSTemporaryDirectory() + "fanout-empty-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let result = try ProviderUnderTestTests.sinkNobodyReaches(
            into: folder,
            ["--idle-exit", "1s", "--first-request-within", "2s"]
        )
        let summary = try CommandRunner.summary(in: folder)
        #expect(summary.provider?.endedBy == "no-request")
        #expect(summary.requests == 0)
        // Before: "fan-out: 0 accepted in 0.000 s", delivery times of 0.00 and "card: passed".
        let lines = result.standardOutput.split(separator: "\n").map(String.init)
        #expect(lines.filter { $0.hasPrefix("fan-out: ") } == ["fan-out: nothing arrived; ended by no-request"])
        #expect(lines.filter { $0.hasPrefix("card: ") } == ["card: not judged: no request arrived"])
        #expect(lines.filter { $0.hasPrefix("delivery time") || $0.hasPrefix("capacity: ") }.isEmpty)
        let gate = try CommandRunner.run(
            ["gate", folder, "--threshold", "violations == 0", "--threshold", "fanout < 60s"]
        )
        #expect(gate.status == 2, "\(gate.standardOutput)")
        let record = try RunRecord.load(folder)
        #expect(record.invalidReasons.contains(.noRequests))
        // The fan-out time of nothing is not measured (it read "measured 0 ms … pass").
        #expect(record.metrics[.fanout] == nil)
        let fanout = gate.standardOutput.split(separator: "\n").filter { $0.hasPrefix("fanout < 60s") }
        #expect(fanout.count == 1)
        #expect(fanout.first?.hasSuffix("measured not measured   limit 60 s   FAIL") == true, "\(fanout)")
        let markdown = try String(contentsOfFile: folder + "/summary.md", encoding: .utf8)
        #expect(
            markdown.split(separator: "\n").contains {
                $0.hasSuffix("card not judged (no request arrived) · ended by no-request")
            }
        )
        let page = HTMLDocument(try String(contentsOfFile: folder + "/report.html", encoding: .utf8))
        let cards = Dictionary(
            page.elements("div", class: "card").compactMap { card in
                card.elements("div", class: "label").first.map {
                    ($0.text, card.elements("div", class: "value").first?.text ?? "")
                }
            },
            uniquingKeysWith: { first, _ in first }
        )
        #expect(cards["card"] == "not judged")
        #expect(cards["fan-out time"] == "—")
        #expect(cards["delivery p99"] == "—")
    }
}
