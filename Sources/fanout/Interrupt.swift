import Dispatch
import Foundation

/// Runs `action` on the first SIGINT (Ctrl-C) while `body` runs, instead of ending the process:
/// a run stops cleanly and still writes what it did.
func onInterrupt<Result>(_ action: @escaping @Sendable () -> Void, during body: () throws -> Result) rethrows -> Result
{
    signal(SIGINT, SIG_IGN)
    let source = DispatchSource.makeSignalSource(signal: SIGINT, queue: .global())
    source.setEventHandler(handler: action)
    source.resume()
    defer {
        source.cancel()
        signal(SIGINT, SIG_DFL)
    }
    return try body()
}

/// The exit status of a run stopped by Ctrl-C (128 + SIGINT, as shells report it).
let interruptedStatus: Int32 = 130

/// The exit status of a run whose numbers cannot be trusted: the open model's generator fell
/// further behind its schedule than `--max-lag`.
let invalidRunStatus: Int32 = 4
