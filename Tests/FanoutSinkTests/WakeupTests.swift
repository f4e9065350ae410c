import FanoutTestSupport
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import Testing

@testable import FanoutSink

/// The job watching a sink waits on a `Wakeup`: each way a wait ends, and the two ways it must
/// not (a timer left from an earlier wait, a signal taken twice). Deadlines are on a real loop;
/// the tests assert which wait returned, never how fast.
@Suite struct WakeupTests {
    /// A wait running in a task of its own, and whether it has returned.
    final class Waiting: Sendable {
        let returned = NIOLockedValueBox(false)
        let task: Task<Void, Never>

        init(_ wakeup: Wakeup, until deadline: NIODeadline, on loop: any EventLoop) {
            let returned = returned
            task = Task {
                await wakeup.wait(until: deadline, on: loop)
                returned.withLockedValue { $0 = true }
            }
        }

        var hasReturned: Bool { returned.withLockedValue { $0 } }
        /// The bound is long: in a full suite on a loaded machine the waiting task can wait
        /// seconds for a thread of the cooperative pool, which blocking tests hold (10 s was
        /// missed once under two busy loops). A wait that works returns in milliseconds.
        func returns(within bound: Duration = .seconds(60)) async throws -> Bool {
            try await pollSuspending(timeout: bound) { hasReturned }
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
            await wakeup.wait(until: .now() + .hours(1), on: loop)
            // Two signals before it are one: the next wait waits.
            let second = Waiting(wakeup, until: .now() + .hours(1), on: loop)
            #expect(try await holdSuspending(for: .milliseconds(200)) { !second.hasReturned })
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
            #expect(try await holdSuspending(for: .milliseconds(400)) { !second.hasReturned })
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
