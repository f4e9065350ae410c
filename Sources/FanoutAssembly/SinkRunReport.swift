import FanoutAPNs
import FanoutFiles
import FanoutMeasure
import FanoutNotation
import FanoutPush
import FanoutReport
import FanoutResults
import Foundation
import Histogram

/// The folder `fanout sink --output DIR` writes when it stops: the same files as a run's
/// (`RunSummary.files`), with `kind` "sink" and `provider` in summary.json. The latency
/// histogram is the delivery-time histogram (each accepted notification's arrival since the
/// start mark), so that `gate`, `compare`, `export` and `merge` read it as they read a run's.
///
/// ```
///   summary.json    sent = requests received, accepted, rejected by reason, retries = requests
///                   for a token the sink had rejected; latency_ms = delivery time; elapsed =
///                   the fan-out time; throughput = accepted per second over it; provider {…}
///   latency.hgrm    the delivery-time histogram (percentile distribution)
///   latency.hlog    the same, a line per second since the mark (delivery times lie in their
///                   second, so each line is a slice of the histogram)
/// ```
public struct SinkRunReport: Sendable {
    /// What the sink measured, in plain figures (FanoutRun reads them from the sink).
    public struct Measurements: Sendable {
        public var listen: String
        public var tls: Bool
        public var tokenAuth: Bool
        /// When the sink started listening, and the start mark (`nil`: nothing arrived).
        public var started: Date
        public var mark: Date?
        public var markKind: String
        public var requests: Int
        public var accepted: Int
        public var rejected: [PushReason: Int]
        public var retries: Int
        public var digest: String
        /// Accepted arrivals and every request's arrival since the mark (µs).
        public var deliveries: Histogram<UInt64>
        public var arrivals: Histogram<UInt64>
        /// The first and last accepted arrival since the mark, ns (exact).
        public var firstAccepted: UInt64?
        public var lastAccepted: UInt64?
        public var streamLimit: Int
        public var initialStreams: Int
        public var connections: [SummaryDocument.Provider.Connection]
        public var connectionsNotListed: Int
        public var card: SummaryDocument.Provider.Card
        public var sinkOwn: SinkOwnDelays.Figures
        public var sinkCPUSeconds: Double?
        public var expected: SummaryDocument.Provider.Expected
        public var endedBy: String
        public var trigger: SummaryDocument.Provider.Trigger?
        public var planRTT: Duration
        /// The scenario in a line (`latency fixed:5ms`), for the configuration table.
        public var scenario: String
        /// The scenario file it was read from (`--scenario`), by path and content hash.
        public var scenarioFile: FileUse?
        /// With the device fleet on: what became of the accepted notifications.
        public var delivery: DeliverySummary?
        /// With broadcasts: what they reached, and a row per broadcast (`broadcasts.csv`).
        public var broadcast: BroadcastSummary?
        public var broadcastRows: [BroadcastRow] = []
        /// With the devices engaging (`--return-to`): the return wave.
        public var returnWave: ReturnWaveSummary?
        /// Fewer requests than this make the folder invalid (`--min-measured`).
        public var minMeasured = MinimumMeasured.default
        /// The service the sink mocked: an FCM sink measures no delay of its own
        /// (`sinkOwn` stays empty) and its card has FCM's rows.
        public var service = PushService.apns

        public init(
            listen: String,
            tls: Bool,
            tokenAuth: Bool,
            started: Date,
            mark: Date?,
            markKind: String,
            requests: Int,
            accepted: Int,
            rejected: [PushReason: Int],
            retries: Int,
            digest: String,
            deliveries: Histogram<UInt64>,
            arrivals: Histogram<UInt64>,
            firstAccepted: UInt64?,
            lastAccepted: UInt64?,
            streamLimit: Int,
            initialStreams: Int,
            connections: [SummaryDocument.Provider.Connection],
            connectionsNotListed: Int,
            card: SummaryDocument.Provider.Card,
            sinkOwn: SinkOwnDelays.Figures,
            sinkCPUSeconds: Double?,
            expected: SummaryDocument.Provider.Expected,
            endedBy: String,
            trigger: SummaryDocument.Provider.Trigger?,
            planRTT: Duration,
            scenario: String
        ) {
            self.listen = listen
            self.tls = tls
            self.tokenAuth = tokenAuth
            self.started = started
            self.mark = mark
            self.markKind = markKind
            self.requests = requests
            self.accepted = accepted
            self.rejected = rejected
            self.retries = retries
            self.digest = digest
            self.deliveries = deliveries
            self.arrivals = arrivals
            self.firstAccepted = firstAccepted
            self.lastAccepted = lastAccepted
            self.streamLimit = streamLimit
            self.initialStreams = initialStreams
            self.connections = connections
            self.connectionsNotListed = connectionsNotListed
            self.card = card
            self.sinkOwn = sinkOwn
            self.sinkCPUSeconds = sinkCPUSeconds
            self.expected = expected
            self.endedBy = endedBy
            self.trigger = trigger
            self.planRTT = planRTT
            self.scenario = scenario
        }
    }

