import FanoutAPNs
import FanoutClient
import FanoutMeasure
import FanoutResults
import FanoutSettings
import FanoutTokens
import Foundation
import Histogram

/// Whether a sender and the sink it sent to agree: every answer the sink gave was received
/// (200s, and errors by reason), the order-independent digests of accepted notifications are
/// equal, and the sink saw no request the sender did not send.
public struct Reconciliation: Sendable, Hashable {
    public var sinkRequests: Int
    public var sinkAccepted: Int
    public var sinkRejected: [APNsReason: Int]
    public var sinkDigest: NotificationDigest
    /// What disagrees, one line each; empty when they agree.
    public var differences: [String]

    public var agrees: Bool { differences.isEmpty }

    public init(
        client: LoadSnapshot,
        sinkRequests: Int,
        sinkAccepted: Int,
        sinkRejected: [APNsReason: Int],
        sinkDigest: NotificationDigest
    ) {
        self.sinkRequests = sinkRequests
        self.sinkAccepted = sinkAccepted
        self.sinkRejected = sinkRejected
        self.sinkDigest = sinkDigest
        var differences: [String] = []
        if client.answeredOK != sinkAccepted {
            differences.append("200 answers: sink sent \(sinkAccepted), sender received \(client.answeredOK)")
        }
        for reason in Set(sinkRejected.keys).union(client.answers.keys).sorted(by: { $0.rawValue < $1.rawValue }) {
            let sink = sinkRejected[reason] ?? 0
            let sender = client.answers[reason] ?? 0
            if sink != sender { differences.append("\(reason.rawValue): sink sent \(sink), sender received \(sender)") }
        }
        if client.digest != sinkDigest {
            differences.append("digest of accepted notifications: sink \(sinkDigest), sender \(client.digest)")
        }
        if sinkRequests > client.requests {
            differences.append("requests: sink saw \(sinkRequests), sender sent \(client.requests)")
        }
        self.differences = differences
    }
}

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

    /// The embedded sink held no answer and had no wire (`HarnessAccount.sinkAnswersAtOnce`).
    public var sinkAnswersAtOnce = false

    /// How much of the measured latency the harness accounts for.
    public var harness: HarnessAccount {
        var account = HarnessAccount(
            report: report,
            sink: sinkDelays,
            maxShare: configuration.shape.model.maxHarnessShare,
            cores: environment.cores
        )
        account.sinkAnswersAtOnce = sinkAnswersAtOnce
        return account
    }

    var seconds: Double { report.elapsed.seconds }

    /// Notifications with a final outcome per second of the run; with a warm-up, those that
    /// started after it (the ones latency counts, and the ones an offered rate counts), per
    /// second from its end to the run's. Counting every completion after the warm-up instead
    /// counted the backlog the warm-up left too: a search step offered 1,000/s "achieved" 1,056/s.
    public var throughput: Double {
        guard report.warmUp > .zero else { return seconds > 0 ? Double(report.snapshot.sent) / seconds : 0 }
        let length = seconds - report.warmUp.seconds
        return length > 0 ? Double(report.snapshot.latency.totalCount) / length : 0
    }

    /// Whether the numbers can be trusted: the generator kept its schedule, sender and sink
    /// agree (when a sink was asked), and something was measured at all.
    public var valid: Bool { invalidReasons.isEmpty }

    public var invalidReasons: [String] {
        var reasons = report.invalidReasons
        if let reconciliation, !reconciliation.agrees { reasons.append("sender and sink disagree") }
        if answered == 0 {
            reasons.append(Self.noAnswers)
        } else if let refused = credentialsRefused {
            reasons.append(refused)
        } else if !measured {
            reasons.append(warmUpTookAll)
        }
        return reasons
    }

    /// Whether any answer came in the measured part of the run (after the warm-up): what the
    /// latency percentiles and the throughput stand on.
    public var measured: Bool { answered > 0 && report.snapshot.latency.totalCount > 0 }

    /// Why a run with answers but none after the warm-up measured nothing.
    var warmUpTookAll: String {
        "the warm-up (\(DurationNotation.format(report.warmUp))) took the whole run: no notification started after it, so no rate or latency was measured (a shorter --warm-up, or more notifications)"
    }

    /// Why a run is no measure of delivery when every answer refused its credentials (403:
    /// the provider token or certificate), `nil` otherwise: then what was timed is the refusal.
    public var credentialsRefused: String? {
        let snapshot = report.snapshot
        guard snapshot.accepted == 0 else { return nil }
        let refusals = snapshot.rejected.filter { $0.key.status == 403 }
        guard !refusals.isEmpty else { return nil }
        let reasons = refusals.sorted { $0.key.rawValue < $1.key.rawValue }.map { "\($0.key.rawValue) \($0.value)" }
        return
            "credentials refused: no notification was accepted and the server refused the credentials (403 \(reasons.joined(separator: ", "))): check the certificate or the provider token's key, key id and team id"
    }

    /// Notifications the server answered: accepted, rejected, or answered without an APNs reason.
    public var answered: Int {
        let snapshot = report.snapshot
        return snapshot.accepted + snapshot.rejected.values.reduce(0, +) + (snapshot.failed[.unexpectedResponse] ?? 0)
    }

    /// Why a run without a single answer measures nothing.
    public static let noAnswers = "no answers: the server answered no notification, so no rate or latency was measured"

    /// Milliseconds at `percentile` (0...100).
    public func latency(at percentile: Double) -> Double {
        report.snapshot.latency.milliseconds(at: percentile)
    }

    /// `summary.json`.
    public var document: SummaryDocument {
        let snapshot = report.snapshot
        func named<Key: RawRepresentable>(_ counts: [Key: Int]) -> [String: Int] where Key.RawValue == String {
            Dictionary(uniqueKeysWithValues: counts.map { ($0.key.rawValue, $0.value) })
        }
        let shard = configuration.shape.model.shard
        // Notifications not sent for want of the other half: tokens read past the schedule's
        // end (or the closed model's duration), and arrivals due after the last token.
        let arrivalsWithoutToken = Int(report.tokensRanOut?.arrivals ?? 0)
        let lag = snapshot.lag
        return SummaryDocument(
            schemaVersion: Self.schemaVersion,
            configuration: configurationDocument,
            environment: environment,
            started: started,
            endpoint: endpoint,
            connections: connections,
            streamsPerConnection: streamsPerConnection,
            elapsedSeconds: seconds,
            sent: snapshot.sent,
            accepted: snapshot.accepted,
            rejected: named(snapshot.rejected),
            failed: named(snapshot.failed),
            skipped: named(snapshot.skipped),
            requests: snapshot.requests,
            retries: snapshot.retries,
            throughputPerSecond: measured ? throughput : nil,
            latency: measured ? SummaryDocument.Latency(milliseconds: latency(at:)) : nil,
            digest: snapshot.digest.description,
            cancelled: report.cancelled,
            reconciled: reconciliation?.agrees,
            cpu: SummaryDocument.CPU(
                senderSeconds: report.senderCPU.seconds,
                senderPerNotification: Self.microsecondsPerNotification(report.senderCPU, sent: snapshot.sent),
                sinkSeconds: sinkCPU.map { $0.seconds },
                sinkPerNotification: sinkCPU.flatMap { Self.microsecondsPerNotification($0, sent: snapshot.sent) }
            ),
            harness: harness.document,
            start: SummaryDocument.Start(
                scheduled: report.scheduledStart.map(TimeNotation.format),
                firstSend: report.firstSend.map(TimeNotation.format),
                host: environment.hostname
            ),
            shard: shard == .all ? nil : shard.description,
            model: report.schedule == nil ? .closed : .open,
            schedule: report.schedule.map { schedule in
                SummaryDocument.Schedule(
                    description: schedule.description,
                    startRatePerSecond: schedule.startRate,
                    stages: schedule.stages.map {
                        .init(durationSeconds: $0.duration.seconds, targetPerSecond: $0.target)
                    },
                    planned: schedule.total.map { Int($0) },
                    capped: configuration.shape.model.rateNote
                )
            },
            generatorLag: report.schedule == nil
                ? nil
                : SummaryDocument.GeneratorLag(
                    p99: lag.totalCount == 0 ? 0 : lag.valueAtPercentile(99).microsecondsInMilliseconds,
                    max: lag.totalCount == 0 ? 0 : lag.max.microsecondsInMilliseconds,
                    limit: report.maxLag.milliseconds
                ),
            warmUpSeconds: report.warmUp.seconds,
            unscheduled: snapshot.unscheduled + arrivalsWithoutToken,
            unscheduledReasons: .init(scheduleOver: snapshot.unscheduled, tokensRanOut: arrivalsWithoutToken),
            valid: valid,
            invalidReasons: invalidReasons,
            intervals: snapshot.intervals.map { interval in
                SummaryDocument.Interval(
                    second: interval.second,
                    completed: interval.completed,
                    latencyCount: Int(interval.latencies.totalCount),
                    p50: interval.p50.microsecondsInMilliseconds,
                    p90: interval.p90.microsecondsInMilliseconds,
                    p99: interval.p99.microsecondsInMilliseconds,
                    max: interval.max.microsecondsInMilliseconds,
                    maxLag: interval.maxLag.microsecondsInMilliseconds,
                    maxLoopLag: interval.maxLoopLag.microsecondsInMilliseconds,
                    readDelayP99: interval.readDelayP99.microsecondsInMilliseconds,
                    streamWaits: report.schedule == nil ? nil : interval.streamWaits.count
                )
            },
            tokens: report.tokens.map {
                .init(read: Int($0.tokens), lines: Int($0.lines), turnedDown: Int($0.skipped))
            },
            abandoned: report.abandoned,
            sink: reconciliation.map {
                SummaryDocument.Sink(
                    requests: $0.sinkRequests,
                    accepted: $0.sinkAccepted,
                    rejected: named($0.sinkRejected),
                    digest: $0.sinkDigest.description,
                    differences: $0.differences
                )
            },
            unsent: snapshot.unsent > 0 ? snapshot.unsent : nil,
            openModel: openModelDocument,
            delivery: delivery
        )
    }

    /// The open model's pacing and waits for streams; `nil` for the closed model.
    var openModelDocument: SummaryDocument.OpenModel? {
        guard report.schedule != nil else { return nil }
        let snapshot = report.snapshot
        let waits = snapshot.streamWaits
        let measured = Int(snapshot.latency.totalCount)
        return SummaryDocument.OpenModel(
            coalesce: configuration.shape.coalescing.description,
            largestWindowMs: Double(snapshot.largestPacingWindow) / 1e6,
            streamWaits: .init(
                count: waits.count,
                share: measured > 0 ? min(1, Double(waits.count) / Double(measured)) : 0,
                longestMs: Double(waits.longest) / 1e6,
                fewestStreams: waits.fewestStreams
            )
        )
    }

    /// CPU microseconds per notification sent, or `nil` when none was sent.
    public static func microsecondsPerNotification(_ cpu: Duration, sent: Int) -> Double? {
        sent > 0 ? Double(cpu.wholeNanoseconds) / 1000 / Double(sent) : nil
    }

    /// `cpu µs per notification: sender 5.21 (5.2 s)  sink 3.10 (3.1 s)`.
    var cpuLine: String {
        let sent = report.snapshot.sent
        func part(_ name: String, _ cpu: Duration) -> String {
            let perNotification =
                Self.microsecondsPerNotification(cpu, sent: sent).map { String(format: "%.2f", $0) } ?? "-"
            return "\(name) \(perNotification) (\(String(format: "%.2f", cpu.seconds)) s)"
        }
        guard answered > 0 else {
            return
                "cpu: sender \(String(format: "%.2f", report.senderCPU.seconds)) s, none per notification (no answers)"
        }
        return "cpu µs per notification: " + part("sender", report.senderCPU)
            + (sinkCPU.map { "  " + part("sink", $0) } ?? "")
    }

    /// What was asked for: the settings that shape a run, to compare like with like.
    var configurationDocument: SummaryDocument.Configuration {
        let headers = configuration.headers
        let model = configuration.shape.model
        return SummaryDocument.Configuration(
            endpoint: configuredEndpoint ?? endpoint,
            connections: configuration.shape.connections,
            streamsPerConnection: configuration.shape.streamsPerConnection,
            tokens: tokenSource,
            topic: headers.topic,
            pushType: headers.pushType.rawValue,
            priority: headers.priority?.rawValue,
            expiration: headers.expiration,
            collapseID: headers.collapseID?.text,
            tokenAuth: configuration.providerTokens != nil,
            streamTimeoutSeconds: configuration.shape.streamTimeout.seconds,
            maxAttempts: configuration.shape.maxAttempts,
            model: model.schedule == nil ? .closed : .open,
            schedule: model.schedule?.description,
            durationSeconds: (model.schedule?.duration ?? model.duration).map(\.seconds),
            warmUpSeconds: model.warmUp.seconds,
            maxLagSeconds: model.maxLag.seconds,
            maxHarnessShare: model.maxHarnessShare,
            scenario: scenario
        )
    }

    /// HdrHistogram's interval log of the run, one histogram a second.
    public var hlog: String {
        IntervalLog(intervals: report.snapshot.intervals, start: started.timeIntervalSince1970, length: seconds).text
    }

    /// HdrHistogram's percentile distribution of the latencies, in milliseconds.
    public var hgrm: String {
        var text = ""
        report.snapshot.latency.outputPercentileDistribution(to: &text, outputValueUnitScalingRatio: 1000)
        return text
    }

    /// The files every run writes.
    public static let files = ["summary.json", "summary.md", "report.html", "latency.hgrm", "latency.hlog"]

    /// Writes the run's files into `directory` (made if missing).
    public func write(to directory: String) throws {
        try RunFiles.write(to: directory, summary: document, latency: report.snapshot.latency, hlog: hlog)
    }

    /// What a person reads at the end of a run.
    public var text: String {
        let snapshot = report.snapshot
        let rejected = snapshot.rejected.values.reduce(0, +)
        let failed = snapshot.failed.values.reduce(0, +)
        let skipped = snapshot.skipped.values.reduce(0, +)
        let rate =
            answered == 0
            ? "no answers" : measured ? "\(grouped(Int(throughput.rounded()))) notifications/s" : "nothing measured"
        var lines = [
            "\(grouped(snapshot.sent)) notifications to \(endpoint) in \(String(format: "%.2f", seconds)) s over \(connections) connections × \(streamsPerConnection) streams: \(rate)",
            "accepted \(grouped(snapshot.accepted))   rejected \(grouped(rejected))   failed \(grouped(failed))   skipped \(grouped(skipped))   (requests \(grouped(snapshot.requests)), retries \(grouped(snapshot.retries)))",
        ]
        for (reason, count) in snapshot.rejected.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
            lines.append("  rejected \(reason.status) \(reason.rawValue): \(grouped(count))")
        }
        for (cause, count) in snapshot.failed.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
            lines.append("  failed \(cause.rawValue): \(grouped(count))")
        }
        for (cause, count) in snapshot.skipped.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
            lines.append("  skipped \(cause.rawValue): \(grouped(count))")
        }
        if let schedule = report.schedule {
            let lag = snapshot.lag.totalCount == 0 ? 0 : Double(snapshot.lag.max) / 1000
            lines.append(
                "open model, \(schedule): latency counted from each notification's due time; generator lag max \(millisecondsText(lag)) ms (limit \(millisecondsText(report.maxLag.milliseconds)) ms)"
            )
            if let note = configuration.shape.model.rateNote { lines.append("rate \(note)") }
            if let open = openModelDocument {
                lines.append(
                    "pacing: --coalesce \(open.coalesce), windows up to \(millisecondsText(open.largestWindowMs)) ms "
                        + "(tickets go out at their window's start, latency counted from the send when early)"
                )
                if let waited = open.streamWaitLine { lines.append("stream waits: \(waited)") }
            }
        }
        if snapshot.unscheduled > 0 {
            lines.append("not sent (the schedule or duration was over): \(grouped(snapshot.unscheduled))")
        }
        if snapshot.unsent > 0 {
            lines.append(
                "never sent (interrupted): \(grouped(snapshot.unsent)) tokens read ahead, neither sent nor failed"
            )
        }
        if let ranOut = report.tokensRanOut {
            let at = ranOut.at.seconds
            lines.append(
                "unscheduled: \(grouped(Int(ranOut.arrivals))) of \(grouped(Int(ranOut.planned))) arrivals had no token "
                    + "(the tokens ran out \(String(format: "%.2f", at)) s into the schedule): not sent, "
                    + "and no latency stands for them"
            )
        }
        if report.warmUp > .zero {
            lines.append(
                "warm-up: notifications started in the first \(report.warmUp) are left out of latency and throughput"
            )
        }
        if answered == 0 {
            lines.append("latency: no answers")
        } else if !measured {
            lines.append("latency: none measured after the warm-up")
        } else {
            lines.append(
                "latency ms: "
                    + SummaryDocument.Latency.percentiles.map {
                        "\($0.label) \(millisecondsText(latency(at: $0.percentile)))"
                    }
                    .joined(separator: "  ")
            )
        }
        lines.append(cpuLine)
        lines += harness.lines
        if let reconciliation {
            lines.append(
                reconciliation.agrees
                    ? "reconciled: the sink counted \(grouped(reconciliation.sinkRequests)) requests and every answer, and its digest matches (\(reconciliation.sinkDigest.text))"
                    : "NOT reconciled: " + reconciliation.differences.joined(separator: "; ")
            )
        }
        if report.cancelled { lines.append(report.abandoned.map { "gave up: \($0)" } ?? "stopped before the end") }
        if let scenario { lines.append("scenario: \(scenario)") }
        lines += delivery?.lines ?? []
        for reason in invalidReasons { lines.append("INVALID: \(reason)") }
        return lines.joined(separator: "\n")
    }
}

/// The files of a run folder, from its summary and histograms.
enum RunFiles {
    static func write(to directory: String, summary: SummaryDocument, latency: Histogram<UInt64>, hlog: String) throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        func file(_ name: String, _ data: Data) throws {
            try data.write(to: URL(fileURLWithPath: directory + "/" + name))
        }
        try file("summary.md", Data(MarkdownSummary(summary: summary).text.utf8))
        try file("report.html", Data(HTMLReport(summary: summary, latency: latency).html.utf8))
        var hgrm = ""
        latency.outputPercentileDistribution(to: &hgrm, outputValueUnitScalingRatio: 1000)
        try file("latency.hgrm", Data(hgrm.utf8))
        try file("latency.hlog", Data(hlog.utf8))
        // Last: a folder whose writing stopped part-way has no summary.json, and no reader
        // takes it for a finished one.
        try file("summary.json", try summary.data())
    }
}
