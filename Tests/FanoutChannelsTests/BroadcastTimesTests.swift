import FanoutScenarioTerms
import Foundation
import Testing

@testable import FanoutChannels

/// A broadcast's delivery times worked out from the fleet's delay, not drawn device by device.
struct BroadcastTimesTests {
    @Test func atOnceWithoutADelay() {
        let times = BroadcastTimes(delay: nil)
        #expect(times.quantile(0.99) == 0)
        #expect(times.last(of: 10_000) == 0)
    }

    @Test func aFixedDelayIsEveryQuantile() {
        let times = BroadcastTimes(delay: .fixed(.milliseconds(40)))
        #expect(times.quantile(0.5) == 40_000_000)
        #expect(times.last(of: 1) == 40_000_000)
        #expect(times.last(of: 0) == 0)
    }

    @Test func uniformQuantilesAreLinear() {
        let times = BroadcastTimes(delay: .uniform(.milliseconds(10), .milliseconds(20)))
        #expect(times.quantile(0) == 10_000_000)
        #expect(times.quantile(0.5) == 15_000_000)
        #expect(times.quantile(1) == 20_000_000)
        // The last of n: the median of the largest, 0.5^(1/n) of the way.
        #expect(times.last(of: 1) == 15_000_000)
        let last = Double(times.last(of: 1000))
        #expect(abs(last - (10e6 + 10e6 * pow(0.5, 1.0 / 1000))) < 2)
    }

    @Test func theProbitMatchesKnownValues() {
        #expect(abs(BroadcastTimes.probit(0.5)) < 1e-9)
        #expect(abs(BroadcastTimes.probit(0.975) - 1.959963985) < 1e-6)
        #expect(abs(BroadcastTimes.probit(0.01) + 2.326347874) < 1e-6)
        #expect(abs(BroadcastTimes.probit(0.999_99) - 4.264890794) < 1e-5)
    }

    /// The worked-out quantiles agree with the sink's own draws of the same distribution.
    @Test func logNormalQuantilesAgreeWithDraws() {
        let delay = LatencyDistribution.logNormal(median: .milliseconds(100), sigma: 0.5)
        let times = BroadcastTimes(delay: delay)
        let draws = delay.draws(200_000, seed: 3).sorted()
        for q in [0.5, 0.9, 0.99] {
            let drawn = draws[Int(q * Double(draws.count))] * 1e9
            let worked = Double(times.quantile(q))
            #expect(abs(worked - drawn) / drawn < 0.02, "q \(q): worked out \(worked), drawn \(drawn)")
        }
        // The median of the largest of 1,000 draws, over 200 samples of 1,000.
        let maxima = (0..<200).map { delay.draws(1000, seed: UInt64(100 + $0)).max()! * 1e9 }.sorted()
        let worked = Double(times.last(of: 1000))
        #expect(abs(worked - maxima[100]) / maxima[100] < 0.1, "worked out \(worked), drawn \(maxima[100])")
    }

    @Test func anEmpiricalDelayIsReadFromItsSortedValues() {
        let times = BroadcastTimes(delay: .empirical([.milliseconds(3), .milliseconds(1), .milliseconds(2)]))
        #expect(times.quantile(0) == 1_000_000)
        #expect(times.quantile(0.5) == 2_000_000)
        #expect(times.quantile(1) == 3_000_000)
    }

    /// The store lists its first broadcasts and counts the rest: bounded whatever the run.
    @Test func theStoreListsItsFirstBroadcastsAndCountsTheRest() throws {
        let store = ChannelStore(subscribers: .fixed(9), seed: 1, listed: 3)
        let id = try #require(ChannelStoreTests.create(store, "com.example.app"))
        for step in 0..<5 {
            #expect(
                ChannelStoreTests.bytes("com.example.app") { store.broadcast(id, bundle: $0, now: UInt64(step)) } != nil
            )
        }
        let records = store.records()
        #expect(records.broadcasts.map(\.acceptedAt) == [0, 1, 2])
        #expect(records.broadcasts.allSatisfy { $0.reach.delivered == 9 && $0.channel == id.text })
        #expect(records.leftOut == 2)
        #expect(records.counts.broadcasts == 5)
        #expect(records.mostDelivered == 9)
        // The memory the docs promise: at most `entryBytes` an entry.
        #expect(MemoryLayout<BroadcastLog.Entry>.stride <= BroadcastLog.entryBytes)
    }
}
