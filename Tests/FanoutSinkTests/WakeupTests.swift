import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import Testing

@testable import FanoutSink

/// The job watching a sink waits on a `Wakeup`: each way a wait ends, and the two ways it must
/// not (a timer left from an earlier wait, a signal taken twice). Each test asserts why a wait
/// returned (`Wakeup.Ending`), never how fast: in a full suite on a loaded machine a waiting
/// task can wait minutes for a thread of the cooperative pool (blocking tests hold it), and a
/// wall-clock bound on its return failed there. Every wait is bounded by its own deadline:
/// one that a signal or a cancellation should end has 10 minutes, and ends by it, failing the
/// test, if they do not. Nothing here sleeps.
@Suite struct WakeupTests {
    /// The bound of a wait that something else should end.
    static let bound: TimeAmount = .minutes(10)

    /// A wait in a task of its own.
    static func waiting(
        _ wakeup: Wakeup,
        until deadline: NIODeadline,
        on loop: any EventLoop
    ) -> Task<
        Wakeup.Ending, Never
    > {
        Task { await wakeup.wait(until: deadline, on: loop) }
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

    /// Signalled while it waits (the hook says it does) or before it began: either way the
    /// signal ends it, long before its deadline.
    @Test(arguments: [true, false])
    func aSignalEndsAWaitLongBeforeItsDeadline(whileWaiting: Bool) async throws {
        try await Self.withLoop { loop throws in
            let box = NIOLockedValueBox<Wakeup?>(nil)
            let wakeup = Wakeup { _ in if whileWaiting { box.withLockedValue { $0 }?.signal() } }
            box.withLockedValue { $0 = wakeup }
            if !whileWaiting { wakeup.signal() }
            #expect(await Self.waiting(wakeup, until: .now() + Self.bound, on: loop).value == .signalled)
        }
    }

    /// Two signals with nobody waiting are one: the first wait takes it, the next is ended by
    /// its deadline.
    @Test func aSignalWithNobodyWaitingEndsTheNextWaitOnlyOnce() async throws {
        try await Self.withLoop { loop throws in
            let wakeup = Wakeup()
            wakeup.signal()
            wakeup.signal()
            #expect(await Self.waiting(wakeup, until: .now() + Self.bound, on: loop).value == .signalled)
            #expect(await Self.waiting(wakeup, until: .now() + .milliseconds(200), on: loop).value == .deadline)
        }
    }

    @Test func theDeadlineEndsAWaitNobodySignals() async throws {
        try await Self.withLoop { loop throws in
            #expect(await Self.waiting(Wakeup(), until: .now() + .milliseconds(50), on: loop).value == .deadline)
        }
    }

    /// A wait a signal ended while it waited (its timer set) leaves nothing that could end the
    /// next wait at the first one's deadline: the next is still waiting then, and a signal
    /// 200 ms after that deadline ends it.
    @Test func anEarlierWaitsTimerDoesNotEndALaterWait() async throws {
        try await Self.withLoop { loop throws in
            let box = NIOLockedValueBox<Wakeup?>(nil)
            let wakeup = Wakeup { number in if number == 1 { box.withLockedValue { $0 }?.signal() } }
            box.withLockedValue { $0 = wakeup }
            let firstDeadline = NIODeadline.now() + .milliseconds(100)
            #expect(await Self.waiting(wakeup, until: firstDeadline, on: loop).value == .signalled)
            let second = Self.waiting(wakeup, until: .now() + Self.bound, on: loop)
            loop.scheduleTask(deadline: firstDeadline + .milliseconds(200)) { wakeup.signal() }
            #expect(await second.value == .signalled)
        }
    }

    /// Cancelled while it waits with no deadline, or before it began: either way it ends.
    @Test(arguments: [true, false])
    func cancellingTheWaitingTaskEndsTheWait(whileWaiting: Bool) async throws {
        try await Self.withLoop { loop throws in
            let task = NIOLockedValueBox<Task<Wakeup.Ending, Never>?>(nil)
            let wakeup = Wakeup { _ in if whileWaiting { task.withLockedValue { $0 }?.cancel() } }
            let waiting = task.withLockedValue { task in
                let waiting = Self.waiting(wakeup, until: .distantFuture, on: loop)
                task = waiting
                return waiting
            }
            if !whileWaiting { waiting.cancel() }
            #expect(await waiting.value == .cancelled)
        }
    }
}