    public var measurements: Measurements
    public var environment = RunEnvironment.current

    public init(_ measurements: Measurements) {
        self.measurements = measurements
    }

    /// The fan-out time: the mark to the last accepted arrival (0 before any).
    public var fanoutSeconds: Double { Double(measurements.lastAccepted ?? 0) / 1e9 }

    /// Why the sink's folder cannot stand for the run it expected: no request arrived, fewer
    /// than `--min-measured`, less than expected before it stopped, or the trigger failed.
    public var invalidReasons: [InvalidReason] {
        var reasons: [InvalidReason] = []
        if measurements.requests == 0 {
            reasons.append(.noRequests)
        } else if measurements.requests < measurements.minMeasured {
            reasons.append(
                .tooFewMeasured(measured: measurements.requests, minimum: measurements.minMeasured, unit: .requests)
            )
        }
        let expected = measurements.expected
        if !expected.reached {
            if let notifications = expected.notifications {
                reasons.append(
                    .expectedNotReached(
                        unit: .notifications,
                        reached: measurements.accepted,
                        expected: notifications,
                        endedBy: measurements.endedBy
                    )
                )
            }
            if let tokens = expected.tokens {
                reasons.append(
                    .expectedNotReached(
                        unit: .tokens,
                        reached: expected.tokensSeen ?? 0,
                        expected: tokens,
                        endedBy: measurements.endedBy
                    )
                )
            }
        }
        if let trigger = measurements.trigger, trigger.exitStatus != 0 {
            reasons.append(.triggerFailed(exitStatus: trigger.exitStatus, output: trigger.output))
        }
        return reasons
    }

    /// Requests and accepted notifications per second since the mark, from the histograms.
    var perSecond: [SummaryDocument.Provider.Second] {
        let received = Self.countsBySecond(measurements.arrivals)
        let accepted = Self.countsBySecond(measurements.deliveries)
        return (0..<max(received.count, accepted.count)).map { second in
            SummaryDocument.Provider.Second(
                second: second,
                received: second < received.count ? received[second] : 0,
                accepted: second < accepted.count ? accepted[second] : 0
            )
        }
    }

    /// A histogram of µs since the mark, split into the seconds its values fall in.
    static func slices(_ histogram: Histogram<UInt64>) -> [Histogram<UInt64>] {
        guard histogram.totalCount > 0 else { return [] }
        var slices: [Histogram<UInt64>] = []
        for value in histogram.recordedValues() {
            let second = Int(value.value / 1_000_000)
            while slices.count <= second { slices.append(makeMicrosecondHistogram()) }
            _ = slices[second].record(max(1, value.value), count: value.count)
        }
        return slices
    }

    static func countsBySecond(_ histogram: Histogram<UInt64>) -> [Int] {
        guard histogram.totalCount > 0 else { return [] }
        var counts: [Int] = []
        for value in histogram.recordedValues() {
            let second = Int(value.value / 1_000_000)
            while counts.count <= second { counts.append(0) }
            counts[second] += Int(value.count)
        }
        return counts
    }

    public var provider: SummaryDocument.Provider {
        let m = measurements
        let deliveries = m.deliveries
        let fanout = fanoutSeconds
        let mark = m.mark.map { TimeNotation.format($0) }
        return SummaryDocument.Provider(
            start: .init(mark: m.markKind, at: mark, epochSeconds: m.mark?.timeIntervalSince1970),
            endedBy: m.endedBy,
            expected: m.expected,
            delivery: .init(
                count: Int(deliveries.totalCount),
                firstMs: Double(m.firstAccepted ?? 0) / 1e6,
                p50Ms: deliveries.milliseconds(at: 50),
                p90Ms: deliveries.milliseconds(at: 90),
                p99Ms: deliveries.milliseconds(at: 99),
                lastMs: Double(m.lastAccepted ?? 0) / 1e6,
                fanoutSeconds: fanout,
                acceptedPerSecond: fanout > 0 ? Double(m.accepted) / fanout : 0
            ),
            perSecond: perSecond,
            streams: .init(
                limit: m.streamLimit,
                initial: m.initialStreams,
                connections: m.connections,
                fanoutSeconds: fanout
            ),
            connections: m.connections,
            connectionsNotListed: m.connectionsNotListed,
            card: m.card,
            capacity: .init(rttMs: m.planRTT.milliseconds, connections: m.connections),
            sinkOwn: m.sinkOwn,
            trigger: m.trigger
        )
    }

