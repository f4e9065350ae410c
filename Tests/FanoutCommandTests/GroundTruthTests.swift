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
///   2 × 100). Nothing under 50 ms; the slowest answer at least 50 ms after the latest send's
///   lateness (latency counts from the due time); the median within 1 ms of 50 and the run's
///   p99 within 3 ms, each plus what the two processes say they added at that percentile: the
///   sender its share of each answer (`--apns-id timed`: its send lateness and the way back from
///   the sink's answer), the sink its answers' lateness past their hold (its `/stats`). At p99
///   each share is capped by the longest that process's loops lagged (timers, apart from the
///   requests' way: the host's delays) and half a millisecond: on a quiet host 54–56 ms.
///   Every second's p99 at most 53 ms plus the sender's worst in that second (its send lateness
///   or its loops' lag, and its reading) and the sink's worst, capped the same way. The way in
///   (the send to the sink's read) has no allowance.
/// - The search for `p99 < 100ms` (over 1 × 200 and 4 × 50) and `p99 < 200ms` (over 2 × 100 and
///   8 × 25): an answer within 5% of 200 streams ÷ the time each is held (Little's law; the
///   median latency at 3,000/s, where nothing queues, itself within 1 ms of 50 plus the sender's
///   loops' lag): 4,000/s less a percent on a quiet host. Each shape is searched once, each
///   objective in two shapes: above the capacity the queue grows without bound, so both
///   objectives find the same knee, and a search takes about half a minute of CI's time alone
///   (both objectives in every shape, eight searches, took 256 of the suite's 308 s).
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
/// 2.6–4.5 ms at p99, the sink's 2.2–4.1 ms, and the sink wrote its answers 3–7 ms past their
/// hold — and the run's p99 was 53.9–56.3 ms in all four shapes, once 64.6 ms, against
/// 50.9–51.6 ms on a quiet host (the first CI failure: 53.47 ms at 2,000/s over 1 × 200, the
/// sender's send lateness and reading 0.3 ms). The two shares are not independent of the
/// latency (together with the way in they are the latency less the hold), which is why each is
/// capped by its loops' longest lag: a sender or sink that adds to every answer without the
/// host's help exceeds the cap and fails. (Capped by the loops' lag at p99 instead, the bound
/// failed the 64.6 ms run: 62.1 ms, each loop's p99 about 4 ms.)
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
            let harness = try #require(summary.harness, "\(shape): no harness account")
            let sender = try #require(harness.sender.perAnswer, "\(shape): no timed answers")
            #expect(sender.count == rate * seconds, "\(shape): \(sender.count) timed answers")
            let sendLateness = try #require(harness.sender.sendLateness, "\(shape): no send lateness")
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
            // Counted from the due time, not the send: the notification sent latest took its
            // 50 ms after that (a count from the send would hide the lateness).
            #expect(
                latency.max >= 50 + sendLateness.max - 0.1,
                "\(shape): the slowest answer \(latency.max) ms, the latest send \(sendLateness.max) ms late"
            )
            // The tail: the sink's 50 ms, 3 ms more, and what each process says it added at p99,
            // each at most the longest its loops lagged (timers, apart from the requests' way:
            // what the host took from it) and half a millisecond: on a quiet host 54–56 ms.
            let senderPart = min(sender.p99, harness.sender.loopLag.max + 0.5)
            let sinkPart = min(sinkOwn.lateness.p99, sinkOwn.loopLag.max + 0.5)
            #expect(
                latency.p99 <= 53 + senderPart + sinkPart,
                "\(shape): p99 \(latency.p99) ms; the sender's share of each answer \(sender.p99) ms at p99 (its loops' lag \(harness.sender.loopLag.max) ms at most), the sink's lateness \(sinkOwn.lateness.p99) ms (its loops' \(sinkOwn.loopLag.max) ms)"
            )
            // Each second (the last a part of one, its p99 about its slowest answer): the same
            // 53 ms and the worst each process says it added — the sender's in that second (its
            // send lateness or its loops' lag, one stall showing in both; its reading) and the
            // sink's over the run, at most its loops' worst lag and half a millisecond.
            let sinkWorst = min(sinkOwn.lateness.max, sinkOwn.loopLag.max + 0.5)
            for interval in summary.intervals where interval.latencyCount > 0 {
                let senderWorst = max(interval.maxLag, interval.maxLoopLag ?? 0) + (interval.readDelayP99 ?? 0)
                #expect(
                    interval.p99 <= 53 + senderWorst + sinkWorst,
                    "\(shape), second \(interval.second): p99 \(interval.p99) ms; the sender's send lateness \(interval.maxLag) ms, loop lag \(interval.maxLoopLag ?? 0) ms, reading \(interval.readDelayP99 ?? 0) ms; the sink's worst \(sinkWorst) ms"
                )
            }
        }
    }

    /// Each shape with the objective it is searched for.
    static let searches = [(1, 200, 100), (2, 100, 200), (4, 50, 100), (8, 25, 200)]

    @Test(arguments: searches)
    func theSearchFindsTheCapacityInEveryShape(connections: Int, streams: Int, limit: Int) throws {
        let (sink, port) = try Self.sink()
        defer { sink.stop() }
        do {
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
            // 200 streams, each held from a send to its answer — the sink's 50 ms and what the
            // host adds to it — carry 200 ÷ that a second (Little's law). The hold is checked on
            // the search's first step, 3,000/s: three quarters of the capacity, where nothing
            // waits for a stream. The capacity is worked out from the shortest median hold of
            // the steps that passed: the host only ever adds to a hold, and a queue only adds
            // to a median, so the shortest is the closest to what the streams carry. (Once the
            // first step alone was slowed: p50 53.1 ms, 2,946/s of 3,000/s achieved, the
            // sender's loops lagging; the later steps held 50.3–51.0 ms and 3,938/s passed, over
            // the 3,765/s the first step's hold implied.) On a quiet host 4,000/s less a percent;
            // with both cores busy with other work each answer took 52–53 ms and the capacity was
            // that much lower (3,750/s found over 8 × 25, 6.25% under 4,000/s).
            let first = try #require(search.steps.min { $0.offered < $1.offered }, "\(what): no step")
            let hold = first.p50
            let shortest = search.steps.filter { $0.outcome == "passed" }.map(\.p50).min() ?? hold
            let capacity = Double(connections * streams) * 1000 / shortest
            // The hold itself: the sink's 50 ms and at most 1 ms more, and what the sender's
            // loops lagged at p99 in that step (the host's delays), so that a sender adding to
            // every answer cannot lower the capacity found and the capacity expected together.
            // (The median stands for the mean Little's law asks: the holds are within a few ms.)
            let loopLag = try CommandRunner.summary(in: first.folder).harness?.sender.loopLag.p99 ?? 0
            #expect(
                hold >= 50 && hold <= 51 + loopLag,
                "\(what): p50 \(hold) ms at \(first.offered)/s, the sender's loops lagging \(loopLag) ms at p99"
            )
            // The search brackets the capacity: the rate it found is not over it (a percent for the
            // median hold standing for the mean), the rate that failed above it is not more than
            // 5% under it, and the rate found not more than 10% under it. At the grid's finest a
            // step a few tenths of a percent under capacity (3,938/s of 3,958/s) passes or fails by
            // the host's jitter — at 99.5% of capacity any delay queues — so the rate found is
            // 3,938/s or 3,750/s (5.3% under), both right. Measured: the builds at f3aea69 and
            // f25b841 each found 3,750/s in some runs and 3,938/s in others, alone on this host.
            let failed = try #require(answer.failed, "\(what): no failed rate above \(rate)/s: \(answer)")
            // The failed rate is held to the capacity the streams had in the steps that failed at
            // it, when the host slowed those steps' holds: each such step's own median hold gives
            // its own capacity (Little's law again), and a step whose every answer the host made
            // 4 ms longer carried 200 ÷ 54 ms, not 200 ÷ 50. Once, in CI with both cores busy,
            // 3,750/s passed a bisect step (p50 50.4 ms) and failed its confirmation (p50 54.3 ms,
            // p99 109 ms): 3,683/s carried, 0.4% under the 95% of 3,966/s the quiet steps gave. A
            // search that fails a rate its streams carried with room keeps its median at the
            // sink's 50 ms, and is still caught. The excuse is capped at a tenth of the hold
            // (55 ms for 50): a step failing by a queue the sender made has a median far longer,
            // and is held to 95% of the quiet capacity less that tenth. And whatever the
            // medians, the rate found — under the failed one — is held to 90% of the quiet
            // steps' capacity below.
            let failedHold = search.steps.filter { $0.offered == failed && $0.outcome != "passed" }.map(\.p50).max()
            let excused = min(max(shortest, failedHold ?? shortest), shortest * 1.1)
            let failedCapacity = Double(connections * streams) * 1000 / excused
            let found =
                "\(what): found \(rate)/s, \(failed)/s failed, for a capacity of \(capacity)/s (shortest p50 of a passing step \(shortest) ms), \(failedCapacity)/s in the steps failing at \(failed)/s (p50 \(failedHold ?? shortest) ms)\n\(result.standardOutput)"
            #expect(rate <= capacity * 1.01, "\(found)")
            #expect(failed >= failedCapacity * 0.95, "\(found)")
            #expect(rate >= capacity * 0.90, "\(found)")
        }
    }
}
