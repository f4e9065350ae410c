import Foundation

/// Waits for what another thread or process does: `condition` is asked every `interval` until it
/// holds or `timeout` passes. Returns whether it held, for the caller to require or to say why
/// not. The one way a test waits: a fixed sleep is either too short on a loaded machine or time
/// thrown away on a quiet one.
@discardableResult
public func poll(
    timeout: Duration,
    every interval: Duration = .milliseconds(10),
    until condition: () throws -> Bool
) rethrows -> Bool {
    let deadline = ContinuousClock.now + timeout
    while try !condition() {
        guard ContinuousClock.now < deadline else { return false }
        let (seconds, attoseconds) = interval.components
        Thread.sleep(forTimeInterval: Double(seconds) + Double(attoseconds) / 1e18)
    }
    return true
}
