import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import Testing

@testable import FanoutListening

/// The job watching a sink waits on a `Wakeup`: each way a wait ends, and the two ways it must
/// not (a timer left from an earlier wait, a signal taken twice). Each test asserts why a wait
/// returned (`Wakeup.Ending`), never how fast: in a full suite on a loaded machine a waiting
/// task can wait minutes for a thread of the cooperative pool (blocking tests hold it), and a
/// wall-clock bound on its return failed there. Every wait is bounded by its own deadline:
/// one that a signal or a cancellation should end has 10 minutes, and ends by it, failing the
/// test, if they do not. A hook (`Wakeup(waiting:)`) says when a wait is stored, so a test
/// signals or cancels a wait known to be waiting. Nothing here sleeps.
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
    /// next wait at the first one's deadline: the next, signalled 200 ms after that deadline,
    /// returns for the signal. The first's deadline is taken as its wait begins, 1 s ahead, so
    /// its hook's signal comes first however late the task ran; the second's signal is set
    /// once it waits.
    @Test func anEarlierWaitsTimerDoesNotEndALaterWait() async throws {
        try await Self.withLoop { loop throws in
            let box = NIOLockedValueBox<Wakeup?>(nil)
            let firstDeadline = NIOLockedValueBox<NIODeadline?>(nil)
            let wakeup = Wakeup { number in
                guard let wakeup = box.withLockedValue({ $0 }) else { return }
                if number == 1 { wakeup.signal() }
                if number == 2, let first = firstDeadline.withLockedValue({ $0 }) {
                    loop.scheduleTask(deadline: first + .milliseconds(200)) { wakeup.signal() }
                }
            }
            box.withLockedValue { $0 = wakeup }
            let first = Task { () -> Wakeup.Ending in
                let deadline = NIODeadline.now() + .seconds(1)
                firstDeadline.withLockedValue { $0 = deadline }
                return await wakeup.wait(until: deadline, on: loop)
            }
            #expect(await first.value == .signalled)
            #expect(await Self.waiting(wakeup, until: .now() + Self.bound, on: loop).value == .signalled)
        }
    }

    /// Cancelled while it waits (its hook cancels it), or before it began (the task cancels
    /// itself first): either way it ends, for the cancellation.
    @Test(arguments: [true, false])
    func cancellingTheWaitingTaskEndsTheWait(whileWaiting: Bool) async throws {
        try await Self.withLoop { loop throws in
            let task = NIOLockedValueBox<Task<Wakeup.Ending, Never>?>(nil)
            let wakeup = Wakeup { _ in task.withLockedValue { $0 }?.cancel() }
            let waiting = task.withLockedValue { task in
                let waiting = Task {
                    if !whileWaiting { withUnsafeCurrentTask { $0?.cancel() } }
                    return await wakeup.wait(until: .now() + Self.bound, on: loop)
                }
                task = waiting
                return waiting
            }
            #expect(await waiting.value == .cancelled)
        }
    }
}
