import FanoutAPNs
import FanoutPush
import FanoutResults
import Foundation

/// A metric of a finished run, as gates and comparisons name it.
public enum RunMetric: String, Sendable, CaseIterable {
    case p50, p90, p99
    case p99_9 = "p99.9"
    case p99_99 = "p99.99"
    case max
    /// Notifications with a final outcome per second (after the warm-up).
    case throughput
    /// Rejected plus failed: a share of `sent` when written with `%`, else a count.
    case errors
    case failed, rejected, sent, accepted
    /// The open model's worst generator lag.
    case lag
    /// The harness's own delay at p99 (`summary.json`'s `harness.own_p99_ms`; 0 before schema 5).
    case harness
    /// A sink's folder (`fanout sink --output`): the fan-out time, the mark to the last
    /// accepted arrival.
    case fanout
    /// A sink's folder: answers accepted that the provider never acknowledged reading before
    /// its connection broke (`answered_maybe_unread`).
    case unread
    /// A sink's folder: the conformance card's violations, all of them and rule by rule.
    case violations
    case permanentRetried = "violations.permanent-retried"
    case fastRetry = "violations.fast-retry"
    case streamLimit = "violations.stream-limit"
    case afterGoAway = "violations.after-goaway"
    case churn = "violations.churn"
    case providerToken = "violations.provider-token"
    case apnsIDReused = "violations.apns-id-reused"
    case payloadNearLimit = "violations.payload-near-limit"
    /// The device fleet's rules (on the card of a sink with devices).
    case expirationZeroOffline = "violations.expiration-zero-offline"
    case staleDelivery = "violations.stale-delivery"
    case backgroundOverBudget = "violations.background-over-budget"
    /// The broadcast channels' rules (on the card of a sink that saw channel requests).
    case channelsLeftOpen = "violations.channels-left-open"
    case channelsNearLimit = "violations.channels-near-limit"
    case deletedChannelRetried = "violations.deleted-channel-retried"
    case liveActivityOverBudget = "violations.liveactivity-over-budget"
    case timestampBackwards = "violations.timestamp-backwards"
    /// FCM's rules (on an FCM sink's card).
    case quotaIgnored = "violations.quota-ignored"
    case clientErrors = "violations.client-errors"
    case duplicate = "violations.duplicate"
    case accessToken = "violations.access-token"
    case bearer = "violations.bearer"
    /// With the sink's device fleet (`summary.json`'s `delivery`): notifications delivered to
    /// their devices, at once or from storage (a count, or with `%` a share of those received
    /// by APNs); how long after the fan-out's first request 50, 90, 99% of them, and the last,
    /// had reached their device; and the discarded and forgotten, likewise.
    case delivered
    case deliveredP50 = "delivered.p50"
    case deliveredP90 = "delivered.p90"
    case deliveredP99 = "delivered.p99"
    case deliveredLast = "delivered.last"
    case discardedExpired = "discarded.expired"
    case discardedUnregistered = "discarded.unregistered"
    case discardedDisabled = "discarded.disabled"
    case forgotten
    /// With broadcasts (`summary.json`'s `broadcast`; a sink's folder has the devices and
    /// times): broadcast requests accepted, device deliveries at once, their delivery time at
    /// p99 and the last (ms from each broadcast's acceptance), each broadcast's time to its last
    /// subscriber (at once or from storage) at p99 over the broadcasts, the deliveries from
    /// storage and their p99, and the channels left open.
    case broadcasts = "broadcast.accepted"
    case broadcastDelivered = "broadcast.delivered"
    case broadcastP99 = "broadcast.p99"
    case broadcastLast = "broadcast.last"
    case broadcastLastP99 = "broadcast.last.p99"
    case broadcastFromStorage = "broadcast.from_storage"
    case broadcastStorageP99 = "broadcast.storage.p99"
    case broadcastOpen = "broadcast.open"
    /// With the return wave (`summary.json`'s `return_wave`, `--return-to`): requests offered to
    /// the backend and answered; errors (4xx/5xx answers and requests without one: a count, or
    /// with `%` a share of those offered); the latency from the due time at p50, p99 and the
    /// longest (ms); the busiest second's offered rate (/s).
    case returnOffered = "return.offered"
    case returnAnswered = "return.answered"
    case returnErrors = "return.errors"
    case returnP50 = "return.p50"
    case returnP99 = "return.p99"
    case returnMax = "return.max"
    case returnPeak = "return.peak"

