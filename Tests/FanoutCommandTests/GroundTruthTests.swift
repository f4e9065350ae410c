import FanoutMeasure
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
///   2 × 100). Nothing under 50 ms; the median within 1 ms of it and the run's p99 within 3 ms,
///   each plus what the two processes say of themselves at that percentile, each by its own
///   clock: the sender its share of each answer (send lateness and the way back from the sink's
///   write, `--apns-id timed`) and the sink its answers' lateness past their hold (its `/stats`).
///   Every second's p99 at most 53 ms plus the sender's account of that second (its send
///   lateness, its loops' worst lag, its reading) and the sink's. The way in (the send to the
///   sink's read) has no allowance, and neither has an error of the measurement itself.
/// - The search for `p99 < 100ms` and `p99 < 200ms`: an answer within 5% of 200 streams ÷ the
///   time each is held (Little's law; the median latency at the answer): 4,000/s on a quiet host.
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
///
/// Why the bounds have the processes' accounts and not a flat 53 ms: with both cores busy with other
/// work (two `yes` loops), the host delays every wake-up on the way — the sender's loops lagged
/// 3.5–4 ms at p99 and the sink wrote its answers 3–5 ms past their hold — and the run's p99 was
/// 54.3–56.2 ms in all four shapes (p50 up to 51.2 ms), against 50.9–51.6 ms on a quiet host (the
/// first CI failure: 53.47 ms at 2,000/s over 1 × 200, the sender's send lateness and reading
/// 0.3 ms). Each account is a process timing itself, not the latency less the hold: the sum of
/// both at p99 is larger than the run's extra p99 under load, but the way in and an error in how
/// latency is measured are in neither.
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
    static let sinkArguments = ["--latency", "fixed:50ms", "--initial-streams", "1000"]

    static func sink() throws -> (PeerProcess, Int) {
        try CommandRunner.sink(sinkArguments)
    }

    static func endpoint(_ port: Int, _ shape: (Int, Int)) -> [String] {
        [
            "--endpoint", "http://127.0.0.1:\(port)", "--template",
            CommandRunner.repositoryRoot + "/fixtures/poll.json",
            "--topic", "com.example.app", "--connections", "\(shape.0)", "--streams", "\(shape.1)",
        ]
    }

    static func folder() -> String { NSTemporaryDirectory() + "fanout-truth-\(UUID().uuidString)" }

    /// The sink's own delays, from its `/stats` (`own_delays`).
    static func sinkOwnDelays(admin: Int) throws -> SinkOwnDelays.Figures {
        struct Stats: Decodable {
            var ownDelays: SinkOwnDelays.Figures
            enum CodingKeys: String, CodingKey { case ownDelays = "own_delays" }
        }
        let result = try PeerProcess.run("curl", ["-sf", "--max-time", "5", "http://127.0.0.1:\(admin)/stats"])
        try #require(result.status == 0, "the sink's /stats: \(result.errors)")
        return try JSONDecoder().decode(Stats.self, from: Data(result.output.utf8)).ownDelays
    }

    @Test(arguments: shapes)
    func openModelRunsMeasureTheSinksFiftyMillisecondsToTheLastNotification(connections: Int, streams: Int) throws {
        for share in [0.5, 0.75, 0.9] {
            // A sink of its own for each run: its account is of this run's answers only.
            let (sink, port) = try CommandRunner.sink(Self.sinkArguments + ["--admin", "127.0.0.1:0"])
            defer { sink.stop() }
            let admin = try sink.announcedPort(after: "admin on ")
            let rate = Int(Self.capacity * share)
            let seconds = 3
            let folder = Self.folder()
            defer { try? FileManager.default.removeItem(atPath: folder) }
            let result = try CommandRunner.run(
                ["send"] + Self.endpoint(port, (connections, streams)) + [
                    "--generate", "\(rate * seconds)", "--rate", "\(rate)", "--duration", "\(seconds)s",
                    "--apns-id", "timed", "--output", folder,
                ],
                timeout: .seconds(60)
            )
            let shape = "\(connections) × \(streams) at \(rate)/s"
            #expect(result.status == 0, "\(shape): \(result.standardError)")
            let summary = try CommandRunner.summary(in: folder)
            #expect(summary.accepted == rate * seconds, "\(shape)")
            #expect(summary.unscheduled == 0, "\(shape)")
            let latency = try #require(summary.latency)
            let sender = try #require(summary.harness?.sender.perAnswer, "\(shape): no timed answers")
            #expect(sender.count == rate * seconds, "\(shape): \(sender.count) timed answers")
            // The sink hands its loops' records over once a second: read until all are in.
            var sinkOwn = try Self.sinkOwnDelays(admin: admin)
            try poll(timeout: .seconds(5), every: .milliseconds(200)) {
                sinkOwn = try Self.sinkOwnDelays(admin: admin)
                return sinkOwn.lateness.count >= rate * seconds
            }
            #expect(sinkOwn.lateness.count == rate * seconds, "\(shape): the sink timed \(sinkOwn.lateness.count)")
            // Physics: nothing is answered sooner than the sink's 50 ms, and the median answer
            // within 1 ms of it, plus the median of what each process says it added.
            #expect(
                latency.p50 >= 50 && latency.p50 <= 51 + sender.p50 + sinkOwn.lateness.p50,
                "\(shape): p50 \(latency.p50) ms; the sender's share \(sender.p50) ms at p50, the sink's lateness \(sinkOwn.lateness.p50) ms"
            )
            let sinkLate = sinkOwn.lateness.p99
            // The tail: the sink's 50 ms, 3 ms more, and what each process says it added.
            #expect(
                latency.p99 <= 53 + sender.p99 + sinkLate,
                "\(shape): p99 \(latency.p99) ms; the sender's share of each answer \(sender.p99) ms at p99, the sink's lateness \(sinkLate) ms"
            )
            // Each second (the last a part of one, its p99 about its slowest answer): the same
            // 53 ms and the worst each process says it added — the sender's in that second (its
            // send lateness: the open model counts from the due time, so a notification sent
            // 5 ms late is measured 5 ms longer; its loops' lag: an answer waits in the socket
            // about as long; its reading) and the sink's over the run.
            for interval in summary.intervals where interval.latencyCount > 0 {
                let account =
                    interval.maxLag + (interval.maxLoopLag ?? 0) + (interval.readDelayP99 ?? 0) + sinkOwn.lateness.max
                #expect(
                    interval.p99 <= 53 + account,
                    "\(shape), second \(interval.second): p99 \(interval.p99) ms; the sender's send lateness \(interval.maxLag) ms, loop lag \(interval.maxLoopLag ?? 0) ms, reading \(interval.readDelayP99 ?? 0) ms; the sink's lateness \(sinkOwn.lateness.max) ms at most"
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
            // Little's law: 200 streams, each held from a send to its answer — the sink's 50 ms
            // and what the host adds to it, the median latency of the steps at the answer —
            // carry 200 ÷ that a second. On a quiet host 4,000/s less a percent; with both cores
            // busy with other work each answer took 52–53 ms and the capacity was that much
            // lower (3,750/s found over 8 × 25, 6.25% under 4,000/s: a step at 3,938/s queued).
            let held = search.steps.filter { $0.offered == rate }.map(\.p50)
            let hold = try #require(held.min(), "\(what): no step at \(rate)/s")
            let capacity = Double(connections * streams) * 1000 / hold
            #expect(hold >= 50, "\(what): p50 \(hold) ms at \(rate)/s")
            #expect(
                abs(rate / capacity - 1) <= 0.05,
                "\(what): answered \(rate)/s for a capacity of \(capacity)/s (p50 \(hold) ms)\n\(result.standardOutput)"
            )
        }
    }
}
