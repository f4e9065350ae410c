import FanoutTestSupport
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import Testing

@testable import FanoutMeasure

/// The loop-lag probe against known ground truth: a loop blocked for 200 ms runs the probe's
/// task at least that late, less its interval.
struct EventLoopLagProbeTests {
    @Test func aBlockedLoopShowsAsLag() throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        defer { try? group.syncShutdownGracefully() }
        let loop = group.next()
        let samples = NIOLockedValueBox<[(late: UInt64, now: UInt64)]>([])
        let probe = try loop.submit {
            let probe = EventLoopLagProbe(on: loop, every: .milliseconds(5)) { late, now in
                samples.withLockedValue { $0.append((late, now)) }
            }
            probe.start()
            return NIOLoopBound(probe, eventLoop: loop)
        }.wait()
        // Idle first: 20 samples, small. Then the loop is blocked for 200 ms (the block is the
        // behaviour under test), and 10 more samples come after it.
        let idle = poll(timeout: .seconds(10), every: .milliseconds(5)) { samples.withLockedValue { $0.count } >= 20 }
        try #require(idle, "\(samples.withLockedValue { $0.count }) samples")
        try loop.submit { blockThread(for: .milliseconds(200)) }.wait()
        let after = samples.withLockedValue { $0.count }
        let resumed = poll(timeout: .seconds(10), every: .milliseconds(5)) {
            samples.withLockedValue { $0.count } >= after + 10
        }
        try #require(resumed, "\(samples.withLockedValue { $0.count }) samples")
        try loop.submit { probe.value.stop() }.wait()
        let taken = samples.withLockedValue { $0 }
        let count = taken.count
        // Silence after stop is the behaviour under test: a sample in the next 50 ms ends the wait.
        let sampledAfterStop = poll(timeout: .milliseconds(50), every: .milliseconds(5)) {
            samples.withLockedValue { $0.count } != count
        }
        #expect(!sampledAfterStop, "a sample after stop")
        let worst = taken.map(\.late).max() ?? 0
        #expect(worst >= 190_000_000, "worst lag \(worst) ns while the loop was blocked 200 ms")
        // The probe does not count the block twice: each sample's lag runs from its own deadline,
        // set after the sample before it ran, so no two samples' spans of lag overlap. (Not "one
        // large sample": a loaded machine can hold the loop's thread back besides the block.)
        for (before, sample) in zip(taken, taken.dropFirst()) where sample.now - sample.late < before.now {
            Issue.record(
                "a lag from \(sample.now - sample.late) ns counted again: the sample before ran at \(before.now)"
            )
        }
    }

    /// On a grid, every deadline is a multiple of the interval on the uptime clock (where the
    /// sender's pacing windows fall).
    @Test func onAGridEveryDeadlineIsAMultipleOfTheInterval() throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        defer { try? group.syncShutdownGracefully() }
        let loop = group.next()
        let step: UInt64 = 12_800_000
        let deadlines = NIOLockedValueBox<[UInt64]>([])
        let probe = try loop.submit {
            let probe = EventLoopLagProbe(on: loop, every: .nanoseconds(Int64(step)), onGrid: true) { late, now in
                deadlines.withLockedValue { $0.append(now - late) }
            }
            probe.start()
            return NIOLoopBound(probe, eventLoop: loop)
        }.wait()
        poll(timeout: .seconds(10)) { deadlines.withLockedValue { $0.count } >= 10 }
        try loop.submit { probe.value.stop() }.wait()
        let taken = deadlines.withLockedValue { $0 }
        #expect(taken.count >= 10, "\(taken.count) samples in 10 s")
        #expect(taken.allSatisfy { $0 % step == 0 }, "\(taken.map { $0 % step })")
        // One interval apart (more only where the loop ran a whole interval late).
        #expect(zip(taken, taken.dropFirst()).allSatisfy { $1 > $0 }, "\(taken)")
    }
}