    /// The card's rule a metric counts, for `violations.RULE`.
    public var rule: ProviderRule? {
        guard rawValue.hasPrefix("violations.") else { return nil }
        return ProviderRule(rawValue: String(rawValue.dropFirst("violations.".count)))
    }

    /// Whether only a sink's folder has it.
    public var needsSinkFolder: Bool { self == .fanout || self == .unread || self == .violations || rule != nil }

    /// Whether only a folder with the device fleet's `delivery` has it.
    public var needsDelivery: Bool {
        switch self {
        case .delivered, .deliveredP50, .deliveredP90, .deliveredP99, .deliveredLast, .discardedExpired,
            .discardedUnregistered, .discardedDisabled, .forgotten:
            true
        default: false
        }
    }

    /// Whether only a folder with a `broadcast` section has it.
    public var needsBroadcast: Bool { rawValue.hasPrefix("broadcast.") }

    /// Whether only a folder with a `return_wave` section has it.
    public var needsReturnWave: Bool { rawValue.hasPrefix("return.") }

    /// Whether a limit with `%` reads it as a share: `errors` of `sent`, the fleet's counts of
    /// the notifications received by APNs.
    public var takesShare: Bool { self == .errors || self == .returnErrors || (needsDelivery && !isTime) }

    /// Latencies, lag and the harness's delay are milliseconds; throughput per second; the rest counts.
    public var isTime: Bool {
        switch self {
        case .p50, .p90, .p99, .p99_9, .p99_99, .max, .lag, .harness, .fanout: true
        case .deliveredP50, .deliveredP90, .deliveredP99, .deliveredLast: true
        case .broadcastP99, .broadcastLast, .broadcastLastP99, .broadcastStorageP99: true
        case .returnP50, .returnP99, .returnMax: true
        default: false
        }
    }

    /// Whether a larger value is better (throughput) rather than worse (latency, errors).
    public var higherIsBetter: Bool {
        [.throughput, .sent, .accepted, .delivered, .broadcasts, .broadcastDelivered, .returnAnswered].contains(self)
    }

    public var unit: String {
        if isTime { return "ms" }
        return self == .throughput || self == .returnPeak ? "/s" : ""
    }
}

/// A run folder read back: its `summary.json`, its metrics, and whether it can be trusted.
public struct RunRecord: Sendable {
    public var directory: String
    /// Metric values (milliseconds for times, per second for throughput).
    public var metrics: [RunMetric: Double]
    /// `errors` as a share of `sent` (0...1).
    public var errorShare: Double
    /// The fleet's counts as shares of the notifications received by APNs (0...1), when the
    /// folder has a `delivery`.
    public var shares: [RunMetric: Double] = [:]
    public var invalidReasons: [InvalidReason]
    public var valid: Bool { invalidReasons.isEmpty }
    /// When it started (summary.json's `started`): no two runs of a set start at one instant.
    public var started: Date? = nil
    /// What a partial merge (`fanout merge --allow-partial`) lacks; empty for a whole run.
    public var partialReasons: [String] = []
    /// Why the run is harness-bound (`harness.bound`), empty when it is not.
    public var harnessBound: [String] = []
    /// What was asked for, to tell like runs from unlike ones.
    public var configuration: SummaryDocument.Configuration? = nil
    /// Counts by reason, for `rejected.REASON` and `failed.CAUSE`.
    public var rejectedByReason: [PushReason: Int] = [:]
    public var failedByCause: [FailureCause: Int] = [:]
    /// The warm-up the run's figures leave out, which its windows leave out too.
    public var warmUpSeconds: Double = 0
    /// The worst windows a gate asked for (`window(10s).p99`), read from latency.hlog.
    public var windows: [GateMetric: Double] = [:]
    /// The `--abort-on` condition that stopped the run: a gate fails it, naming the abort.
    public var aborted: SummaryDocument.Aborted? = nil

    /// `metric` as a share: `errors` of `sent`, a fleet's count of those received by APNs (0
    /// when the folder has none).
    public func share(_ metric: RunMetric) -> Double { metric == .errors ? errorShare : shares[metric] ?? 0 }

