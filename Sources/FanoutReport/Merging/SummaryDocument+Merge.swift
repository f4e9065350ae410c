import FanoutAPNs
import FanoutMeasure
import FanoutResults
import Histogram

// Each section of summary.json that shards merge, merging itself: built anew by its memberwise
// initialiser, so a required field added to a section does not compile until it says how it
// merges. A section every shard must hold is `nil` in the merge when one shard lacks it (a
// folder written before it was kept): unknown, never part of the shards passed off as all.

extension SummaryDocument.Sink {
    /// Every shard's sink as one: counts added, digests combined, differences listed.
    static func merged(_ sinks: [Self?]) -> Self? {
        let present = sinks.compactMap { $0 }
        guard !present.isEmpty, present.count == sinks.count else { return nil }
        return Self(
            requests: present.map(\.requests).reduce(0, +),
            accepted: present.map(\.accepted).reduce(0, +),
            rejected: SummaryMerge.sum(present.map(\.rejected)),
            digest: SummaryMerge.digest(present.map(\.digest)),
            differences: present.flatMap(\.differences)
        )
    }
}

extension SummaryDocument.UnscheduledReasons {
    /// Each shard's reasons with its `unscheduled` count, added up. A shard written before the
    /// reasons were kept left tokens unsent only past the schedule's end.
    static func merged(_ shards: [(reasons: Self?, unscheduled: Int)]) -> Self {
        let reasons = shards.map { $0.reasons ?? Self(scheduleOver: $0.unscheduled, tokensRanOut: 0) }
        return Self(
            scheduleOver: reasons.map(\.scheduleOver).reduce(0, +),
            tokensRanOut: reasons.map(\.tokensRanOut).reduce(0, +)
        )
    }
}

extension SummaryDocument.CPU {
    /// CPU adds up over shards; a shard without it (schema 2) leaves the total unknown.
    static func merged(_ shards: [Self?], sent: Int) -> Self {
        func total(_ seconds: [Double?]) -> Double? {
            seconds.contains(nil) ? nil : seconds.compactMap { $0 }.reduce(0, +)
        }
        return Self(
            sender: total(shards.map { $0?.senderSeconds }),
            sink: total(shards.map { $0?.sinkSeconds }),
            sent: sent
        )
    }
}

extension SummaryDocument.Tokens {
    static func merged(_ tokens: [Self?]) -> Self? {
        let present = tokens.compactMap { $0 }
        guard !present.isEmpty, present.count == tokens.count else { return nil }
        return Self(
            read: present.map(\.read).reduce(0, +),
            lines: present.map(\.lines).reduce(0, +),
            turnedDown: present.map(\.turnedDown).reduce(0, +),
            otherService: present.contains { $0.otherService != nil }
                ? present.map { $0.otherService ?? 0 }.reduce(0, +) : nil
        )
    }
}

extension SummaryDocument.GeneratorLag {
    /// The open model's shards' lag: the worst of each figure; the limit they shared.
    static func merged(_ lags: [Self]) -> Self? {
        guard let first = lags.first else { return nil }
        return Self(p99: lags.map(\.p99).max() ?? 0, max: lags.map(\.max).max() ?? 0, limit: first.limit)
    }
}

extension SummaryDocument.OpenModel {
    /// The shards' open-model figures as one fleet's: waits added up, the longest wait and the
    /// largest window the largest, the tightest limit the tightest; `nil` unless every shard
    /// kept them. `measured`: the merge's latencies, which the waits' share is of.
    static func merged(_ models: [Self?], measured: Int) -> Self? {
        let present = models.compactMap { $0 }
        guard !present.isEmpty, present.count == models.count else { return nil }
        let count = present.map(\.streamWaits.count).reduce(0, +)
        let limits = present.map(\.streamWaits.fewestStreams).filter { $0 > 0 }
        return Self(
            coalesce: Set(present.map(\.coalesce)).sorted().joined(separator: ", "),
            largestWindowMs: present.map(\.largestWindowMs).max() ?? 0,
            streamWaits: .init(
                count: count,
                share: measured > 0 ? min(1, Double(count) / Double(measured)) : 0,
                longestMs: present.map(\.streamWaits.longestMs).max() ?? 0,
                fewestStreams: limits.min() ?? 0,
                mostStreams: present.map { $0.streamWaits.mostStreams ?? $0.streamWaits.fewestStreams }.max()
            ),
            scheduleSeconds: Self.all(present.map(\.scheduleSeconds))?.max(),
            sendsSeconds: Self.all(present.map(\.sendsSeconds))?.max(),
            arrivals: Self.all(present.map(\.arrivals))?.reduce(0, +),
            arrivalsSent: Self.all(present.map(\.arrivalsSent))?.reduce(0, +)
        )
    }
}

extension SummaryDocument.OpenModel {
    /// Every shard's value, or `nil` when one has none.
    fileprivate static func all<Value>(_ values: [Value?]) -> [Value]? {
        let present = values.compactMap { $0 }
        return present.count == values.count ? present : nil
    }
}