    /// `summary.json`.
    public var document: SummaryDocument {
        let m = measurements
        let deliveries = m.deliveries
        let fanout = fanoutSeconds
        let invalid = invalidReasons
        var document = SummaryDocument(
            schemaVersion: RunSummary.schemaVersion,
            configuration: configurationDocument,
            environment: environment,
            started: m.started,
            endpoint: (m.tls ? "https://" : "http://") + m.listen,
            connections: m.connections.count + m.connectionsNotListed,
            streamsPerConnection: m.streamLimit,
            elapsedSeconds: fanout,
            sent: m.requests,
            accepted: m.accepted,
            rejected: m.rejected,
            failed: [:],
            skipped: [:],
            requests: m.requests,
            retries: m.retries,
            throughputPerSecond: fanout > 0 ? Double(m.accepted) / fanout : 0,
            latency: SummaryDocument.Latency(milliseconds: deliveries.milliseconds(at:)),
            digest: m.digest,
            cancelled: !m.expected.reached,
            reconciled: nil,
            cpu: SummaryDocument.CPU(sender: nil, sink: m.sinkCPUSeconds, sent: m.requests),
            harness: nil,
            start: .init(
                scheduled: nil,
                firstSend: m.mark.map { TimeNotation.format($0) },
                host: environment.hostname
            ),
            shard: nil,
            model: .sink,
            schedule: nil,
            generatorLag: nil,
            warmUpSeconds: 0,
            unscheduled: 0,
            unscheduledReasons: nil,
            valid: invalid.isEmpty,
            invalidReasons: invalid,
            intervals: intervalDocuments,
            tokens: nil,
            abandoned: m.expected.reached ? nil : "stopped by \(m.endedBy) before what was expected arrived",
            sink: nil,
            kind: .sink,
            provider: provider,
            delivery: m.delivery,
            broadcast: m.broadcast
        )
        document.returnWave = m.returnWave
        document.command = Invocation.command
        return document
    }

    /// What the sink was set to: its address, streams and the notifications it expected; the
    /// sender's settings a sink has no part in are empty.
    var configurationDocument: SummaryDocument.Configuration {
        let m = measurements
        return SummaryDocument.Configuration(
            endpoint: m.listen,
            connections: m.connections.count + m.connectionsNotListed,
            streamsPerConnection: m.streamLimit,
            tokens: m.expected.tokens.map { "expect-tokens: \($0)" }
                ?? m.expected.notifications.map { "expect: \($0)" } ?? "any",
            topic: "",
            // Which service's sink: what its devices' outcomes are named after (`service`).
            pushType: m.service == .fcm ? "fcm" : "",
            priority: nil,
            expiration: nil,
            collapseID: nil,
            tokenAuth: m.tokenAuth,
            streamTimeoutSeconds: 0,
            maxAttempts: 1,
            model: .sink,
            schedule: m.scenario.isEmpty ? nil : m.scenario,
            durationSeconds: nil,
            warmUpSeconds: 0,
            maxLagSeconds: 0,
            scenario: m.scenarioFile
        )
    }

    /// The deliveries second by second.
    var intervalDocuments: [SummaryDocument.Interval] {
        Self.slices(measurements.deliveries).enumerated().map { second, slice in
            SummaryDocument.Interval(
                second: second,
                completed: Int(slice.totalCount),
                latencyCount: Int(slice.totalCount),
                p50: slice.milliseconds(at: 50),
                p90: slice.milliseconds(at: 90),
                p99: slice.milliseconds(at: 99),
                max: slice.milliseconds(at: 100),
                maxLag: 0
            )
        }
    }

