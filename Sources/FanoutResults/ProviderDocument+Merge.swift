import FanoutAPNs
import FanoutMeasure
import FanoutNotation
import FanoutPush
import Foundation

extension SummaryDocument.Provider {
    /// Several sinks behind one provider (`fanout merge`): one fan-out from the earliest start
    /// mark to the latest accepted arrival, every connection, the cards added rule by rule.
    /// Each sink's delivery times count from its own mark; `per_second` lines up by each
    /// sink's second, as the histograms do.
    public static func merged(_ providers: [Self], accepted: Int) -> Self {
        let marks = providers.map { $0.start.epochSeconds }
        let earliest = marks.compactMap { $0 }.min()
        /// Seconds from the earliest mark to a sink's mark.
        func offset(_ index: Int) -> Double { (marks[index] ?? earliest ?? 0) - (earliest ?? 0) }
        let first =
            providers.indices.filter { providers[$0].delivery.count > 0 }
            .map { offset($0) * 1000 + providers[$0].delivery.firstMs }.min() ?? 0
        let last = providers.indices.map { offset($0) * 1000 + providers[$0].delivery.lastMs }.max() ?? 0
        let fanout = last / 1000
        var perSecond: [Second] = []
        for provider in providers {
            for second in provider.perSecond {
                while perSecond.count <= second.second {
                    perSecond.append(Second(second: perSecond.count, received: 0, accepted: 0))
                }
                perSecond[second.second].received += second.received
                perSecond[second.second].accepted += second.accepted
            }
        }
        let connections = providers.flatMap(\.connections)
        let checks = mergedChecks(providers)
        let largest = DelayFigures.largest
        let own = providers.map(\.sinkOwn)
        let endings = Set(providers.map(\.endedBy))
        let expected = providers.map(\.expected)
        func total(_ values: [Int?]) -> Int? { values.contains(nil) ? nil : values.compactMap { $0 }.reduce(0, +) }
        return Self(
            start: .init(
                mark: Set(providers.map(\.start.mark)).count == 1 ? providers[0].start.mark : "first-request",
                at: earliest.map { TimeNotation.format(Date(timeIntervalSince1970: $0)) },
                epochSeconds: earliest
            ),
            endedBy: endings.count == 1 ? endings.first! : "mixed",
            expected: .init(
                notifications: total(expected.map(\.notifications)),
                tokens: total(expected.map(\.tokens)),
                tokensSeen: total(expected.map(\.tokensSeen)),
                reached: expected.allSatisfy(\.reached)
            ),
            delivery: .init(
                count: providers.map(\.delivery.count).reduce(0, +),
                firstMs: first,
                // Percentiles over every sink: `fanout merge` sets them from the merged histogram.
                p50Ms: 0,
                p90Ms: 0,
                p99Ms: 0,
                lastMs: last,
                fanoutSeconds: fanout,
                acceptedPerSecond: fanout > 0 ? Double(accepted) / fanout : 0
            ),
            perSecond: perSecond,
            streams: .init(
                limit: providers.map(\.streams.limit).max() ?? 0,
                initial: providers.map(\.streams.initial).max() ?? 0,
                connections: connections,
                fanoutSeconds: fanout
            ),
            connections: connections,
            connectionsNotListed: providers.map(\.connectionsNotListed).reduce(0, +),
            card: .init(checks: checks, forgotten: providers.map(\.card.forgotten).reduce(0, +)),
            capacity: .init(rttMs: providers[0].capacity.rttMs, connections: connections),
            sinkOwn: .init(
                lateness: largest(own.map(\.lateness)),
                fromSend: largest(own.map(\.fromSend)),
                injected: largest(own.map(\.injected)),
                loopLag: largest(own.map(\.loopLag)),
                loopUtilisation: own.flatMap(\.loopUtilisation)
            ),
            trigger: providers.compactMap(\.trigger).first
        )
    }

    /// The cards added rule by rule, the first five examples of each; a rule is on the merged
    /// card when it is on any sink's (the device fleet's only with devices, the broadcast rules
    /// only with channel requests), or when it is one of the service's rules every card shows
    /// (an earlier folder may lack a rule added since). The cards are FCM sinks' when any
    /// shows a rule of FCM's alone.
    static func mergedChecks(_ providers: [Self]) -> [Card.Check] {
        let rules = providers.flatMap { $0.card.checks.map(\.rule) }
        let service: PushService = rules.contains { !$0.services.contains(.apns) } ? .fcm : .apns
        return ProviderRule.allCases.compactMap { rule -> Card.Check? in
            let all = providers.flatMap { $0.card.checks.filter { $0.rule == rule } }
            if all.isEmpty && (rule.isFleet || rule.isBroadcast || !rule.services.contains(service)) { return nil }
            return Card.Check(
                rule: rule,
                service: service,
                count: all.map(\.count).reduce(0, +),
                examples: Array(all.flatMap(\.examples).prefix(5))
            )
        }
    }
}
