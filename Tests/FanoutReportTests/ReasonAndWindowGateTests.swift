import FanoutAPNs
import FanoutMeasure
import FanoutResults
import Foundation
import Histogram
import Testing

@testable import FanoutReport

/// `fanout gate` by reason (`rejected.REASON`, `failed.CAUSE`, counts or shares of sent) and
/// over the run's worst window (`window(10s).p99`), on folders whose figures are known.
@Suite struct ReasonAndWindowGateTests {
    /// A folder from the golden summary: 10,000 sent, 30 rejected TooManyRequests, 20
    /// Unregistered, 5 failed on a lost connection; and a latency.hlog of 60 one-second
    /// intervals after a 1 s warm-up, each 1,000 answers at 10 ms but seconds 31-40, a stall
    /// (30 answers a second at 300 ms), and second 0, in the warm-up, 1,000 at 900 ms.
    /// The whole run after the warm-up: 300 of 50,300 at 300 ms (0.6%): its p99 is 10 ms; the
    /// worst 10 s window holds only the stall: its p50 and p99 are 300 ms. summary.json's p99
    /// says 10 ms, as the log does.
    /// The three seconds the logs are made of, packed once (a histogram's 190 KB counts array
    /// is slow to fill in a debug build).
    static let histograms: (warmUp: PackedHistogram, stall: PackedHistogram, calm: PackedHistogram) = {
        func packed(_ count: UInt64, at microseconds: UInt64) -> PackedHistogram {
            var histogram = makeMicrosecondHistogram()
            histogram.record(microseconds, count: count)
            return PackedHistogram(histogram)
        }
        return (packed(1000, at: 900_000), packed(30, at: 300_000), packed(1000, at: 10_000))
    }()

    static func folder(intervalSeconds: Double = 1, stall: Bool = true) throws -> String {
        var summary = try SummaryDocument.read(GoldenFilesTests.golden + "/summary.json")
        summary.sent = 10_000
        summary.rejected = [.apns(.tooManyRequests): 30, .apns(.unregistered): 20]
        summary.failed = [.connectionLost: 5]
        summary.warmUpSeconds = 1
        summary.latency?.p99 = 10  // as the log says: the whole run hides the stall
        let entries = (0...60).map { second in
            let histogram =
                second == 0
                ? histograms.warmUp : stall && (31...40).contains(second) ? histograms.stall : histograms.calm
            return IntervalLog.Entry(
                start: Double(second) * intervalSeconds,
                length: intervalSeconds,
                histogram: histogram
            )
        }
        let folder = NSTemporaryDirectory() + "fanout-window-gate-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try JSONDocument.data(summary).write(to: URL(fileURLWithPath: folder + "/summary.json"))
        try IntervalLog(entries: entries, start: 1_800_000_000).text
            .write(toFile: folder + "/latency.hlog", atomically: true, encoding: .utf8)
        return folder
    }

    @Test(
        arguments: [
            ("rejected.TooManyRequests == 30", true),
            ("rejected.TooManyRequests < 0.1%", false),  // 0.3% of sent
            ("rejected.TooManyRequests < 0.5%", true),
            ("rejected.Unregistered <= 20", true),
            ("rejected.BadDeviceToken == 0", true),  // a reason the run never met counts 0
            ("failed.ConnectionLost == 0", false),
            ("failed.Timeout == 0", true),
            ("failed.ConnectionRefused == 0", true),
            ("window(10s).p99 < 200ms", false),
            ("window(10s).p50 > 299ms", true),
            ("window(1m).p99 < 200ms", true),  // 60 s: the stall's 300 are 0.6% of the window
            ("window(5s).max < 310ms", true),
            ("p99 < 200ms", true),
        ] as [(String, Bool)]
    )
    func thresholdsPassAndFailAsTheFiguresSay(threshold: String, passes: Bool) throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let outcome = try Gate(run: folder, baseline: nil, thresholds: [threshold], file: nil).evaluate()
        #expect(outcome.verdicts.map(\.passed) == [passes], "\(threshold): \(outcome.verdicts.map(\.measured))")
    }

    /// The warm-up's 900 ms second is no window's, and the worst window is the stall's.
    @Test func theWorstWindowLeavesTheWarmUpOut() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let worst = try RunRecord.worstWindow(in: folder, seconds: 10, metric: .max, warmUp: 1)
        #expect(worst.map { abs($0 - 300) < 1 } == true, "\(String(describing: worst))")
        let withWarmUp = try RunRecord.worstWindow(in: folder, seconds: 10, metric: .max, warmUp: 0)
        #expect(withWarmUp.map { abs($0 - 900) < 1 } == true, "\(String(describing: withWarmUp))")
    }

    /// `fanout compare` shows each side's worst window beside the whole run's p99: equal whole
    /// runs, a stall on one side.
    @Test func aComparisonShowsTheWorstWindowBesideTheWholeRun() throws {
        let calm = try Self.folder(stall: false)
        let stalled = try Self.folder()
        defer {
            try? FileManager.default.removeItem(atPath: calm)
            try? FileManager.default.removeItem(atPath: stalled)
        }
        let comparison = RunComparison(baseline: try RunSet.load(calm), current: try RunSet.load(stalled))
        let before = try #require(comparison.worstWindowP99.baseline)
        let after = try #require(comparison.worstWindowP99.current)
        #expect(abs(before - 10) < 0.1 && abs(after - 300) < 1, "\(before) \(after)")
        #expect(
            comparison.text.contains(
                /worst 10 s window's p99 \(window\(10s\).p99\): 10.\d\d ms → [23]\d\d.\d\d ms \(\+\d+.\d%\); the whole run's p99 10.00 ms → 10.00 ms/
            ),
            "\(comparison.text)"
        )
    }

    /// A window is whole intervals: 3 s over a log of 2 s intervals cannot be measured.
    @Test func aWindowThatIsNotWholeIntervalsIsRefused() throws {
        let folder = try Self.folder(intervalSeconds: 2)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let error = #expect(throws: GateError.self) {
            try Gate(run: folder, baseline: nil, thresholds: ["window(3s).p99 < 1s"], file: nil)
        }
        #expect(error?.kind == .results(.inconsistent))
        #expect(
            error?.description
                == "\(folder)/latency.hlog holds intervals of 2.0 s: a window is a whole number of them, not 3 s"
        )
    }

    @Test(
        arguments: [
            ("rejected.Nope == 0", "Nope is neither an APNs reason nor an FCM error code"),
            ("failed.Nope == 0", "Nope is not a failure cause"),
            ("window(10).p99 < 1s", "the window's length is whole seconds or minutes"),
            ("window(0s).p99 < 1s", "the window's length is whole seconds or minutes"),
            ("window(10s).throughput > 5/s", "a window measures a latency"),
            ("window(10s)p99 < 1s", "a window is written window(10s).p99"),
        ] as [(String, String)]
    )
    func badReasonsAndWindowsSayWhatIsWrong(text: String, says: String) {
        let error = #expect(throws: ThresholdError.self) { try Threshold(parsing: text) }
        #expect(error?.kind == .metric)
        #expect(error?.description.contains(says) == true, "\(String(describing: error))")
    }

    @Test func metricsReadBackAsWritten() throws {
        for text in ["rejected.TooManyRequests", "failed.ConnectionLost", "window(10s).p99", "window(2m).max"] {
            #expect(try GateMetric(parsing: text)?.description == text)
        }
        #expect(try GateMetric(parsing: "window(120s).p99")?.description == "window(2m).p99")
    }
}
