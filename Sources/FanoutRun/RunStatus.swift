import FanoutAssembly
import FanoutClient

/// How a run ended, as the exit status `fanout run` and `fanout send` give it.
public enum RunStatus: Int32, Sendable, Comparable {
    /// Every notification was accepted or rejected by the server (and, with the embedded sink,
    /// sender and sink agree on every count and the digest).
    case clean = 0
    /// Notifications failed (no answer after every try), or sender and sink disagree.
    case failed = 3
    /// The numbers cannot be trusted: the open model's generator fell further behind its
    /// schedule than the lag limit, nothing or too little was measured (no answers, none after
    /// the warm-up, fewer than `--min-measured`), every answer refused the credentials, a list
    /// written on the side lost lines. (Sender and sink disagreeing is `failed`; the summary
    /// calls it invalid too.)
    case invalid = 4
    /// Could not reach the endpoint: no connection got as far as an answer (a name not
    /// resolved, refused or timed-out connects, TLS, not HTTP/2, credentials refused).
    case unreachable = 5
    /// Stopped by an `--abort-on` condition; the folder says which, over which window, when.
    case aborted = 6
    /// Stopped by SIGHUP (128 + its number, as shells report it); the folder says so.
    case hungUp = 129
    /// Stopped by SIGINT, Ctrl-C.
    case interrupted = 130
    /// Stopped by SIGTERM, e.g. a CI runner's cancel.
    case terminated = 143

    /// The status of a run stopped by `signal`.
    public init(_ signal: StopSignal) {
        switch signal {
        case .hangUp: self = .hungUp
        case .interrupt: self = .interrupted
        case .terminate: self = .terminated
        }
    }

    /// The status of a finished run.
    public init(_ summary: RunSummary) {
        let report = summary.report
        if let interruption = report.interruption {
            self = RunStatus(interruption.signal)
        } else if report.abort != nil {
            self = .aborted
        } else if report.unreachable != nil {
            self = .unreachable
        } else if report.cancelled && report.abandoned == nil {
            self = .interrupted
        } else if summary.invalidReasons.contains(where: { $0 != .senderAndSinkDisagree }) {
            self = .invalid
        } else if report.snapshot.failed.isEmpty && summary.reconciliation?.agrees != false {
            self = .clean
        } else {
            self = .failed
        }
    }

    public static func < (lhs: RunStatus, rhs: RunStatus) -> Bool { lhs.rawValue < rhs.rawValue }
}
