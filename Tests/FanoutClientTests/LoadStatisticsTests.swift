import FanoutAPNs
import Testing

@testable import FanoutClient

/// `LoadStatistics`' outcomes by second: the run marks the counts once a second, and each
/// second's interval gets what was counted since the mark before; what came after the last mark
/// goes to the last second.
@Suite struct LoadStatisticsTests {
    static let second: UInt64 = 1_000_000_000

    /// A run of three seconds on one loop, with `counts` handed over in each.
    static func run(
        _ counts: [(rejected: [APNsReason], failed: [FailureCause])],
        markAfter marked: Int
    ) -> [LoadInterval] {
        let statistics = LoadStatistics()
        let collector = IntervalCollector(start: 0, warmUp: 0, loops: 1)
        statistics.record(into: collector)
        let recorder = LoopRecorder(collector: collector)
        for (index, second) in counts.enumerated() {
            var local = LoadCounts()
            for reason in second.rejected { local.reject(.apns(reason)) }
            for cause in second.failed { local.fail(cause) }
            recorder.complete(startedAt: UInt64(index) * Self.second, now: UInt64(index) * Self.second + 1)
            statistics.add(local)
            // The run marks second `index` once it is over; the last is left to the totals.
            if index < marked { statistics.markSecond(index, connections: 1) }
        }
        recorder.finish()
        collector.closeAll()
        return statistics.snapshot.intervals
    }

    @Test func eachSecondHasWhatWasCountedSinceTheMarkBefore() {
        let intervals = Self.run(
            [
                ([.unregistered, .unregistered], []),
                ([.badDeviceToken], [.timeout, .timeout, .timeout]),
                ([.unregistered], [.connectionLost]),
            ],
            markAfter: 2
        )
        #expect(intervals.map(\.second) == [0, 1, 2])
        #expect(intervals[0].rejected == [.apns(.unregistered): 2])
        #expect(intervals[0].failed == [:])
        #expect(intervals[1].rejected == [.apns(.badDeviceToken): 1])
        #expect(intervals[1].failed == [.timeout: 3])
        // Never marked: the run's totals less the last mark.
        #expect(intervals[2].rejected == [.apns(.unregistered): 1])
        #expect(intervals[2].failed == [.connectionLost: 1])
    }

    /// A run that ended before its first mark has every count in its last second.
    @Test func withoutAMarkTheLastSecondHasEverything() {
        let intervals = Self.run([([.unregistered], []), ([.unregistered], [.timeout])], markAfter: 0)
        #expect(intervals.map(\.rejected) == [[:], [.apns(.unregistered): 2]])
        #expect(intervals.map(\.failed) == [[:], [.timeout: 1]])
    }

    /// A mark keeps the connections the run had and the notifications sent without a final
    /// outcome (first sends: requests less retries), as the connections handed them over.
    @Test func aMarkKeepsWhatWasInFlight() {
        let statistics = LoadStatistics()
        let collector = IntervalCollector(start: 0, warmUp: 0, loops: 1)
        statistics.record(into: collector)
        let recorder = LoopRecorder(collector: collector)
        var local = LoadCounts()
        local.requests = 120
        local.retries = 20
        for _ in 0..<30 { local.accept(digestHash: 1) }
        recorder.complete(startedAt: 0, now: 1)
        statistics.add(local)
        statistics.markSecond(0, connections: 4)
        recorder.complete(startedAt: Self.second, now: Self.second + 1)
        recorder.finish()
        collector.closeAll()
        let intervals = statistics.snapshot.intervals
        #expect(intervals.map(\.inFlight) == [70, nil])
        #expect(intervals.map(\.connections) == [4, nil])
    }
}
