import FanoutClient
import FanoutEndpoint
import FanoutMeasure
import FanoutReport
import FanoutResults

import struct Foundation.Date

/// What a job tells whoever runs it, as it happens. A job says nothing itself: it hands each
/// event to its `JobReporter`, and the executable's console reporter puts the events into
/// words on standard output and error. An event carries values; the words are the reporter's.
///
/// ```
///   RunJob, SendJob, SinkService, SearchJob, PlanJob, ABJob, PayloadRenderJob
///        │ JobEvent (values)
///        ▼
///   JobReporter ── the executable's ConsoleReporter: words → stdout / stderr
/// ```
public enum JobEvent: Sendable {
    /// One of the job's servers is listening (`address`: `host:port`, or a URL for the live
    /// page).
    case listening(JobServer, address: String)
    /// A run's progress, about once a second; `total`: the notifications it expects.
    case progress(RunProgress, total: UInt64?)
    /// A run's folder is written: its summary in words (every line), its summary.json's
    /// document, and the files it holds.
    case runWritten(summary: String, document: SummaryDocument, folder: String, files: [String])
    /// The endpoint was never reached: what failed, where.
    case unreachable(EndpointFailure, host: String, port: Int)
    /// A set of repeats: one begins; the set was cut short by a signal; the set is done.
    case repeatStarting(index: Int, of: Int)
    case repeatsInterrupted(finished: Int, asked: Int, signal: StopSignal)
    case repeatsSpread(String)
    case repeatsReportWritten(path: String)
    /// `--start-at` had passed `late` before the run began: it starts at once.
    case startAtPassed(Date, late: Duration)
    /// `ab --repeat` asked fewer pairs than measure the noise (`PairedComparison.minimumPairs`):
    /// no verdict will come.
    case fewPairs(Int)
    /// `plan --cost`'s run was flat out (the closed model): its CPU a notification may be well
    /// short of a paced fan-out's (docs/planning.md).
    case costFromFlatOut(folder: String)
    /// The run's summary could not be added to `$GITHUB_STEP_SUMMARY`'s file.
    case stepSummaryUnwritable(path: String)
    /// A sink's setup says something to know (`SinkNote`), or a line from it as it serves (a
    /// provider token's fault, a limit reached: words its module makes).
    case sink(SinkNote)
    /// `fanout run --fleet`: the campaign's lines (the whole, then a line a service), its
    /// folder written with `files`.
    case campaign(lines: [String], folder: String, files: [String])
    /// A sink stopped: its counts, a line each; its folder written (with its summary).
    case sinkStopped(lines: [String])
    case sinkWritten(summary: String, folder: String)
    /// Broadcast channels a run created and could not delete: they stay.
    case channelsKept(ChannelsKept)
    /// `fanout ab`: a run of a pair begins.
    case pairStarting(pair: Int, of: Int, side: String, binary: String)
    /// `fanout plan`: the calibration run begins.
    case calibrating(Calibration)
    /// `fanout search`: the table begins; a step is measured; the search ends.
    case searchStarted
    case searchStep(SearchStep)
    case searchEnded(SearchReport)
    /// `fanout payload render`: a token could not be rendered (`position` from 1; `token`
    /// `nil` when the token itself is malformed).
    case renderFailed(position: Int, token: String?, reason: String)
}

/// A server a job runs beside its work.
public enum JobServer: Sendable, Hashable {
    /// The sink's HTTP/2 listener.
    case sink
    /// The sink's admin HTTP endpoint (`--admin`).
    case admin
    /// The sender's Prometheus endpoint (`--metrics`).
    case metrics
    /// The live report page (`--serve`).
    case livePage
}

/// What a sink says as it starts, and the lines it says as it serves.
public enum SinkNote: Sendable {
    /// TLS with a certificate it made: clients trust `directory/cert.pem`.
    case selfSigned(directory: String)
    /// The wire it simulates, in words.
    case wire(String)
    /// Fewer connections than by default, because of the open-file limit.
    case connectionLimit(connections: Int, openFiles: Int, perPeer: Int)
    /// Neither token nor certificate authentication: every request is authenticated.
    case authenticationOff
    /// A line from the sink as it serves: a provider token's fault, a limit reached.
    case serving(String)
    /// `--service fcm`: the service-account file SDKs load, and the token endpoint it names.
    case fcmCredentials(path: String, tokenURI: String)
    /// `--service fcm --no-auth`: any bearer is taken (a request without one is still 401).
    case fcmAnyBearer
}

/// Broadcast channels a run created and could not delete.
public struct ChannelsKept: Sendable {
    public var kept: Int
    public var created: Int
    /// Where they were to be deleted (the management endpoint).
    public var management: String
    /// Why, each reason once: APNs' reason, or the status.
    public var reasons: [String]
    /// What kept the deletions from being answered, if something did.
    public var failure: String?

    public init(kept: Int, created: Int, management: String, reasons: [String], failure: String?) {
        self.kept = kept
        self.created = created
        self.management = management
        self.reasons = reasons
        self.failure = failure
    }
}

/// The calibration run a plan measures its sender's cost on.
public struct Calibration: Sendable {
    public var notifications: UInt64
    public var connections: Int
    public var streams: Int
    /// The wire it runs over, in words.
    public var wire: String

    public init(notifications: UInt64, connections: Int, streams: Int, wire: String) {
        self.notifications = notifications
        self.connections = connections
        self.streams = streams
        self.wire = wire
    }
}

/// Where a job's events go.
public protocol JobReporter: Sendable {
    /// Whether a run should make its progress events (the console shows them only on a
    /// terminal): a run that would not be shown skips the work.
    var wantsProgress: Bool { get }
    func report(_ event: JobEvent)
}

/// A reporter that drops every event: a job run by a test or a library.
public struct SilentReporter: JobReporter {
    public init() {}
    public var wantsProgress: Bool { false }
    public func report(_ event: JobEvent) {}
}

extension JobReporter {
    /// What a run calls about once a second (`LoadEngine.run(progress:)`): progress events of
    /// `total` notifications, or `nil` when this reporter does not want them.
    func progress(total: UInt64?) -> ((RunProgress) -> Void)? {
        guard wantsProgress else { return nil }
        return { progress in report(.progress(progress, total: total)) }
    }
}
