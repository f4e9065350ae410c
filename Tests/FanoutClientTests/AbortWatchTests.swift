import FanoutAPNs
import FanoutMeasure
import Histogram
import Testing

@testable import FanoutClient

/// `AbortWatch` alone, second by second on made-up counts and seconds: what each condition
/// measures over its window, the unanswered a stall leaves counted only once they are
/// certainly over the limit, and nothing judged before `--abort-after`.
@Suite struct AbortWatchTests {
    /// A run at `rate` a second whose every answer takes `latency` µs, second by second.
    struct Run {
        var rate = 1000
        var seconds: [LoadInterval] = []
        var tally = AbortWatch.Tally(second: 0)

        /// One more second: `rate` sent, `answered` of them (and of the earlier unanswered)
        /// answered at `latency` µs, with `rejected` rejections.
        mutating func second(answered: Int? = nil, latency: UInt64 = 2_000, rejected: Int = 0) {
            let answered = answered ?? rate
            var histogram = LoadStatistics.makeHistogram()
            if answered > 0 { _ = histogram.record(latency, count: UInt64(answered)) }
            seconds.append(
                LoadInterval(
                    second: tally.second,
                    completed: answered,
                    latencies: PackedHistogram(histogram),
                    p50: latency,
                    p90: latency,
                    p99: latency,
                    max: latency,
                    maxLag: 0
                )
            )
            tally.second += 1
            tally.started += rate
            tally.finished += answered
            tally.rejected[APNsReason.unregistered.index] += rejected
        }

        func intervals(from second: Int) -> [LoadInterval] { seconds.filter { $0.second >= second } }
    }

    static func watch(_ conditions: [AbortCondition], after: Duration = .zero) -> AbortWatch {
        AbortWatch(policy: AbortPolicy(conditions: conditions, after: after))
    }

    static let p99Over200ms = AbortCondition(
        text: "p99 > 200ms",
        measure: .latency(percentile: 99),
        comparison: .greater,
        limit: 200,
        windowSeconds: 10
    )

    /// Judges each second of `run` from its first; the first abort, if any.
    static func firstAbort(_ watch: AbortWatch, _ run: Run) -> Abort? {
        var replay = Run(rate: run.rate)
        for index in run.seconds.indices {
            replay.seconds.append(run.seconds[index])
            replay.tally.second = index + 1
            replay.tally.started = run.rate * (index + 1)
            replay.tally.finished = run.seconds[...index].reduce(0) { $0 + $1.completed }
            replay.tally.rejected = run.tally.rejected
            if let abort = watch.check(replay.tally, intervals: replay.intervals(from:)) { return abort }
        }
        return nil
    }

    @Test func slowAnswersInTheWindowAbortAtTheSecondTheyAreSeen() {
        var run = Run()
        for _ in 0..<5 { run.second() }
        // 2% of a second's answers at 300 ms: the 10 s window's p99 stays under 200 ms until
        // enough of them are in it.
        for _ in 0..<10 {
            run.second(answered: 980)
            run.seconds[run.seconds.count - 1].latencies = PackedHistogram(
                Self.histogram([(2_000, 980), (300_000, 20)])
            )
            run.tally.finished += 20
        }
        let watch = Self.watch([Self.p99Over200ms])
        let abort = Self.firstAbort(watch, run)
        // Seconds 0–4 fast, then 2% slow. At 10 s the window (0–9) holds 100 slow of 10,000:
        // 1%, and its p99 is still a fast one; at 11 s (1–10), 120: over 1%.
        #expect(abort?.after == .seconds(11), "\(String(describing: abort))")
        #expect(abort.map { abs($0.measured - 300) < 1 } == true, "\(String(describing: abort))")
        #expect(abort?.unanswered == nil)
        #expect(abort?.unit == "ms")
    }