    /// Reads `directory/summary.json`.
    /// The device fleet's metrics into `metrics`; returns its counts as shares of those
    /// received by APNs.
    private static func deliveryMetrics(
        _ delivery: DeliverySummary,
        into metrics: inout [RunMetric: Double]
    ) -> [RunMetric: Double] {
        var shares: [RunMetric: Double] = [:]
        for (metric, count) in [
            (RunMetric.delivered, delivery.allDelivered), (.discardedExpired, delivery.discardedExpired),
            (.discardedUnregistered, delivery.discardedUnregistered + delivery.discardedUnregisteredFromStorage),
            (.discardedDisabled, delivery.discardedDisabled + delivery.discardedDisabledFromStorage),
            (.forgotten, delivery.forgotten),
        ] {
            metrics[metric] = Double(count)
            shares[metric] = delivery.share(count)
        }
        // Nothing delivered: no time to reach anyone, and such a threshold is not measured.
        if let reached = delivery.reachedMs {
            metrics[.deliveredP50] = reached.p50
            metrics[.deliveredP90] = reached.p90
            metrics[.deliveredP99] = reached.p99
            metrics[.deliveredLast] = reached.max
        }
        return shares
    }

    public static func load(_ directory: String) throws(ResultsError) -> RunRecord {
        let summary = try SummaryDocument.read(directory + "/summary.json")
        var metrics: [RunMetric: Double] = [:]
        // A run that measured no latency or rate has no such metric (and is invalid).
        if let latency = summary.latency {
            for (metric, percentile) in zip(
                [RunMetric.p50, .p90, .p99, .p99_9, .p99_99, .max],
                SummaryDocument.Latency.percentiles
            ) {
                metrics[metric] = latency[keyPath: percentile.value]
            }
        }
        metrics[.throughput] = summary.throughputPerSecond
        metrics[.sent] = Double(summary.sent)
        metrics[.accepted] = Double(summary.accepted)
        metrics[.rejected] = Double(summary.rejected.values.reduce(0, +))
        metrics[.failed] = Double(summary.failed.values.reduce(0, +))
        metrics[.errors] = metrics[.rejected]! + metrics[.failed]!
        metrics[.lag] = summary.generatorLag?.max ?? 0
        let harness = HarnessRecord(summary: summary)
        metrics[.harness] = harness?.ownP99 ?? 0
        if let provider = summary.provider {
            // Nothing accepted: no fan-out time, and such a threshold is not measured.
            if provider.delivery.count > 0 { metrics[.fanout] = provider.delivery.fanoutSeconds * 1000 }
            metrics[.violations] = Double(provider.card.violations)
            metrics[.unread] = Double(provider.maybeUnread)
            for metric in RunMetric.allCases {
                if let rule = metric.rule { metrics[metric] = Double(provider.card.count(rule)) }
            }
        }
        var shares = summary.delivery.map { Self.deliveryMetrics($0, into: &metrics) } ?? [:]
        if let wave = summary.returnWave {
            metrics[.returnOffered] = Double(wave.offered)
            metrics[.returnAnswered] = Double(wave.answered)
            metrics[.returnErrors] = Double(wave.errors)
            shares[.returnErrors] = wave.offered > 0 ? Double(wave.errors) / Double(wave.offered) : 0
            metrics[.returnPeak] = Double(wave.peak?.offered ?? 0)
            // Nothing answered: no latency, and such a threshold is not measured.
            if wave.latency.count > 0 {
                metrics[.returnP50] = Double(wave.latency.p50Micros) / 1000
                metrics[.returnP99] = Double(wave.latency.p99Micros) / 1000
                metrics[.returnMax] = Double(wave.latency.maxMicros) / 1000
            }
        }
        if let broadcast = summary.broadcast {
            metrics[.broadcasts] = Double(broadcast.accepted)
            if let devices = broadcast.devices {
                metrics[.broadcastDelivered] = Double(devices.delivered)
                metrics[.broadcastFromStorage] = Double(devices.fromStorage)
            }
            if let storage = broadcast.storageMs { metrics[.broadcastStorageP99] = storage.p99 }
            if let open = broadcast.channels.open { metrics[.broadcastOpen] = Double(open) }
            if let times = broadcast.deliveryMs {
                metrics[.broadcastP99] = times.p99
                metrics[.broadcastLast] = times.last
            }
            if let last = broadcast.lastSubscriberMs { metrics[.broadcastLastP99] = last.p99 }
        }
        // What the folder's histogram says of the percentiles, among the summary's own reasons.
        var fromFiles: [InvalidReason] = []
        if let latency = summary.latency, let file = LatencyFile.read(in: directory) {
            fromFiles = file.disagreements(with: latency)
        } else if summary.latency != nil, !summary.isSink,
            FileManager.default.fileExists(atPath: directory + "/latency.hlog")
        {
            // A run's folder (and a merge's) writes both; a broadcast sink's its hlog alone.
            fromFiles = [.latencyFileMissing]
        }
        let reasons = summary.judgedInvalidity(fromFiles: fromFiles)
        let sent = metrics[.sent]!
        var record = RunRecord(
            directory: directory,
            metrics: metrics,
            errorShare: sent > 0 ? metrics[.errors]! / sent : 0,
            shares: shares,
            invalidReasons: reasons,
            partialReasons: summary.partial == true ? summary.partialReasons ?? [] : [],
            harnessBound: harness.map { $0.bound ? [$0.headline] : [] } ?? [],
            configuration: summary.configuration,
            rejectedByReason: summary.rejected,
            failedByCause: summary.failed,
            warmUpSeconds: summary.warmUpSeconds,
            windows: [:],
            aborted: summary.aborted
        )
        record.started = summary.started
        return record
    }
}

