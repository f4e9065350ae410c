import FanoutAPNs
import Foundation

extension SummaryDocument {
    /// What the document's own figures contradict, whatever its `valid` says: the identities
    /// every summary Fanout writes holds. A run's outcomes add up to what it sent; no count,
    /// time or rate is negative; percentiles are in order; `reconciled: true` agrees with its
    /// sink section; a run that answered nothing (or a sink that received nothing) measured
    /// nothing; an older schema's all-zero latencies mean nothing was measured. A folder a
    /// run, a sink or a merge writes holds no contradiction but those two (its own reasons
    /// say them already); a file edited by hand or by another tool may hold any.
    public var contradictions: [InvalidReason] {
        var reasons = negativeFigures
        let rejectedCount = rejected.values.reduce(0, +)
        let failedCount = failed.values.reduce(0, +)
        if isSink {
            if requests == 0 { reasons.append(.noRequests) }
        } else {
            if sent != accepted + rejectedCount + failedCount {
                reasons.append(
                    .outcomesDoNotAddUp(sent: sent, accepted: accepted, rejected: rejectedCount, failed: failedCount)
                )
            }
            if answered == 0 { reasons.append(.noAnswers) }
            // A run's rate is what it sent (after its warm-up) over its length: more than all it
            // sent over that length is a figure no run wrote (a merge adds its shards' up).
            if mergedFrom == nil, let throughput = throughputPerSecond, throughput > 0 {
                let length = elapsedSeconds - warmUpSeconds
                let most = length > 0 ? Double(sent) / length : 0
                if throughput > most * 1.001 + 0.001 {
                    reasons.append(.throughputAboveSent(perSecond: throughput, sent: sent, seconds: length))
                }
            }
        }
        if let latency {
            let values = Latency.percentiles.map { latency[keyPath: $0.value] }
            if zip(values, values.dropFirst()).contains(where: { $0 > $1 }) { reasons.append(.percentilesOutOfOrder) }
            if schemaVersion < 7 && values.allSatisfy({ $0 == 0 }) {
                reasons.append(.zeroLatencies(schema: schemaVersion))
            }
        }
        // The digest sums what was accepted (the sender's of the answers it saw, the sink's of
        // what it took): its count is the accepted count. Counts edited by hand beside it, as
        // sent, accepted and requests of 2,000 beside "1,000 notifications", passed the gate
        // (issue 61, session 37's pass).
        if let digested = Self.digestedCount(digest), digested != accepted {
            reasons.append(.digestDisagrees(where: "", digested: digested, accepted: accepted))
        }
        if let sink, let digested = Self.digestedCount(sink.digest), digested != sink.accepted {
            reasons.append(.digestDisagrees(where: "sink", digested: digested, accepted: sink.accepted))
        }
        if let card = provider?.card {
            let counted = card.checks.map(\.count).reduce(0, +)
            if card.violations != counted {
                reasons.append(.cardDoesNotAddUp(violations: card.violations, counted: counted))
            }
            for check in card.checks where check.passed != (check.count == 0) {
                reasons.append(.cardFlagWrong(rule: check.rule.rawValue, count: check.count, passed: check.passed))
            }
            if card.passed != (card.violations == 0) {
                reasons.append(.cardFlagWrong(rule: "card", count: card.violations, passed: card.passed))
            }
        }
        if reconciled == true, let sink {
            if !sink.differences.isEmpty {
                reasons.append(.senderAndSinkDisagree)
            }
            if sink.accepted != accepted {
                reasons.append(.reconciledButDisagrees(field: "accepted", sender: accepted, sink: sink.accepted))
            }
            if sink.requests > requests {
                reasons.append(.reconciledButDisagrees(field: "requests", sender: requests, sink: sink.requests))
            }
        }
        return reasons
    }

    /// The count a digest's text states (`NotificationDigest`'s own reading), or `nil` when
    /// it is not a digest's text or its count is past Int's range.
    static func digestedCount(_ digest: String) -> Int? {
        NotificationDigest(parsing: digest).flatMap { Int(exactly: $0.count) }
    }

    /// Every count, time and rate below zero, by its key in the document.
    private var negativeFigures: [InvalidReason] {
        var figures: [(String, Double)] = [
            ("sent", Double(sent)), ("accepted", Double(accepted)), ("requests", Double(requests)),
            ("retries", Double(retries)), ("unscheduled", Double(unscheduled)), ("elapsed_seconds", elapsedSeconds),
            ("warm_up_seconds", warmUpSeconds), ("connections", Double(connections)),
        ]
        figures += rejected.sorted { $0.key.rawValue < $1.key.rawValue }.map {
            ("rejected.\($0.key.rawValue)", Double($0.value))
        }
        figures += failed.sorted { $0.key.rawValue < $1.key.rawValue }.map {
            ("failed.\($0.key.rawValue)", Double($0.value))
        }
        figures += skipped.sorted { $0.key.rawValue < $1.key.rawValue }.map {
            ("skipped.\($0.key.rawValue)", Double($0.value))
        }
        if let throughputPerSecond { figures.append(("throughput_per_second", throughputPerSecond)) }
        if let latency {
            figures += Latency.percentiles.map { ("latency_ms.\($0.label)", latency[keyPath: $0.value]) }
        }
        if let sink {
            figures += [("sink.requests", Double(sink.requests)), ("sink.accepted", Double(sink.accepted))]
        }
        if let unsent { figures.append(("unsent", Double(unsent))) }
        return figures.filter { $0.1 < 0 || $0.1.isNaN }.map { .negativeFigure(field: $0.0, value: $0.1) }
    }
}
