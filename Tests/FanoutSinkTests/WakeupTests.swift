import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import Testing

@testable import FanoutSink

/// The job watching a sink waits on a `Wakeup`: each way a wait ends, and the two ways it must
/// not (a timer left from an earlier wait, a signal taken twice). Deadlines are on a real loop;
/// the tests assert which wait returned, never how fast. Nothing here sleeps: a wait's return
/// completes a promise, and each bound is a timer on the loop.
@Suite struct WakeupTests {
    /// A wait running in a task of its own: `outcome` is true once it returns, false if the
    /// bound `returns(within:)` set passed first.
    final class Waiting: Sendable {
        let loop: any EventLoop
        let task: Task<Void, Never>
        private let outcome: EventLoopPromise<Bool>
        private let settled = NIOLockedValueBox<Bool?>(nil)

        init(_ wakeup: Wakeup, until deadline: NIODeadline, on loop: any EventLoop) {
            self.loop = loop
            let outcome = loop.makePromise(of: Bool.self)
            self.outcome = outcome
            let settled = settled
            task = Task {
                await wakeup.wait(until: deadline, on: loop)
                Self.settle(true, settled, outcome)
            }
        }

        private static func settle(
            _ value: Bool,
            _ settled: NIOLockedValueBox<Bool?>,
            _ outcome: EventLoopPromise<Bool>
        ) {
            let first = settled.withLockedValue { settled in
                guard settled == nil else { return false }
                settled = value
                return true
            }
            if first { outcome.succeed(value) }
        }

        var hasReturned: Bool { settled.withLockedValue { $0 } == true }

        /// Whether the wait returns within `bound`. The bound is long: in a full suite on a
        /// loaded machine the waiting task can wait many seconds for a thread of the cooperative
        /// pool, which blocking tests hold (20.5 s was seen beside five suites and two busy
        /// loops). A wait that works returns in milliseconds.
        func returns(within bound: TimeAmount = .seconds(60)) async throws -> Bool {
            let (settled, outcome) = (settled, outcome)
            loop.scheduleTask(in: bound) { Self.settle(false, settled, outcome) }
            return try await outcome.futureResult.get()
        }

        /// Whether the wait is still waiting `span` from now (the loop's timer says).
        func stillWaits(after span: TimeAmount) async throws -> Bool {
            try await loop.scheduleTask(in: span) { !self.hasReturned }.futureResult.get()
        }
    }

    static func withLoop(_ body: (any EventLoop) async throws -> Void) async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        do {
            try await body(group.next())
        } catch {
            try await group.shutdownGracefully()
            throw error
        }
        try await group.shutdownGracefully()
    }

    @Test func aSignalEndsAWaitLongBeforeItsDeadline() async throws {
        try await Self.withLoop { loop throws in
            let wakeup = Wakeup()
            let waiting = Waiting(wakeup, until: .now() + .hours(1), on: loop)
            wakeup.signal()
            #expect(try await waiting.returns())
        }
    }

    @Test func aSignalWithNobodyWaitingEndsTheNextWaitOnlyOnce() async throws {
        try await Self.withLoop { loop throws in
            let wakeup = Wakeup()
            wakeup.signal()
            wakeup.signal()
            let first = Waiting(wakeup, until: .now() + .hours(1), on: loop)
            #expect(try await first.returns())
            // Two signals before it are one: the next wait waits.
            let second = Waiting(wakeup, until: .now() + .hours(1), on: loop)
            #expect(try await second.stillWaits(after: .milliseconds(200)))
            wakeup.signal()
            #expect(try await second.returns())
        }
    }

    @Test func theDeadlineEndsAWaitNobodySignals() async throws {
        try await Self.withLoop { loop throws in
            let waiting = Waiting(Wakeup(), until: .now() + .milliseconds(50), on: loop)
            #expect(try await waiting.returns())
        }
    }

    /// A wait a signal ended leaves no timer behind that could end the next wait early.
    @Test func anEarlierWaitsTimerDoesNotEndALaterWait() async throws {
        try await Self.withLoop { loop throws in
            let wakeup = Wakeup()
            let first = Waiting(wakeup, until: .now() + .milliseconds(100), on: loop)
            wakeup.signal()
            #expect(try await first.returns())
            let second = Waiting(wakeup, until: .now() + .hours(1), on: loop)
            #expect(try await second.stillWaits(after: .milliseconds(400)))
            second.task.cancel()
            #expect(try await second.returns())
        }
    }

    @Test func cancellingTheWaitingTaskEndsTheWait() async throws {
        try await Self.withLoop { loop throws in
            let waiting = Waiting(Wakeup(), until: .distantFuture, on: loop)
            waiting.task.cancel()
            #expect(try await waiting.returns())
        }
    }
}
