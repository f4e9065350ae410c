import FanoutTestSupport
import Foundation
import Testing

/// The open model and `fanout search` against physics: a `fanout sink` process answering every
/// request after exactly 50 ms, reached over four stream shapes of the same capacity — 1 × 200,
/// 2 × 100, 4 × 50 and 8 × 25: 200 streams, each freed every 50 ms, carry 4,000 notifications a
/// second whichever way they are split, and a notification sent with a stream free waits 50 ms.
///
/// - Open-model runs at 50%, 75% and 90% of capacity, with exactly as many tokens as arrivals
///   (the case that once ended with connections starving for tokens: p99 601 ms at 75% in
///   2 × 100): the run's p99 at most 53 ms, and every second's at most 53 ms plus the lateness
///   the sender reports of itself in that second (its send lateness and its answer reading).
/// - The search for `p99 < 100ms` and `p99 < 200ms`: an answer within 5% of 4,000/s.
///
/// The sink announces its streams from the start (`--initial-streams`), so the capacity is the
/// same in every second. The steps are short (3 s after a 1 s warm-up) and the physics still
/// holds: above capacity the queue grows by the excess, so 5% over it (4,200/s) adds 4 s × 200/s
/// ÷ 4,000/s = 200 ms and fails either objective, while at 90% nothing queues. scripts/test.sh
/// runs this suite alone, after the others, against the release build (`FANOUT_EXECUTABLE`), so
/// that neither another suite's load nor a debug build's slowness is measured as the sink's
/// latency: a debug sender and sink add about 3 ms to some seconds' p99, over the 3 ms bound
/// (seen: 53.4 ms at 3,600/s over 4 × 50 and 8 × 25). Without `FANOUT_EXECUTABLE` the suite does
/// not run. scripts/bench/shapes.sh is the full-length form.
@Suite(
    .serialized,
    .enabled(
        if: ProcessInfo.processInfo.environment["FANOUT_EXECUTABLE"] != nil,
        "measures timing: run by scripts/test.sh against the release build (FANOUT_EXECUTABLE)"
    )
)
struct GroundTruthTests {
    static let shapes = [(1, 200), (2, 100), (4, 50), (8, 25)]
    static let capacity = 4000.0

    /// A sink process with the fixed 50 ms; stopped by the caller.
    static func sink() throws -> (PeerProcess, Int) {
        try CommandRunner.sink(["--latency", "fixed:50ms", "--initial-streams", "1000"])
    }

    static func endpoint(_ port: Int, _ shape: (Int, Int)) -> [String] {
        [
            "--endpoint", "http://127.0.0.1:\(port)", "--template",
            CommandRunner.repositoryRoot + "/fixtures/poll.json",
            "--topic", "com.example.app", "--connections", "\(shape.0)", "--streams", "\(shape.1)",
        ]
    }

    static func folder() -> String { NSTemporaryDirectory() + "fanout-truth-\(UUID().uuidString)" }

    @Test(arguments: shapes)
    func openModelRunsMeasureTheSinksFiftyMillisecondsToTheLastNotification(connections: Int, streams: Int) throws {
        let (sink, port) = try Self.sink()
        defer { sink.stop() }
        for share in [0.5, 0.75, 0.9] {
            let rate = Int(Self.capacity * share)
            let seconds = 3
            let folder = Self.folder()
            defer { try? FileManager.default.removeItem(atPath: folder) }
            let result = try CommandRunner.run(
                ["send"] + Self.endpoint(port, (connections, streams)) + [
                    "--generate", "\(rate * seconds)", "--rate", "\(rate)", "--duration", "\(seconds)s",
                    "--output", folder,
                ],
                timeout: .seconds(60)
            )
            let shape = "\(connections) × \(streams) at \(rate)/s"
            #expect(result.status == 0, "\(shape): \(result.standardError)")
            let summary = try CommandRunner.summary(in: folder)
            #expect(summary.accepted == rate * seconds, "\(shape)")
            #expect(summary.unscheduled == 0, "\(shape)")
            let p99 = try #require(summary.latency?.p99)
            // At least the sink's 50 ms (nothing is answered sooner), at most 3 ms more.
            #expect(p99 >= 50 && p99 <= 53, "\(shape): p99 \(p99) ms")
            // Each second: the same 3 ms, plus what the sender itself reports it added to that
            // second's latencies — its send lateness (the open model counts from the due time,
            // so a notification sent 5 ms late is measured 5 ms longer) and its delay in
            // reading answers. A host that stalls the sender for 8 ms once in a run (seen on a
            // fresh 2-core CI machine: one second's p99 57.98 ms, the run's 50.6) is said by the
            // sender's own account and allowed exactly that; an error of the measurement
            // itself, which no account covers, still fails. The run's p99 has no such allowance.
            for interval in summary.intervals where interval.latencyCount > 0 {
                let secondP99 = interval.p99
                let lateness = interval.maxLag
                let reading = interval.readDelayP99 ?? 0
                #expect(
                    secondP99 <= 53 + lateness + reading,
                    "\(shape), second \(interval.second): p99 \(secondP99) ms, the sender's send lateness \(lateness) ms and reading \(reading) ms"
                )
            }
        }
    }

    @Test(arguments: shapes)
    func theSearchFindsTheCapacityInEveryShape(connections: Int, streams: Int) throws {
        let (sink, port) = try Self.sink()
        defer { sink.stop() }
        for limit in [100, 200] {
            let folder = Self.folder()
            defer { try? FileManager.default.removeItem(atPath: folder) }
            let result = try CommandRunner.run(
                ["search"] + Self.endpoint(port, (connections, streams)) + [
                    "--slo", "p99 < \(limit)ms", "--from", "3000/s", "--step-duration", "3s", "--warm-up", "1s",
                    "--output", folder,
                ],
                timeout: .seconds(300)
            )
            let what = "\(connections) × \(streams), p99 < \(limit)ms"
            #expect(result.status == 0, "\(what): \(result.standardOutput)\(result.standardError)")
            let search = try SearchCommandTests.search(in: folder)
            let answer = try #require(search.answer, "\(what): no answer")
            let rate = try #require(answer.rate, "\(what): \(answer)")
            #expect(
                abs(rate / Self.capacity - 1) <= 0.05,
                "\(what): answered \(rate)/s for a capacity of 4,000/s\n\(result.standardOutput)"
            )
        }
    }
}
