import Dispatch
import Foundation

/// Runs `action` on the first SIGINT (Ctrl-C) while `body` runs, instead of ending the process:
/// a run stops cleanly and still writes what it did.
public func onInterrupt<Result>(
    _ action: @escaping @Sendable () -> Void,
    during body: () throws -> Result
) rethrows -> Result {
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
