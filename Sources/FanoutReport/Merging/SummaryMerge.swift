import FanoutAPNs
import FanoutMeasure
import FanoutNotation
import FanoutPush
import FanoutResults
import Foundation
import Histogram

/// The shards' `summary.json` documents as one (`fanout merge`).
///
/// Every field of the document says how it merges in `merge(_:into:)`: a switch over
/// `SummaryDocument.CodingKeys` without a `default`, run for each key. A field added to the
/// document tomorrow needs a coding key to be written at all, and that key does not compile here
/// until it says how shards combine — so no field silently keeps the first shard's value
/// (scripts/lib/merge-fields.sh proves it on a scratch copy, in CI). The sections built anew
/// (`Sink`, `Tokens`, `GeneratorLag`, …) are built by their memberwise initialisers, which a
/// new required field breaks too; a new optional one starts `nil` — unknown, never a shard's.
struct SummaryMerge {
    let shards: [RunMerge.Shard]
    let summaries: [SummaryDocument]
    /// Each second's histogram summed over the shards, and all of them summed.
    let entries: [IntervalLog.Entry]
    let latency: Histogram<UInt64>
    let refusals: [InvalidReason]
    /// What a partial merge lacks; empty unless `allowPartial`.
    let gaps: [InvalidReason]
    let allowPartial: Bool
    /// How far apart the shards' first sends lay, in seconds.
    let skew: Double?
    /// Every shard a sink's folder: what they measured of the provider, as one.
    let provider: SummaryDocument.Provider?

    init(
        shards: [RunMerge.Shard],
        entries: [IntervalLog.Entry],
        latency: Histogram<UInt64>,
        refusals: [InvalidReason],
        gaps: [InvalidReason],
        allowPartial: Bool,
        skew: Double?
    ) {
        self.shards = shards
        self.summaries = shards.map(\.summary)
        self.entries = entries
        self.latency = latency
        self.refusals = refusals
        self.gaps = gaps
        self.allowPartial = allowPartial
        self.skew = skew
        let providers = summaries.compactMap(\.provider)
        if providers.count == summaries.count {
            var provider = SummaryDocument.Provider.merged(providers, accepted: summaries.map(\.accepted).reduce(0, +))
            provider.delivery.p50Ms = latency.milliseconds(at: 50)
            provider.delivery.p90Ms = latency.milliseconds(at: 90)
            provider.delivery.p99Ms = latency.milliseconds(at: 99)
            self.provider = provider
        } else {
            self.provider = nil
        }
    }

    var document: SummaryDocument {
        var merged = summaries[0]
        for key in SummaryDocument.CodingKeys.allCases { merge(key, into: &merged) }
        return merged
    }