    /// What a person reads when the sink stops: the fan-out, its card and capacity, the sink's
    /// own delays, the trigger, then why the folder is invalid if it is.
    public var summaryText: String {
        let provider = provider
        func ms(_ value: Double) -> String { String(format: value < 10 ? "%.2f" : "%.1f", value) }
        // Nothing arrived: no fan-out, no delivery time and no card to pass — said so, not as zeros.
        var lines =
            measurements.requests > 0
            ? measuredLines(provider, ms: ms)
            : ["fan-out: nothing arrived; ended by \(provider.endedBy)", "card: not judged: no request arrived"]
        if measurements.service == .apns {
            lines.append(
                "the sink's own lateness: p99 \(ms(provider.sinkOwn.lateness.p99)) ms, max \(ms(provider.sinkOwn.lateness.max)) ms (not the provider's)"
            )
        }
        if let trigger = provider.trigger {
            lines.append(
                "trigger: \(trigger.command) — " + (trigger.exitStatus.map { "exit \($0)" } ?? "stopped by the sink")
                    + ", output in \(trigger.output)"
            )
        }
        lines += measurements.delivery?.lines(for: measurements.service) ?? []
        lines += measurements.broadcast?.lines ?? []
        lines += measurements.returnWave?.lines ?? []
        for reason in invalidReasons { lines.append("INVALID: \(reason)") }
        return lines.joined(separator: "\n")
    }

    /// The fan-out, the delivery time, the streams, the card and the capacity of a sink that
    /// received requests.
    private func measuredLines(_ provider: SummaryDocument.Provider, ms: (Double) -> String) -> [String] {
        let delivery = provider.delivery
        var lines = [
            "fan-out: \(grouped(measurements.accepted)) accepted in \(String(format: "%.3f", delivery.fanoutSeconds)) s from the \(provider.start.mark == "trigger" ? "trigger" : "first request") (\(grouped(Int(delivery.acceptedPerSecond.rounded())))/s); ended by \(provider.endedBy)",
            "delivery time ms: first \(ms(delivery.firstMs))  p50 \(ms(delivery.p50Ms))  p90 \(ms(delivery.p90Ms))  p99 \(ms(delivery.p99Ms))  last \(ms(delivery.lastMs))",
            "streams: \(provider.streams.text) a connection on average (peak \(provider.streams.peak)); \(String(format: "%.1f", provider.streams.meanInFlight)) in flight over \(provider.connections.count + provider.connectionsNotListed) connections",
        ]
        if provider.maybeUnread > 0 {
            let broken = provider.connections.filter { ($0.maybeUnread ?? 0) > 0 }.map { String($0.id) }
            lines.append(
                "answered, maybe unread: \(grouped(provider.maybeUnread)) answers the provider never acknowledged reading before its connection broke (connection \(broken.joined(separator: ", "))): the sink's counts are ahead of the provider's"
            )
        }
        let card = provider.card
        if card.passed {
            lines.append("card: passed, no violation of \(card.checks.count) checks")
        } else {
            let failed = card.checks.filter { !$0.passed }.map { "\($0.rule.rawValue) \(grouped($0.count))" }
            lines.append("card: FAILED — " + failed.joined(separator: ", "))
        }
        if card.forgotten > 0 {
            lines.append(
                "card: \(grouped(card.forgotten)) rejected tokens not remembered (table full): their retries went unchecked"
            )
        }
        lines.append("capacity: " + provider.capacity.text)
        return lines
    }

    /// The per-second lines of `latency.hlog`.
    var hlog: String {
        let start = measurements.mark?.timeIntervalSince1970 ?? measurements.started.timeIntervalSince1970
        let length = fanoutSeconds
        let entries = Self.slices(measurements.deliveries).enumerated().map { second, slice in
            IntervalLog.Entry(
                start: Double(second),
                length: max(0, min(length, Double(second + 1)) - Double(second)),
                histogram: PackedHistogram(slice)
            )
        }
        return IntervalLog(entries: entries, start: start).text
    }

    /// Writes the folder's files; summary.json last, so that a folder cut short is never taken
    /// for a finished one.
    public func write(to directory: String) throws {
        try RunFiles.write(to: directory, summary: document, latency: measurements.deliveries, hlog: hlog)
        if measurements.broadcast != nil {
            let text = ([BroadcastRow.header] + measurements.broadcastRows.map(\.line)).joined(separator: "\n") + "\n"
            try text.write(toFile: directory + "/" + BroadcastRow.fileName, atomically: true, encoding: .utf8)
        }
    }
}
