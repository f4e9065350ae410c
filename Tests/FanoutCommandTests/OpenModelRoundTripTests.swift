import FanoutTestSupport
import Foundation
import Testing

/// The open model against a sink 80 ms away (issue #47): the ramp at each connection's start
/// named where the latency is read, and the pacing window said.
@Suite(.serialized) struct OpenModelRoundTripTests {
    static func folder() -> String { NSTemporaryDirectory() + "fanout-round-trip-\(UUID().uuidString)" }

    static func openModel(_ summary: [String: Any]) throws -> (model: [String: Any], waits: [String: Any]) {
        let model = try #require(summary["open_model"] as? [String: Any], "\(summary.keys.sorted())")
        return (model, try #require(model["stream_waits"] as? [String: Any]))
    }

    /// APNs allows one stream a connection until its first request is accepted, and the sink
    /// models it: at 2,000/s over 2 connections, the arrivals of the first round trip (80 ms:
    /// about 160, less the two that go first) wait for that answer, up to 80 ms. The summary,
    /// summary.md, report.html and the printed summary say so; the per-second figures put them
    /// in the first second. A warm-up past the ramp names none.
    @Test func theFirstRoundTripsWaitIsNamedAndAWarmUpPastItNamesNone() throws {
        let folder = Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let arguments = [
            "run", "--sink-latency", "fixed:80ms", "--rate", "2000", "--count", "2000", "--connections", "2",
            "--streams", "1000",
        ]
        let run = try CommandRunner.run(arguments + ["--output", folder + "/ramp"], timeout: .seconds(120))
        #expect(run.status == 0, "\(run.standardError)")
        #expect(run.standardOutput.contains("pacing: --coalesce auto, windows up to "), "\(run.standardOutput)")
        #expect(run.standardOutput.contains("stream waits: "), "\(run.standardOutput)")
        #expect(run.standardOutput.contains("1 stream a connection"), "\(run.standardOutput)")

        let summary = try CommandRunner.summary(in: folder + "/ramp")
        let (model, waits) = try Self.openModel(summary)
        #expect(model["coalesce"] as? String == "auto")
        // ¼ of 80 ms on the 200 µs × 2ⁿ ladder is past the ceiling, 12.8 ms.
        let window = try #require(model["largest_window_ms"] as? Double)
        #expect(window == 12.8, "\(window)")
        let count = try #require(waits["count"] as? Int)
        // Physics: 2,000/s × 80 ms = 160 arrivals before the first answers; a slow start only adds.
        #expect(count >= 120 && count <= 600, "\(waits)")
        #expect(waits["fewest_streams"] as? Int == 1, "\(waits)")
        let longest = try #require(waits["longest_ms"] as? Double)
        #expect(longest >= 60 && longest <= 400, "\(waits)")
        let share = try #require(waits["share"] as? Double)
        #expect(abs(share - Double(count) / 2000) < 0.01, "\(waits)")
        let intervals = try #require(summary["intervals"] as? [[String: Any]])
        #expect(intervals.compactMap { $0["stream_waits"] as? Int }.reduce(0, +) == count)
        #expect((intervals.first?["stream_waits"] as? Int ?? 0) > 0, "the first second holds the ramp")
        let markdown = try String(contentsOfFile: folder + "/ramp/summary.md", encoding: .utf8)
        #expect(markdown.contains("Stream waits: \(count) notifications"), "\(markdown)")
        let html = try String(contentsOfFile: folder + "/ramp/report.html", encoding: .utf8)
        #expect(html.contains("Stream waits: \(count) notifications"))
        #expect(html.contains("class=\"stream-waits\""), "the chart of seconds shades them")
        // The waits are the endpoint's limit, not the harness's delay: its own p99 leaves them
        // out (it read 73 ms, about the longest wait, before). Bounded against the run's own
        // figures, so that a loaded machine, which adds to both sides, cannot fail it: the
        // latency's p99 less the 80 ms hold less half the longest wait.
        let harness = try #require(summary["harness"] as? [String: Any])
        let own = try #require((harness["own_ms"] as? [String: Any])?["p99"] as? Double, "\(harness)")
        let p99 = try #require((summary["latency_ms"] as? [String: Any])?["p99"] as? Double)
        #expect(own < p99 - 80 - longest / 2, "own \(own), p99 \(p99), longest wait \(longest)")
        let schema = try SummarySchemaCheck.validate([folder + "/ramp/summary.json"])
        #expect(schema.status == 0, "\(schema.output)")

        let warm = try CommandRunner.run(
            arguments + ["--warm-up", "300ms", "--output", folder + "/warm"],
            timeout: .seconds(120)
        )
        #expect(warm.status == 0, "\(warm.standardError)")
        #expect(!warm.standardOutput.contains("stream waits"), "\(warm.standardOutput)")
        let (_, warmWaits) = try Self.openModel(try CommandRunner.summary(in: folder + "/warm"))
        #expect(warmWaits["count"] as? Int == 0, "\(warmWaits)")
        let warmMarkdown = try String(contentsOfFile: folder + "/warm/summary.md", encoding: .utf8)
        #expect(!warmMarkdown.contains("Stream waits"))
    }

    /// A closed-model run has no open-model section; `--coalesce` takes auto or a window up to
    /// 100 ms and says what it got otherwise.
    @Test func theClosedModelHasNoPacingAndBadWindowsAreRefused() throws {
        let folder = Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let run = try CommandRunner.run(["run", "--count", "2000", "--output", folder])
        #expect(run.status == 0, "\(run.standardError)")
        #expect(try CommandRunner.summary(in: folder)["open_model"] == nil)
        #expect(!run.standardOutput.contains("pacing:"))
        for (value, message) in [("soon", "--coalesce"), ("1s", "longer than 100ms")] {
            let refused = try CommandRunner.run(["run", "--count", "10", "--rate", "100", "--coalesce", value])
            #expect(refused.status == 64, "\(value): \(refused.standardError)")
            #expect(refused.standardError.contains(message), "\(value): \(refused.standardError)")
        }
    }
}
