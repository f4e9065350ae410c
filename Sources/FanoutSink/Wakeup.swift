import NIOConcurrencyHelpers
import NIOCore

/// One waiter's wake-up, without polling: `signal()`, from any thread, ends the waiter's
/// `wait(until:on:)` at once (or the next one, when none waits now); its deadline ends it
/// otherwise, and so does the waiting task's cancellation. The sink's counts signal it whenever
/// they move (`SinkStatistics.changes`), so a job watching them for its ends (`--expect`,
/// `--idle-exit`) wakes when they do, not every few milliseconds.
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
    private struct Waiter {
        var continuation: CheckedContinuation<Void, Never>
        var number: UInt64
        var timer: Scheduled<Void>?
    }

    private enum State {
        case idle
        case signalled
        case waiting(Waiter)
    }

    private let state = NIOLockedValueBox<(State, waits: UInt64)>((.idle, 0))

    public init() {}

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
        resume(waiter)
    }

    /// Returns at the first of: a signal (one since the last wait returned counts), `deadline`
    /// (timed on `loop`), the task's cancellation. One waiter at a time.
    public func wait(until deadline: NIODeadline, on loop: any EventLoop) async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let number = state.withLockedValue { state -> UInt64? in
                    if case .signalled = state.0 {
                        state.0 = .idle
                        return nil
                    }
                    state.waits += 1
                    state.0 = .waiting(Waiter(continuation: continuation, number: state.waits))
                    return state.waits
                }
                guard let number else { return continuation.resume() }
                // Cancelled before the wait was stored: `onCancel` found nothing to end.
                if Task.isCancelled { return end(number) }
                guard deadline != .distantFuture else { return }
                let timer = loop.scheduleTask(deadline: deadline) { self.end(number) }
                let ended = state.withLockedValue { state -> Bool in
                    guard case .waiting(var waiter) = state.0, waiter.number == number else { return true }
                    waiter.timer = timer
                    state.0 = .waiting(waiter)
                    return false
                }
                if ended { timer.cancel() }
            }
        } onCancel: {
            end(nil)
        }
    }

    /// Ends wait `number` (`nil`: whichever waits), if it still waits.
    private func end(_ number: UInt64?) {
        let waiter = state.withLockedValue { state -> Waiter? in
            guard case .waiting(let waiter) = state.0, number == nil || number == waiter.number else { return nil }
            state.0 = .idle
            return waiter
        }
        resume(waiter)
    }

    private func resume(_ waiter: Waiter?) {
        guard let waiter else { return }
        waiter.timer?.cancel()
        waiter.continuation.resume()
    }
}
