import FanoutMeasure
import Testing

@testable import FanoutClient

/// `LoopRecorder` alone, driven with made-up times (nanoseconds from the run's start): what it
/// records in each second, what the warm-up keeps out, and when it hands a second over to the
/// `IntervalCollector`.
@Suite struct LoopRecorderTests {
    static let second: UInt64 = 1_000_000_000
    static let millisecond: UInt64 = 1_000_000

    @Test func eachSecondIsHandedOverOnceTheLoopMovesPastIt() {
        let collector = IntervalCollector(start: 0, warmUp: Self.second, loops: 1)
        let recorder = LoopRecorder(collector: collector)
        // In the warm-up: completed, but its latency kept out.
        recorder.complete(startedAt: 500 * Self.millisecond, now: 600 * Self.millisecond)
        collector.drain()
        #expect(collector.intervals.isEmpty, "second 0 is still in progress")
        // Second 1: a 50 ms latency and a 3 ms lag; second 0 goes over.
        recorder.complete(startedAt: 1200 * Self.millisecond, now: 1250 * Self.millisecond)
        recorder.lagged(3 * Self.millisecond, now: 1300 * Self.millisecond)
        // Handed over, not merged: reading merges nothing; the run's drain once a second does.
        #expect(collector.intervals.isEmpty)
        collector.drain()
        #expect(collector.intervals.map(\.second) == [0])
        // Second 3: seconds 1 and 2 (nothing in it) go over.
        recorder.complete(startedAt: 3400 * Self.millisecond, now: 3420 * Self.millisecond)
        collector.drain()
        #expect(collector.intervals.map(\.second) == [0, 1, 2])
        recorder.finish()
        collector.closeAll()
        let intervals = collector.intervals
        #expect(intervals.map(\.second) == [0, 1, 2, 3])
        #expect(intervals.map(\.completed) == [1, 1, 0, 1])
        #expect(intervals[0].max == 0 && intervals[0].p99 == 0, "the warm-up's latency is kept out")
        #expect(intervals[1].max >= 49_500 && intervals[1].max <= 50_500, "\(intervals[1].max) µs")
        #expect(intervals[1].maxLag >= 2_970 && intervals[1].maxLag <= 3_030, "\(intervals[1].maxLag) µs")
        #expect(intervals[3].max >= 19_800 && intervals[3].max <= 20_200, "\(intervals[3].max) µs")
        // The run's latency: the two answers after the warm-up.
        #expect(collector.latency.totalCount == 2)
        #expect(collector.lag.totalCount == 1)
    }

    /// The loops' delays in the run's totals leave the warm-up's seconds out, as its latency
    /// does: a 145 ms loop lag in the warm-up stood against a p99 measured after it (newcomer
    /// pass 4, "100% of the measured p99"). Each second keeps its own.
    @Test func theWarmUpsLoopDelaysStayOutOfTheTotals() {
        let collector = IntervalCollector(start: 0, warmUp: 2 * Self.second, loops: 1)
        let recorder = LoopRecorder(collector: collector)
        recorder.loopLagged(145 * Self.millisecond, now: 500 * Self.millisecond)
        recorder.loopLagged(2 * Self.millisecond, now: 2500 * Self.millisecond)
        recorder.complete(startedAt: 2400 * Self.millisecond, now: 2401 * Self.millisecond)
        recorder.finish()
        collector.closeAll()
        let lag = LoopDelays.merged(collector.loopDelays).loopLag
        #expect(lag.totalCount == 1)
        #expect(lag.max >= 1_900 && lag.max <= 2_100, "\(lag.max) µs")
        #expect(collector.intervals.first { $0.second == 0 }?.maxLoopLag ?? 0 >= 140_000, "second 0 keeps its own")
    }

