import FanoutAPNs
import FanoutClient
import FanoutFiles
import FanoutMeasure
import FanoutNotation
import FanoutPush
import FanoutReport
import FanoutResults
import FanoutTokens
import Foundation
import Histogram

/// A run's results as files and as text: `summary.json`, `latency.hgrm` (HdrHistogram's
/// percentile distribution, in milliseconds), and the summary a person reads at a glance.
public struct RunSummary: Sendable {
    public var report: LoadEngine.Report
    /// Where the notifications went, e.g. `http://127.0.0.1:2197`.
    public var endpoint: String
    /// The endpoint as it was asked for, when that is not `endpoint`: the embedded sink's port
    /// is picked per run, and runs (or shards) alike in all else are alike.
    public var configuredEndpoint: String?
    public var configuration: LoadConfiguration
    /// Where the tokens came from, e.g. `generated: 1000000, seed 1` or `file: devices.txt`.
    public var tokenSource: String
    public var reconciliation: Reconciliation?
    public var environment = RunEnvironment.current
    /// The CPU time the embedded sink's event-loop threads used over the run (`fanout run`);
    /// `nil` for an endpoint elsewhere.
    public var sinkCPU: Duration?
    /// The embedded sink's own delays over the run (`fanout run`); `nil` for an endpoint elsewhere.
    public var sinkDelays: SinkOwnDelays?
    /// When the run started (its wall-clock time, for the interval log).
    public var started: Date
    /// The scenario file that applied, recorded by path and content hash.
    public var scenario: FileUse?

    public init(
        report: LoadEngine.Report,
        endpoint: String,
        configuration: LoadConfiguration,
        tokenSource: String,
        reconciliation: Reconciliation? = nil
    ) {
        self.report = report
        self.endpoint = endpoint
        self.configuration = configuration
        self.tokenSource = tokenSource
        self.reconciliation = reconciliation
        started = report.started
    }

    public var connections: Int { configuration.shape.connections }
    public var streamsPerConnection: Int { configuration.shape.streamsPerConnection }

    /// The version of `summary.json`'s layout this Fanout writes (`SummaryDocument`).
    public static let schemaVersion = SummaryDocument.schemaVersion
    /// The versions this Fanout reads (`SummaryDocument`).
    public static let readableSchemaVersions = SummaryDocument.readableSchemaVersions

    /// With the embedded sink's device fleet on: what became of the accepted notifications.
    public var delivery: DeliverySummary?

    /// A broadcast run's channels and broadcasts (`fanout send --broadcast`).
    public var broadcast: BroadcastSummary?

    /// With the embedded sink's devices engaging (`--sink-return-to`): the return wave.
    public var returnWave: ReturnWaveSummary?

    /// A scaled rehearsal's terms (`fanout run --sample`), said first in every report.
    public var sample: SampleSummary?

    /// The embedded sink held no answer and had no wire (a self-measurement, `HarnessAccount.selfMeasurement`).
    public var selfMeasurement = false

    /// How much of the measured latency the harness accounts for.
    public var harness: HarnessAccount {
        var account = HarnessAccount(
            report: report,
            sink: sinkDelays,
            maxShare: configuration.shape.model.maxHarnessShare,
            cores: environment.cores
        )
        account.selfMeasurement = selfMeasurement
        return account
    }

    var seconds: Double { report.elapsed.seconds }

    /// Notifications with a final outcome per second of the run; with a warm-up, those that
    /// started after it (the ones latency counts, and the ones an offered rate counts), per
    /// second from its end (`warmUpStart` + `warmUp`) to the run's. Counting every completion after the warm-up instead
    /// counted the backlog the warm-up left too: a search step offered 1,000/s "achieved" 1,056/s.
    public var throughput: Double {
        guard report.warmUp > .zero else { return seconds > 0 ? Double(report.snapshot.sent) / seconds : 0 }
        let length = seconds - report.warmUpStart.seconds - report.warmUp.seconds
        return length > 0 ? Double(report.snapshot.latency.totalCount) / length : 0
    }

    /// Whether the numbers can be trusted: the generator kept its schedule, sender and sink
    /// agree (when a sink was asked), and something was measured at all.
    public var valid: Bool { invalidReasons.isEmpty }

    /// Why the numbers cannot be trusted: the engine's own reasons (`engineReasons`), sender
    /// and sink disagreeing, and nothing or too little measured (no answers, every answer
    /// refusing the credentials, none after the warm-up, fewer than `--min-measured`).
    public var invalidReasons: [InvalidReason] {
        var reasons = report.engineReasons
        if let reconciliation, !reconciliation.agrees { reasons.append(.senderAndSinkDisagree) }
        if answered == 0 {
            reasons.append(.noAnswers)
        } else if let refused = credentialsRefused {
            reasons.append(refused)
        } else if !measured {
            reasons.append(.warmUpTookAll(warmUpSeconds: report.warmUp.seconds))
        } else if measuredCount < configuration.shape.model.minMeasured {
            reasons.append(
                .tooFewMeasured(
                    measured: measuredCount,
                    minimum: configuration.shape.model.minMeasured,
                    unit: .answers
                )
            )
        }
        return reasons
    }

    /// Whether any answer came in the measured part of the run (after the warm-up): what the
    /// latency percentiles and the throughput stand on.
    public var measured: Bool { answered > 0 && report.snapshot.latency.totalCount > 0 }

    /// The answers the latency percentiles stand on: those to notifications started after the
    /// warm-up.
    public var measuredCount: Int { Int(report.snapshot.latency.totalCount) }

    /// Why a run is no measure of delivery when every answer refused its credentials (403:
    /// the provider token or certificate), `nil` otherwise: then what was timed is the refusal.
    /// FCM's SENDER_ID_MISMATCH is a 403 of one token's, not of the credentials.
    public var credentialsRefused: InvalidReason? {
        let snapshot = report.snapshot
        guard snapshot.accepted == 0 else { return nil }
        let refusals = snapshot.rejected.filter { $0.key.status == 403 && $0.key != .fcm(.senderIDMismatch) }
        guard !refusals.isEmpty else { return nil }
        return .credentialsRefused(refusals: refusals)
    }

    /// Notifications the server answered: accepted, rejected, or answered without an APNs reason.
    public var answered: Int {
        answeredCount(
            accepted: report.snapshot.accepted,
            rejected: report.snapshot.rejected,
            failed: report.snapshot.failed
        )
    }

    /// Milliseconds at `percentile` (0...100).
    public func latency(at percentile: Double) -> Double {
        report.snapshot.latency.milliseconds(at: percentile)
    }

    /// CPU microseconds per notification sent, or `nil` when none was sent.
    public static func microsecondsPerNotification(_ cpu: Duration, sent: Int) -> Double? {
        sent > 0 ? Double(cpu.wholeNanoseconds) / 1000 / Double(sent) : nil
    }

    /// HdrHistogram's interval log of the run, one histogram a second.
    public var hlog: String {
        IntervalLog(intervals: report.snapshot.intervals, start: started.timeIntervalSince1970, length: seconds).text
    }

    /// The files every run writes.
    public static let files = RunFiles.names

    /// Writes the run's files into `directory` (made if missing).
    public func write(to directory: String) throws {
        try RunFiles.write(to: directory, summary: document, latency: report.snapshot.latency, hlog: hlog)
    }
}