    private func merge(_ key: SummaryDocument.CodingKeys, into merged: inout SummaryDocument) {
        switch key {
        // Alike on every shard (`RunMerge.check` compared their configuration), or each shard's
        // kept in `shard_environments`: the first shard's stands.
        case .streamsPerConnection, .model, .schedule, .warmUpSeconds, .environment: break
        case .schemaVersion: merged.schemaVersion = SummaryDocument.schemaVersion
        case .configuration: merged.configuration = configuration
        case .started:
            merged.started = summaries.map(\.started).min()!  // the earliest
        case .endpoint:
            merged.endpoint =
                provider == nil ? summaries[0].endpoint : summaries.map(\.endpoint).joined(separator: ", ")
        case .connections:
            merged.connections = provider == nil ? summaries[0].connections : sum(\.connections)
        case .elapsedSeconds:
            merged.elapsedSeconds = provider?.delivery.fanoutSeconds ?? summaries.map(\.elapsedSeconds).max() ?? 0
        case .sent: merged.sent = sum(\.sent)
        case .accepted: merged.accepted = sum(\.accepted)
        case .requests: merged.requests = sum(\.requests)
        case .retries: merged.retries = sum(\.retries)
        case .resent:
            let resent = sum { $0.resent ?? 0 }
            merged.resent = resent > 0 ? resent : nil
        case .unscheduled: merged.unscheduled = sum(\.unscheduled)
        case .unsent:
            let unsent = sum { $0.unsent ?? 0 }
            merged.unsent = unsent > 0 ? unsent : nil
        case .rejected: merged.rejected = Self.sum(summaries.map(\.rejected))
        case .failed: merged.failed = Self.sum(summaries.map(\.failed))
        case .skipped: merged.skipped = Self.sum(summaries.map(\.skipped))
        case .unscheduledReasons:
            merged.unscheduledReasons = SummaryDocument.UnscheduledReasons.merged(
                summaries.map { ($0.unscheduledReasons, $0.unscheduled) }
            )
        case .digest: merged.digest = Self.digest(summaries.map(\.digest))
        case .cpu: merged.cpu = SummaryDocument.CPU.merged(summaries.map(\.cpu), sent: sum(\.sent))
        case .harness: merged.harness = SummaryDocument.Harness.merged(summaries.map(\.harness), latency: latency)
        case .throughputPerSecond:
            // Unknown when no shard measured one; else the shards that measured add up.
            let throughputs = summaries.compactMap(\.throughputPerSecond)
            merged.throughputPerSecond =
                provider?.delivery.acceptedPerSecond ?? (throughputs.isEmpty ? nil : throughputs.reduce(0, +))
        case .latency:
            merged.latency =
                latency.totalCount == 0 ? nil : SummaryDocument.Latency(milliseconds: latency.milliseconds(at:))
        case .cancelled:
            // A shard stopped early is a gap a partial merge accepts, not a stopped merge.
            merged.cancelled = !allowPartial && summaries.contains(where: \.cancelled)
        case .abandoned:
            let reasons = shards.compactMap { shard in shard.summary.abandoned.map { "\(shard.directory): \($0)" } }
            merged.abandoned = allowPartial || reasons.isEmpty ? nil : reasons.joined(separator: "; ")
        case .reconciled:
            let reconciled = summaries.map(\.reconciled)
            merged.reconciled = reconciled.contains(false) ? false : reconciled.allSatisfy { $0 == true } ? true : nil
        case .sink: merged.sink = SummaryDocument.Sink.merged(summaries.map(\.sink))
        case .tokens: merged.tokens = SummaryDocument.Tokens.merged(summaries.map(\.tokens))
        case .generatorLag:
            merged.generatorLag = SummaryDocument.GeneratorLag.merged(summaries.compactMap(\.generatorLag))
        case .openModel:
            merged.openModel = SummaryDocument.OpenModel.merged(
                summaries.map(\.openModel),
                measured: Int(latency.totalCount)
            )
        case .invalidReasonWords: merged.invalidReasonWords = invalidReasons.map(\.description)
        case .invalidCauses: merged.invalidCauses = invalidReasons.isEmpty ? nil : invalidReasons
        case .valid: merged.valid = invalidReasons.isEmpty
        case .intervals: merged.intervals = intervals
        case .mergedFrom: merged.mergedFrom = shards.map(\.directory)
        case .shard: merged.shard = nil
        case .start: merged.start = start
        case .partial: merged.partial = !gaps.isEmpty
        case .partialReasons: merged.partialReasons = gaps.map(\.description)
        case .startSkew: merged.startSkew = skew.map { $0 * 1000 }
        case .shardEnvironments: merged.shardEnvironments = summaries.map(\.environment)
        case .provider: merged.provider = provider
        case .delivery: merged.delivery = DeliverySummary.merged(summaries.map(\.delivery))
        case .broadcast: merged.broadcast = BroadcastSummary.merged(summaries.map(\.broadcast))
        case .returnWave: merged.returnWave = ReturnWaveSummary.merged(summaries.map(\.returnWave))
        // Shards of one rehearsal share its terms: the whole set's sample, each reading its part.
        case .sample: merged.sample = summaries.lazy.compactMap(\.sample).first
        case .aborted: merged.aborted = firstAbort
        case .fineIntervals: merged.fineIntervals = SummaryDocument.FineIntervals.merged(summaries.map(\.fineIntervals))
        case .kind: merged.kind = provider == nil ? nil : .sink
        // Each shard's differs (its --shard); `merged_from` names the folders that hold them.
        case .command: merged.command = nil
        }
    }

    private func sum(_ count: (SummaryDocument) -> Int) -> Int { summaries.map(count).reduce(0, +) }

    static func sum<Key: Hashable>(_ list: [[Key: Int]]) -> [Key: Int] {
        list.reduce(into: [:]) { total, counts in
            for (name, count) in counts { total[name, default: 0] += count }
        }
    }

    static func digest(_ texts: [String]) -> String {
        var combined = NotificationDigest()
        for text in texts {
            if let digest = NotificationDigest(parsing: text) { combined.combine(digest) }
        }
        return combined.description
    }

    /// The first shard's, its token source every shard's and, behind a provider, each sink's
    /// own endpoint and connections.
    private var configuration: SummaryDocument.Configuration {
        var configuration = summaries[0].configuration
        configuration.tokens = summaries.map(\.configuration.tokens).joined(separator: "; ")
        if provider != nil {
            configuration.connections = sum(\.connections)
            configuration.endpoint = summaries.map(\.configuration.endpoint).joined(separator: ", ")
        }
        return configuration
    }

    /// The first shard's schedule, the earliest first send, every host.
    private var start: SummaryDocument.Start {
        SummaryDocument.Start(
            scheduled: summaries[0].start?.scheduled,
            firstSend: shards.compactMap(\.firstSend).min().map(TimeNotation.format),
            host: Set(summaries.compactMap(\.start?.host)).sorted().joined(separator: ", ")
        )
    }