    /// The warm-up counts from where sending starts, not from the run's start: connecting took
    /// 300 ms here, and a 500 ms warm-up keeps out what started before 800 ms, not 500 ms. The
    /// open model's origin is the schedule's first claim; the closed model's, the first send.
    @Test func theWarmUpCountsFromWhereSendingStarts() throws {
        let ms = Self.millisecond
        for open in [true, false] {
            let tickets = ArrivalTickets(schedule: try ArrivalSchedule(rate: 1000, duration: .seconds(5)))
            let statistics = LoadStatistics()
            let origin: WarmUpOrigin = open ? .schedule(tickets) : .firstSend(statistics.firstSendClock)
            let collector = IntervalCollector(start: 0, warmUp: 500 * ms, from: origin, loops: 1)
            let recorder = LoopRecorder(collector: collector)
            #expect(collector.warmUpEnd == nil, "nothing sent yet")
            _ = tickets.claim(now: 300 * ms)
            statistics.noteFirstSend(300 * ms)
            #expect(collector.warmUpEnd == 800 * ms)
            recorder.complete(startedAt: 600 * ms, now: 650 * ms)
            recorder.complete(startedAt: 799 * ms, now: 850 * ms)
            recorder.complete(startedAt: 800 * ms, now: 820 * ms)
            recorder.complete(startedAt: 900 * ms, now: 930 * ms)
            recorder.finish()
            collector.closeAll()
            #expect(collector.latency.totalCount == 2, "\(origin)")
            #expect(collector.intervals.map(\.completed).reduce(0, +) == 4)
        }
        // Without a warm-up nothing waits for the origin.
        let none = IntervalCollector(start: 0, warmUp: 0, from: .firstSend(FirstSendClock()), loops: 1)
        #expect(none.warmUpEnd == 0)
    }

    /// Each completion is filed in the 100 ms bin its offset from the run's start falls in, on
    /// either side of each boundary; none before the start or from 10 s on. A loop hands its bins
    /// over when it finishes, and the collector adds the loops' up.
    @Test func completionsAreFiledInTheirHundredMilliseconds() {
        let start = 5 * Self.second
        let collector = IntervalCollector(start: start, warmUp: 0, loops: 2)
        let first = LoopRecorder(collector: collector, loop: 0)
        let second = LoopRecorder(collector: collector, loop: 1)
        first.complete(startedAt: start - 2, now: start - 1)  // before the start: not filed
        for offset: UInt64 in [0, 99_999_999, 100_000_000, 9_999_999_999, 10_000_000_000, 12 * Self.second] {
            first.complete(startedAt: start, now: start + offset)
        }
        second.complete(startedAt: start, now: start + 199_999_999)
        second.complete(startedAt: start, now: start + 200_000_000)
        #expect(collector.fineCompleted.allSatisfy { $0 == 0 }, "handed over only when the loops finish")
        first.finish()
        second.finish()
        collector.closeAll()
        var expected = [Int](repeating: 0, count: FineBins.count)
        expected[0] = 2
        expected[1] = 2
        expected[2] = 1
        expected[99] = 1
        #expect(collector.fineCompleted == expected)
        #expect(collector.intervals.map(\.completed).reduce(0, +) == 9, "every completion counts in its second")
    }

    /// A second closes once every loop has handed it over, its counts summed.
    @Test func aSecondClosesWhenEveryLoopHasHandedItOver() {
        let collector = IntervalCollector(start: 0, warmUp: 0, loops: 2)
        let first = LoopRecorder(collector: collector, loop: 0)
        let second = LoopRecorder(collector: collector, loop: 1)
        first.complete(startedAt: 0, now: 100 * Self.millisecond)
        second.complete(startedAt: 0, now: 200 * Self.millisecond)
        second.complete(startedAt: 0, now: 300 * Self.millisecond)
        first.roll(to: Self.second + 1)
        collector.drain()
        #expect(collector.intervals.isEmpty, "loop 1 has not handed second 0 over")
        second.roll(to: Self.second + 1)
        collector.drain()
        #expect(collector.intervals.map(\.second) == [0])
        #expect(collector.intervals.first?.completed == 3)
    }

