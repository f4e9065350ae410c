import Dispatch
import FanoutClient
import NIOConcurrencyHelpers

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// SIGINT, SIGTERM and SIGHUP while a job runs (`watch(during:)`): the first is noted and
/// handed to the job's `onStop` action — a run stops taking tokens, drains what is in flight
/// and writes its folder marked interrupted — and a second ends the process at once, with the
/// second signal's exit status and nothing more written.
///
/// ```
///   signal 1 ──► received = it ──► onStop(it): the engine's interrupt(by:) ──► folder, 128 + n
///   signal 2 ──► "stopped at once" on standard error ──► _exit(128 + n)
/// ```
public final class StopSignals: Sendable {
    private struct State {
        var received: StopSignal?
        var action: (@Sendable (StopSignal) -> Void)?
    }

    private let state = NIOLockedValueBox(State())

    private init() {}

    /// The first stop signal received, if one was.
    public var received: StopSignal? { state.withLockedValue { $0.received } }

    /// Calls `action` with the first stop signal: when it comes, or at once if it came already.
    /// It replaces the action set before (each repeat of a run sets its engine's).
    public func onStop(_ action: @escaping @Sendable (StopSignal) -> Void) {
        let received = state.withLockedValue { state in
            state.action = action
            return state.received
        }
        if let received { action(received) }
    }

    /// Notes `signal` as if it had been received: the first calls the action, a second ends the
    /// process.
    func receive(_ signal: StopSignal) {
        let (first, action) = state.withLockedValue { state in
            guard state.received == nil else { return (false, state.action) }
            state.received = signal
            return (true, state.action)
        }
        guard first else {
            let line = "fanout: a second \(signal.name): stopped at once, nothing more written\n"
            _ = line.utf8CString.withUnsafeBufferPointer { write(2, $0.baseAddress, $0.count - 1) }
            _exit(signal.exitStatus)
        }
        action?(signal)
    }

    /// Runs `body` with the stop signals watched instead of ending the process; their default
    /// behaviour comes back afterwards.
    public static func watch<Result>(during body: (StopSignals) throws -> Result) rethrows -> Result {
        let signals = StopSignals()
        let sources = StopSignal.allCases.map { stop in
            signal(stop.rawValue, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: stop.rawValue, queue: .global())
            source.setEventHandler { signals.receive(stop) }
            source.resume()
            return source
        }
        defer {
            for source in sources { source.cancel() }
            for stop in StopSignal.allCases { signal(stop.rawValue, SIG_DFL) }
        }
        return try body(signals)
    }
}