    /// A stall: nothing is answered, so no latency is recorded at all; the unanswered count
    /// just over the limit once they are ⌈limit⌉ + 1 s old, and not before.
    @Test func aStallIsSeenThroughItsUnansweredNotificationsOnlyOnceTheyAreCertainlySlow() {
        var run = Run()
        for _ in 0..<10 { run.second() }
        run.second(answered: 0)  // second 10: stalled
        run.second(answered: 0)  // second 11
        run.second(answered: 0)  // second 12
        let watch = Self.watch([Self.p99Over200ms])
        let abort = Self.firstAbort(watch, run)
        // At 11 s the 1,000 sent in second 10 are unanswered, but only 1 s old: not yet judged
        // (the counts may lag a second). At 12 s, those sent before 10 s are all answered;
        // at 13 s, the 1,000 sent in second 10 are 2 s old and unanswered: 1,000 of 10,000.
        #expect(abort?.after == .seconds(13), "\(String(describing: abort))")
        #expect(abort?.unanswered == Abort.Unanswered(count: 1000, lookBack: 2))
        #expect(abort?.measured == 200.001)
    }

    @Test func nothingIsJudgedBeforeAbortAfter() {
        var run = Run()
        for _ in 0..<3 { run.second(latency: 500_000) }
        #expect(Self.firstAbort(Self.watch([Self.p99Over200ms], after: .seconds(4)), run) == nil)
        #expect(Self.firstAbort(Self.watch([Self.p99Over200ms]), run)?.after == .seconds(1))
    }

    /// A share counts what was rejected in the window, of what was sent in it: rejections
    /// before the window do not count.
    @Test func aShareOfErrorsCountsTheWindowOnly() {
        let condition = AbortCondition(
            text: "rejected.Unregistered > 1%",
            measure: .rejected(.apns(.unregistered)),
            comparison: .greater,
            limit: 0.01,
            isShare: true,
            windowSeconds: 2
        )
        var run = Run()
        run.second(rejected: 500)
        for _ in 0..<4 { run.second(rejected: 5) }
        var replay = Run()
        let watch = Self.watch([condition])
        var aborts: [Abort] = []
        for (index, second) in run.seconds.enumerated() {
            replay.seconds.append(second)
            replay.tally.second = index + 1
            replay.tally.started = 1000 * (index + 1)
            replay.tally.finished = 1000 * (index + 1)
            replay.tally.rejected[APNsReason.unregistered.index] = 500 + 5 * index
            if let abort = watch.check(replay.tally, intervals: replay.intervals(from:)) { aborts.append(abort) }
        }
        // Judged at 1 s (500 of 1,000: 50%) and 2 s (505 of 2,000); from 3 s on the window
        // holds 10 of 2,000, 0.5%.
        #expect(aborts.map(\.after) == [.seconds(1), .seconds(2)])
        #expect(aborts.first?.measured == 50)
        #expect(aborts.first?.unit == "%")
    }

    @Test func aThroughputBelowItsFloorAborts() {
        let condition = AbortCondition(
            text: "throughput < 900/s",
            measure: .throughput,
            comparison: .less,
            limit: 900,
            windowSeconds: 2
        )
        var run = Run()
        for _ in 0..<3 { run.second() }
        for _ in 0..<3 { run.second(answered: 700) }
        let abort = Self.firstAbort(Self.watch([condition]), run)
        // At 1 s the window is the 1 s the run has lasted (1,000/s, not 500/s); at 4 s it is
        // seconds 2 and 3: 1,700 in 2 s.
        #expect(abort?.after == .seconds(4), "\(String(describing: abort))")
        #expect(abort?.measured == 850)
    }

    /// `p99 < 1ms` looks down: the unanswered, of unknown latency, are not counted for it.
    @Test func aConditionLookingDownLeavesTheUnansweredOut() {
        let condition = AbortCondition(
            text: "p99 < 1ms",
            measure: .latency(percentile: 99),
            comparison: .less,
            limit: 1,
            windowSeconds: 10
        )
        #expect(condition.unansweredLookBack == nil)
        #expect(Self.p99Over200ms.unansweredLookBack == 2)
        var run = Run()
        for _ in 0..<3 { run.second(latency: 500) }
        #expect(Self.firstAbort(Self.watch([condition]), run)?.after == .seconds(1))
    }

    static func histogram(_ values: [(UInt64, UInt64)]) -> Histogram<UInt64> {
        var histogram = LoadStatistics.makeHistogram()
        for (value, count) in values { _ = histogram.record(value, count: count) }
        return histogram
    }
}