/// One run, or the repeats of one scenario (`--repeat N` writes `repeat-1/` … `repeat-N/` under
/// the run folder): gates and comparisons use the median, and the spread tells the noise.
public struct RunSet: Sendable {
    public var directory: String
    public var runs: [RunRecord]
    /// Why the set as a whole cannot be trusted: repeats cut short (`RepeatManifest`).
    public var setReasons: [InvalidReason] = []

    /// A run folder (with `summary.json`) or a folder of repeats (`repeat-*/summary.json`, and
    /// `repeats.json` saying how many were asked: without it, the set is invalid). A folder
    /// holding both is refused: one of them is another run's.
    public static func load(_ directory: String) throws(ResultsError) -> RunSet {
        let manager = FileManager.default
        let names = (try? manager.contentsOfDirectory(atPath: directory)) ?? []
        let repeats = names.filter { $0.hasPrefix("repeat-") }.sorted {
            (Int($0.dropFirst(7)) ?? 0) < (Int($1.dropFirst(7)) ?? 0)
        }
        let manifest = try RepeatManifest.read(in: directory)
        if manager.fileExists(atPath: directory + "/summary.json") {
            guard repeats.isEmpty && manifest == nil else {
                throw ResultsError(
                    .inconsistent,
                    "\(directory) holds both a summary.json and repeats (repeat-*/ or repeats.json): the results of "
                        + "two runs, and which is which cannot be told; give the folder of one"
                )
            }
            return RunSet(directory: directory, runs: [try RunRecord.load(directory)])
        }
        guard !repeats.isEmpty || manifest != nil else {
            throw ResultsError(
                .notADocument,
                "\(directory) holds no summary.json and no repeat-*/ folders: not a Fanout run folder"
            )
        }
        // A repeat-N/ past what the manifest asked is another set's (a folder copied in, an
        // earlier set's left over): its run would move the median unseen.
        if let manifest {
            let beyond = repeats.filter { (Int($0.dropFirst(7)) ?? 0) > manifest.asked || Int($0.dropFirst(7)) == nil }
            guard beyond.isEmpty else {
                throw ResultsError(
                    .inconsistent,
                    "\(directory) holds \(beyond.map { $0 + "/" }.joined(separator: ", ")) beyond the \(manifest.asked) "
                        + "repeats its repeats.json asked: another set's results, and which is which cannot be told"
                )
            }
        }
        var runs: [RunRecord] = []
        for name in repeats {
            // A set that keeps a manifest says itself what is missing: a repeat cut short before
            // its summary.json (a killed process) is one of those.
            if manifest != nil && !manager.fileExists(atPath: directory + "/" + name + "/summary.json") { continue }
            runs.append(try RunRecord.load(directory + "/" + name))
        }
        var setReasons =
            manifest?.invalidReasons(foldersFound: runs.count) ?? [.repeatsWithoutManifest(found: runs.count)]
        setReasons += Self.sameRunTwice(runs)
        guard !runs.isEmpty else {
            // Interrupted before any repeat wrote its folder: nothing to measure, and said so.
            throw ResultsError(
                .inconsistent,
                "\(directory): \(setReasons.first.map(\.description) ?? "no repeat finished"); no repeat-*/ folder holds a run"
            )
        }
        return RunSet(directory: directory, runs: runs, setReasons: setReasons)
    }

