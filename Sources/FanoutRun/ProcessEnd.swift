import Dispatch
import Foundation
import NIOConcurrencyHelpers

/// A child process's end, waited for without polling: its termination handler marks it and
/// signals, and a wait takes a bound. Made before the process runs (the handler must be set by
/// then).
final class ProcessEnd: Sendable {
    private let signal = DispatchSemaphore(value: 0)
    private let ended = NIOLockedValueBox(false)

    init(of process: Process) {
        process.terminationHandler = { [signal, ended] _ in
            ended.withLockedValue { $0 = true }
            signal.signal()
        }
    }

    /// Waits up to `bound` for the process to end; whether it has.
    func wait(upTo bound: Duration) -> Bool {
        if ended.withLockedValue({ $0 }) { return true }
        let (seconds, attoseconds) = bound.components
        let nanoseconds = max(0, seconds) * 1_000_000_000 + max(0, attoseconds) / 1_000_000_000
        return signal.wait(timeout: .now() + .nanoseconds(Int(clamping: nanoseconds))) == .success
            || ended.withLockedValue { $0 }
    }
}