    /// Each invalid shard's reasons by its folder, then why the shards are not one run.
    /// The shards' reasons, each by its folder, and the merge's refusals. With a shard aborted,
    /// the others' interruptions are the abort's doing (the fleet stops them) and are left out.
    ///
    /// Too little measured is the run's to judge, not a shard's: 20 shards of 50 answers are
    /// a run of 1,000. The shards' `tooFewMeasured` give way to one judgement of the merged
    /// count against the largest minimum they state.
    private var invalidReasons: [InvalidReason] {
        let aborted = shards.contains { $0.summary.aborted != nil }
        return shards.flatMap { shard in
            shard.summary.invalidity.filter { (!aborted || !$0.isInterruption) && !$0.isTooFewMeasured }
                .map { InvalidReason.inFolder(directory: shard.directory, reason: $0) }
        } + tooFewMeasured + refusals
    }

    /// The merged run measured too little, if its shards said they did and their sum is short of
    /// the largest minimum they stated: answers after the warm-up (the shards' seconds' latency
    /// counts), a sink's requests.
    private var tooFewMeasured: [InvalidReason] {
        var minimum = 0
        var unit = InvalidReason.MeasuredUnit.answers
        for reason in summaries.flatMap(\.invalidity) {
            if case .tooFewMeasured(_, let stated, let statedUnit) = reason, stated > minimum {
                (minimum, unit) = (stated, statedUnit)
            }
        }
        guard minimum > 0 else { return [] }
        let measured =
            unit == .requests
            ? sum(\.requests) : summaries.flatMap(\.intervals).map(\.latencyCount).reduce(0, +)
        return measured < minimum ? [.tooFewMeasured(measured: measured, minimum: minimum, unit: unit)] : []
    }

    /// Each second's completions and lag over the shards, with its summed histogram's figures.
    private var intervals: [SummaryDocument.Interval] {
        var completed: [Int: Int] = [:]
        var lag: [Int: Double] = [:]
        var waits: [Int: Int] = [:]
        // By reason, where every shard kept them (schema 8); a shard that did not leaves them out.
        let byReason = summaries.allSatisfy { $0.intervals.allSatisfy { $0.rejected != nil && $0.failed != nil } }
        var rejected: [Int: [PushReason: Int]] = [:]
        var failed: [Int: [FailureCause: Int]] = [:]
        // In flight: the shards' sum, where each shard marked the second.
        var connections: [Int: [Int?]] = [:]
        var inFlight: [Int: [Int?]] = [:]
        var cpu: [Int: [Double?]] = [:]
        for interval in summaries.flatMap(\.intervals) {
            connections[interval.second, default: []].append(interval.connections)
            inFlight[interval.second, default: []].append(interval.inFlight)
            cpu[interval.second, default: []].append(interval.cpu)
            rejected[interval.second, default: [:]].merge(interval.rejected ?? [:], uniquingKeysWith: +)
            failed[interval.second, default: [:]].merge(interval.failed ?? [:], uniquingKeysWith: +)
            completed[interval.second, default: 0] += interval.completed
            if let streamWaits = interval.streamWaits { waits[interval.second, default: 0] += streamWaits }
            lag[interval.second] = max(lag[interval.second] ?? 0, interval.maxLag)
        }
        let histograms = Dictionary(uniqueKeysWithValues: entries.map { (Int($0.start), $0.histogram.unpacked()) })
        return Set(completed.keys).union(histograms.keys).sorted().map { second in
            let histogram = histograms[second] ?? makeMicrosecondHistogram()
            return SummaryDocument.Interval(
                second: second,
                completed: completed[second] ?? 0,
                latencyCount: Int(histogram.totalCount),
                p50: histogram.milliseconds(at: 50),
                p90: histogram.milliseconds(at: 90),
                p99: histogram.milliseconds(at: 99),
                max: histogram.milliseconds(at: 100),
                maxLag: lag[second] ?? 0,
                streamWaits: waits[second],
                rejected: byReason ? rejected[second] ?? [:] : nil,
                failed: byReason ? failed[second] ?? [:] : nil,
                connections: Self.sum(connections[second], over: summaries.count),
                inFlight: Self.sum(inFlight[second], over: summaries.count),
                cpu: Self.sum(cpu[second], over: summaries.count)
            )
        }
    }

    /// The shards' sum of a gauge of one second, when every shard has it (`nil` otherwise: a
    /// shard that ended earlier, or wrote a folder before it was kept).
    private static func sum<Value: AdditiveArithmetic>(_ values: [Value?]?, over shards: Int) -> Value? {
        guard let values, values.count == shards, values.allSatisfy({ $0 != nil }) else { return nil }
        return values.reduce(.zero) { $0 + $1! }
    }
}

extension SummaryMerge {
    /// The shard that `--abort-on` stopped first, named by its `--shard` (or its folder).
    var firstAbort: SummaryDocument.Aborted? {
        shards.compactMap { shard in
            shard.summary.aborted.map { aborted in
                var aborted = aborted
                aborted.shard = aborted.shard ?? shard.summary.shard ?? shard.directory
                return aborted
            }
        }.min { $0.afterSeconds < $1.afterSeconds }
    }
}