extension SummaryDocument.Harness {
    /// The shards' `harness` objects as one: each delay's p50, p99 and max the largest over the
    /// shards (the shards' histograms of them are not kept), every loop's CPU, the share against
    /// the merged p99 (`latency`). `nil` when a shard has none (schema 4 and before).
    static func merged(_ harnesses: [Self?], latency: Histogram<UInt64>) -> Self? {
        let present = harnesses.compactMap { $0 }
        guard let first = present.first, present.count == harnesses.count else { return nil }
        let largest = DelayFigures.largest
        // The closed model has no send lateness: null stays null.
        func largestPresent(_ delays: [DelayFigures?]) -> DelayFigures? {
            delays.allSatisfy { $0 == nil } ? nil : largest(delays.compactMap { $0 })
        }
        let senders = present.map(\.sender)
        let sender = Sender(
            sendLateness: largestPresent(senders.map(\.sendLateness)),
            loopLag: largest(senders.map(\.loopLag)),
            readDelay: largest(senders.map(\.readDelay)),
            returnPath: largestPresent(senders.map(\.returnPath)),
            perAnswer: largestPresent(senders.map(\.perAnswer)),
            loopUtilisation: senders.flatMap(\.loopUtilisation)
        )
        let sinks = present.compactMap(\.sink)
        let sink =
            sinks.count < present.count
            ? nil
            : SinkOwnDelays.Figures(
                lateness: largest(sinks.map(\.lateness)),
                fromSend: largest(sinks.map(\.fromSend)),
                injected: largest(sinks.map(\.injected)),
                loopLag: largest(sinks.map(\.loopLag)),
                loopUtilisation: sinks.flatMap(\.loopUtilisation)
            )
        let ownP99 = present.map(\.ownP99).max() ?? 0
        let measured = latency.milliseconds(at: 99)
        let share = measured > 0 ? ownP99 / measured : 0
        var guidance: [String] = []
        for advice in present.flatMap(\.guidance) where !guidance.contains(advice) { guidance.append(advice) }
        return Self(
            sender: sender,
            sink: sink,
            ownP99: ownP99,
            own: nil,
            ownMeasured: present.allSatisfy(\.ownMeasured),
            largest: present.max { $0.ownP99 < $1.ownP99 }?.largest ?? "",
            measuredP99: measured,
            shareOfP99: share,
            maxShare: first.maxShare,
            bound: share > first.maxShare,
            selfMeasurement: present.allSatisfy { $0.selfMeasurement == true },
            guidance: share > first.maxShare ? guidance : []
        )
    }
}

extension DeliverySummary {
    /// Sinks' device fleets behind one provider as one: every count added, the deliveries a
    /// second added (the sinks ran at once), the stored notifications' expirations the earliest
    /// and the latest. Times are the largest of each figure — the sinks' histograms are not
    /// kept — so a merged percentile is an upper bound. `nil` unless every sink had its fleet on.
    static func merged(_ deliveries: [Self?]) -> Self? {
        let present = deliveries.compactMap { $0 }
        guard !present.isEmpty, present.count == deliveries.count else { return nil }
        func sum(_ count: (Self) -> Int) -> Int { present.map(count).reduce(0, +) }
        func largest(_ times: [Times?]) -> Times? {
            let known = times.compactMap { $0 }
            guard !known.isEmpty else { return nil }
            return Times(
                p50: known.map(\.p50).max()!,
                p90: known.map(\.p90).max()!,
                p99: known.map(\.p99).max()!,
                max: known.map(\.max).max()!
            )
        }
        var merged = Self()
        merged.received = sum(\.received)
        merged.delivered = sum(\.delivered)
        merged.deliveredFromStorage = sum(\.deliveredFromStorage)
        merged.storedOffline = sum(\.storedOffline)
        merged.storedPower = sum(\.storedPower)
        merged.discardedUnregistered = sum(\.discardedUnregistered)
        merged.discardedUnregisteredFromStorage = sum(\.discardedUnregisteredFromStorage)
        merged.discardedDisabled = sum(\.discardedDisabled)
        merged.discardedDisabledFromStorage = sum(\.discardedDisabledFromStorage)
        merged.discardedExpired = sum(\.discardedExpired)
        merged.discardedReplaced = sum(\.discardedReplaced)
        merged.collapsed = sum(\.collapsed)
        merged.forgotten = sum(\.forgotten)
        merged.stored = sum(\.stored)
        merged.storedExpireFrom = present.compactMap(\.storedExpireFrom).min()
        merged.storedExpireUntil = present.compactMap(\.storedExpireUntil).max()
        merged.unregisteredAnswers = sum(\.unregisteredAnswers)
        merged.toDeviceMs = largest(present.map(\.toDeviceMs))
        merged.reachedMs = largest(present.map(\.reachedMs))
        let rates = present.compactMap(\.deliveredPerSecond)
        merged.deliveredPerSecond = rates.isEmpty ? nil : rates.reduce(0, +)
        // Each sink's curve is of its own devices and its own start: without their histograms
        // no point of the whole's can be said.
        merged.reachedCurve = nil
        return merged
    }
}