    /// Repeats that are one run under two names (issue 61, review: a repeat-3 linked to
    /// repeat-1, or copied from it, counted as a third measurement and narrowed the noise to
    /// nothing): the same folder once links are followed, or the same start to the
    /// millisecond.
    static func sameRunTwice(_ runs: [RunRecord]) -> [InvalidReason] {
        var seen: [String: String] = [:]
        var reasons: [InvalidReason] = []
        for run in runs {
            let place = URL(fileURLWithPath: run.directory).resolvingSymlinksInPath().path
            let start = run.started.map { String(Int(($0.timeIntervalSince1970 * 1000).rounded())) }
            for key in ["folder " + place, start.map { "start " + $0 }].compactMap({ $0 }) {
                if let first = seen[key] {
                    reasons.append(.sameRunTwice(folders: [first, run.directory]))
                    break
                }
                seen[key] = run.directory
            }
        }
        return reasons
    }

    public var invalidReasons: [InvalidReason] {
        setReasons
            + runs.flatMap { run in
                run.invalidReasons.map { runs.count > 1 ? .inFolder(directory: run.directory, reason: $0) : $0 }
            }
    }

    public var valid: Bool { invalidReasons.isEmpty }

    /// Whether every run has `metric`: a run that measured nothing has no latency or rate.
    public func measures(_ metric: RunMetric) -> Bool { runs.allSatisfy { $0.metrics[metric] != nil } }

    /// The median over the repeats (the mean of the middle two for an even count).
    public func median(_ metric: RunMetric, share: Bool = false) -> Double {
        Self.median(runs.map { share ? $0.share(metric) : $0.metrics[metric] ?? 0 })
    }

    /// The smallest and largest value over the repeats.
    public func range(_ metric: RunMetric, share: Bool = false) -> ClosedRange<Double> {
        let values = runs.map { share ? $0.share(metric) : $0.metrics[metric] ?? 0 }
        return values.min()!...values.max()!
    }

    /// The repeats' spread around their median, relative to it (0.08: ±8%); `nil` for one run.
    public func noise(_ metric: RunMetric) -> Double? {
        guard runs.count > 1 else { return nil }
        let median = median(metric)
        guard median != 0 else { return 0 }
        return runs.map { abs(($0.metrics[metric] ?? 0) - median) / abs(median) }.max()
    }

    static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return 0 }
        let middle = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
    }
}

/// A results folder that cannot be read, said with its path.
extension RunSet {
    /// The medians of the repeats with their range and noise, for a person:
    ///
    /// ```
    ///   5 repeats in results/run-…: median (min … max, noise ±%)
    ///     throughput   151,204/s  (143,310 … 163,650, ±8.2%)
    ///     p99          68.7 ms    (61.0 … 122.8, ±78.7%)
    /// ```
    public var spreadText: String {
        var lines = ["\(runs.count) repeats in \(directory): median (min … max, noise ±%)"]
        for metric in [RunMetric.throughput, .p50, .p90, .p99, .p99_9, .max] {
            let range = range(metric)
            let noise = noise(metric).map { String(format: "±%.1f%%", $0 * 100) } ?? "-"
            let unit = metric.unit
            func format(_ value: Double) -> String {
                metric == .throughput
                    ? grouped(Int(value.rounded()))
                    : String(format: value < 10 ? "%.2f" : "%.1f", value)
            }
            let name = metric.rawValue.padding(toLength: 12, withPad: " ", startingAt: 0)
            lines.append(
                "  \(name) \(format(median(metric)))\(unit == "/s" ? "/s" : " " + unit)  (\(format(range.lowerBound)) … \(format(range.upperBound)), \(noise))"
            )
        }
        if !valid { lines += invalidReasons.map { "  INVALID \($0)" } }
        return lines.joined(separator: "\n")
    }
}

extension SummaryDocument {
    /// Why the run cannot be trusted, as `fanout gate` and the report's verdict both judge it:
    /// its own reasons; what its figures contradict, whatever the flags say (a file edited by
    /// hand); `fromFiles`, what the folder's other files say (`RunRecord`); a stop short of the
    /// end no signal explains (an aborted run fails, it is not invalid for having stopped); a
    /// disagreement with the sink. Each once, in that order.
    func judgedInvalidity(fromFiles: [InvalidReason] = []) -> [InvalidReason] {
        var reasons = invalidity
        for reason in contradictions + fromFiles where !reasons.contains(reason) { reasons.append(reason) }
        if cancelled && aborted == nil && !reasons.contains(where: \.isInterruption) {
            reasons.append(.stoppedBeforeTheEnd)
        }
        if reconciled == false, !reasons.contains(.senderAndSinkDisagree) { reasons.append(.senderAndSinkDisagree) }
        return reasons
    }
}
