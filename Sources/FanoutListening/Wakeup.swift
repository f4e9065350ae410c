import NIOConcurrencyHelpers
import NIOCore

/// One waiter's wake-up, without polling: `signal()`, from any thread, ends the waiter's
/// `wait(until:on:)` at once (or the next one, when none waits now); its deadline ends it
/// otherwise, and so does the waiting task's cancellation. A sink's counts signal it at what a
/// job watching them for its ends cannot wait for by the clock — the first request, the count
/// `--expect` asked for, the expected tokens complete (`SinkStatistics.changes`) — so the job
/// wakes when they come, not every few milliseconds.
///
/// ```
///   idle ──signal──► signalled ──wait──► (returns at once) ──► idle
///   idle ──wait────► waiting(n, timer) ──signal / timer of wait n / cancel──► idle (returns,
///                                                                             timer cancelled)
/// ```
///
/// Each wait has a number, so that a timer which fired as a signal ended its wait cannot end a
/// later one; a wait a signal ends cancels its timer, so timers do not pile up on the loop.
public final class Wakeup: Sendable {
    /// Why a wait returned.
    public enum Ending: Sendable, Hashable {
        /// `signal()`, while it waited or before.
        case signalled
        /// Its deadline passed.
        case deadline
        /// The waiting task was cancelled.
        case cancelled
    }

    private struct Waiter {
        var continuation: CheckedContinuation<Ending, Never>
        var number: UInt64
        var timer: Scheduled<Void>?
    }

    private enum State {
        case idle
        case signalled
        case waiting(Waiter)
    }

    private let state = NIOLockedValueBox<(State, waits: UInt64)>((.idle, 0))
    /// Told each wait's number once it is stored and still waits, its timer set: a test's
    /// hook, to signal or cancel a wait known to be waiting. Not told of a wait that returned at
    /// once (a signal before it) or that its timer or a cancellation ended before the hook.
    private let waiting: (@Sendable (UInt64) -> Void)?

    public init() { waiting = nil }

    /// A wake-up that tells `waiting` each wait's number (from 1) once the wait is stored.
    package init(waiting: @escaping @Sendable (UInt64) -> Void) { self.waiting = waiting }

    /// Wakes the waiter, or the next wait if none waits now.
    public func signal() {
        let waiter = state.withLockedValue { state -> Waiter? in
            switch state.0 {
            case .waiting(let waiter):
                state.0 = .idle
                return waiter
            case .idle, .signalled:
                state.0 = .signalled
                return nil
            }
        }
        resume(waiter, .signalled)
    }

    /// Returns at the first of: a signal (one since the last wait returned counts), `deadline`
    /// (timed on `loop`), the task's cancellation; and says which. One waiter at a time.
    @discardableResult
    public func wait(until deadline: NIODeadline, on loop: any EventLoop) async -> Ending {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Ending, Never>) in
                let number = state.withLockedValue { state -> UInt64? in
                    if case .signalled = state.0 {
                        state.0 = .idle
                        return nil
                    }
                    state.waits += 1
                    state.0 = .waiting(Waiter(continuation: continuation, number: state.waits))
                    return state.waits
                }
                guard let number else { return continuation.resume(returning: .signalled) }
                // Cancelled before the wait was stored: `onCancel` found nothing to end.
                if Task.isCancelled { return end(number, .cancelled) }
                guard deadline != .distantFuture else {
                    waiting?(number)
                    return
                }
                let timer = loop.scheduleTask(deadline: deadline) { self.end(number, .deadline) }
                let ended = state.withLockedValue { state -> Bool in
                    guard case .waiting(var waiter) = state.0, waiter.number == number else { return true }
                    waiter.timer = timer
                    state.0 = .waiting(waiter)
                    return false
                }
                if ended { return timer.cancel() }
                waiting?(number)
            }
        } onCancel: {
            end(nil, .cancelled)
        }
    }

    /// Ends wait `number` (`nil`: whichever waits), if it still waits.
    private func end(_ number: UInt64?, _ ending: Ending) {
        let waiter = state.withLockedValue { state -> Waiter? in
            guard case .waiting(let waiter) = state.0, number == nil || number == waiter.number else { return nil }
            state.0 = .idle
            return waiter
        }
        resume(waiter, ending)
    }

    private func resume(_ waiter: Waiter?, _ ending: Ending) {
        guard let waiter else { return }
        waiter.timer?.cancel()
        waiter.continuation.resume(returning: ending)
    }
}
