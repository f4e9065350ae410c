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

/// Holds a fault in force for `duration` (a sink killed or frozen, a pause between frames), asking
/// every `interval` that it still holds. Returns whether it held the whole time: a fault that
/// ended early (a process that came back, a connection that closed) is a test that proved nothing.
/// The duration is the behaviour under test; `poll` is for waiting until something happens.
@discardableResult
public func hold(
    for duration: Duration,
    every interval: Duration = .milliseconds(10),
    while inForce: () throws -> Bool
) rethrows -> Bool {
    let end = ContinuousClock.now + duration
    var held = true
    try poll(timeout: duration + .seconds(1), every: interval) {
        held = try inForce()
        return !held || ContinuousClock.now >= end
    }
    return held
}

/// Keeps the calling thread busy for `duration` without giving it up: for a test whose subject
/// is an event loop that falls behind because its thread is blocked. Not a way to wait for
/// something (that is `poll`).
public func blockThread(for duration: Duration) {
    let end = ContinuousClock.now + duration
    while ContinuousClock.now < end {}
}