    /// A read delay goes into the second the answer was read in: read 2.5 s into the run after
    /// a completion in second 0, it is second 2's, not second 0's (the recorder rolls first).
    @Test func aReadDelayIsFiledInTheSecondOfItsRead() {
        let collector = IntervalCollector(start: 0, warmUp: 0, loops: 1)
        let recorder = LoopRecorder(collector: collector)
        recorder.complete(startedAt: 0, now: 100 * Self.millisecond)
        recorder.answerRead(startedAt: 2497 * Self.millisecond, now: 2500 * Self.millisecond)
        recorder.finish()
        collector.closeAll()
        let intervals = collector.intervals
        #expect(intervals.map(\.second) == [0, 1, 2])
        #expect(intervals[0].readDelayP99 == 0 && intervals[1].readDelayP99 == 0)
        #expect(
            intervals[2].readDelayP99 >= 2_970 && intervals[2].readDelayP99 <= 3_030,
            "\(intervals[2].readDelayP99) µs"
        )
    }

    /// Stream waits count outside the warm-up only; the sender's own delays go to its loop.
    @Test func streamWaitsAndOwnDelaysGoWhereTheyBelong() {
        let collector = IntervalCollector(start: 0, warmUp: Self.second, loops: 2)
        let recorder = LoopRecorder(collector: collector, loop: 1)
        recorder.waitedForStream(5 * Self.millisecond, streams: 1, dueAt: 500 * Self.millisecond)
        recorder.waitedForStream(7 * Self.millisecond, streams: 4, dueAt: 1500 * Self.millisecond)
        recorder.waitedForStream(2 * Self.millisecond, streams: 2, dueAt: 1600 * Self.millisecond)
        recorder.timedAnswer(
            returnPath: 1 * Self.millisecond,
            firstTry: (own: 4 * Self.millisecond, senderShare: 0),
            now: 1600 * Self.millisecond
        )
        recorder.timedAnswer(returnPath: 2 * Self.millisecond, firstTry: nil, now: 1600 * Self.millisecond)
        recorder.loopLagged(6 * Self.millisecond, now: 1700 * Self.millisecond)
        recorder.finish()
        collector.closeAll()
        let waits = collector.streamWaits
        #expect(waits.count == 2)
        #expect(waits.longest == 7 * Self.millisecond)
        #expect(waits.fewestStreams == 2)
        let delays = collector.loopDelays
        #expect(delays[0].returnPath.totalCount == 0 && delays[0].loopLag.totalCount == 0)
        #expect(delays[1].returnPath.totalCount == 2)
        #expect(delays[1].own.totalCount == 1, "a retry's latency holds earlier tries: not the harness's share")
        #expect(delays[1].loopLag.totalCount == 1)
    }

    /// A loop started on its CPU clock hands each second over with the CPU its thread used since
    /// the last hand-over; one never started has none.
    @Test func aSecondCarriesItsLoopsCPUOnceStarted() {
        let collector = IntervalCollector(start: 0, warmUp: 0, loops: 1)
        let recorder = LoopRecorder(collector: collector)
        recorder.startCPU()
        let before = ThreadCPUClock.now()
        var sum: UInt64 = 0
        for value in 0..<2_000_000 { sum &+= UInt64(value) &* 2_654_435_761 }
        let used = ThreadCPUClock.now() - before
        recorder.finish()
        collector.closeAll()
        let cpu = collector.intervals.first?.cpuNanoseconds
        #expect(sum != 0)
        #expect(cpu.map { $0 >= used } == true, "\(String(describing: cpu)) ns against \(used) ns used")

        let unstarted = IntervalCollector(start: 0, warmUp: 0, loops: 1)
        let other = LoopRecorder(collector: unstarted)
        other.finish()
        unstarted.closeAll()
        #expect(unstarted.intervals.map(\.cpuNanoseconds) == [nil])
    }
}
