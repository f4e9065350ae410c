import FanoutNotation
import FanoutResults
import Foundation

/// `fanout plan --broadcast`: one Live Activity update every interval to every subscriber of N
/// broadcast channels, planned as APNs's own fan-out (a request a channel) beside the per-token
/// fan-out of the same audience (a request a device), both with `CapacityPlan`'s arithmetic:
///
/// ```
///   broadcast requests    R_b = channels ÷ interval                 (what the provider sends)
///   connections           ⌈R_b ÷ (a connection's ceiling × headroom)⌉  (CapacityPlan of R_b)
///   device deliveries     R_b × subscribers                        (what APNs is asked to deliver)
///   per-token fan-out     R_t = channels × subscribers ÷ interval  (CapacityPlan of R_t)
///     on the broadcast's connections: channels × subscribers ÷ (connections × their ceiling)
///     + a round trip an update — it fits when that is at most the interval
/// ```
public struct BroadcastPlan: Sendable {
    /// The audience and the update interval; `base` holds the round trip, streams, windows,
    /// body, CPU and headroom both plans share (its devices and deadline are replaced).
    public struct Question: Sendable, Hashable {
        public var channels: UInt64
        public var subscribers: UInt64
        public var updateEvery: Duration
        public var base: CapacityPlan.Question

        public init(channels: UInt64, subscribers: UInt64, updateEvery: Duration, base: CapacityPlan.Question) {
            self.channels = channels
            self.subscribers = subscribers
            self.updateEvery = updateEvery
            self.base = base
        }

        /// Device deliveries an update (channels × subscribers), `nil` past `UInt64`.
        public var audience: UInt64? {
            let (product, overflow) = channels.multipliedReportingOverflow(by: subscribers)
            return overflow ? nil : product
        }
    }

    public let question: Question
    /// The broadcast requests: `channels` every interval.
    public let requests: CapacityPlan
    /// The per-token fan-out of the same audience: `channels × subscribers` every interval.
    public let perToken: CapacityPlan
    /// Device deliveries a second APNs is asked for.
    public let deliveriesPerSecond: Double
    /// How long one update's per-token notifications take on the broadcast's connections.
    public let perTokenSecondsOnBroadcastConnections: Double

    /// A plan; `question.audience` must not overflow (`fanout plan` refuses such options).
    public init(_ question: Question) {
        self.question = question
        var requests = question.base
        requests.devices = question.channels
        requests.deadline = question.updateEvery
        self.requests = CapacityPlan(requests)
        var perToken = question.base
        perToken.devices = question.audience ?? .max
        perToken.deadline = question.updateEvery
        self.perToken = CapacityPlan(perToken)
        deliveriesPerSecond = self.requests.requiredRate * Double(question.subscribers)
        let perConnection = min(self.requests.connectionCeiling, self.requests.coreCeiling ?? .infinity)
        let roundTrip = (question.base.roundTrip + question.base.processing).seconds
        perTokenSecondsOnBroadcastConnections =
            Double(perToken.devices) / (Double(self.requests.connections) * perConnection) + roundTrip
    }

    /// Broadcast requests a second: the figure a rehearsal compares its measured rate with.
    public var requestRate: Double { requests.requiredRate }

    /// Whether the per-token fan-out of one update fits in the interval on the broadcast's connections.
    public var perTokenFits: Bool { perTokenSecondsOnBroadcastConnections <= question.updateEvery.seconds }

    /// The share of one connection's ceiling the broadcast requests use.
    public var connectionShare: Double { requestRate / requests.connectionCeiling }

    /// plan.json: the broadcast requests' plan (its `devices` the channels, its deadline the
    /// interval, its `required_rate_per_second` the request rate) with the `broadcast` section.
    public var document: PlanDocument {
        var document = requests.document
        document.broadcast = PlanDocument.Broadcast(
            channels: question.channels,
            subscribers: question.subscribers,
            updateEverySeconds: question.updateEvery.seconds,
            requestRate: requestRate,
            connections: requests.connections,
            connectionShare: connectionShare,
            deliveriesPerSecond: deliveriesPerSecond,
            perToken: .init(
                notificationsPerUpdate: perToken.question.devices,
                rate: perToken.requiredRate,
                connections: perToken.connections,
                cores: perToken.cores,
                machines: perToken.machines,
                secondsOnBroadcastConnections: perTokenSecondsOnBroadcastConnections,
                fits: perTokenFits
            )
        )
        return document
    }

    /// The plan for a terminal: the broadcast's figures, then the per-token fan-out's beside them.
    public var text: String {
        func rate(_ value: Double) -> String {
            "\(value < 1e18 ? grouped(Int(saturating: value.rounded())) : String(format: "%.3g", value))/s"
        }
        let every = CapacityPlan.spoken(question.updateEvery)
        let connections = requests.connections
        let headroom = Int((question.base.headroom * 100).rounded())
        let share = String(format: "%.2g", connectionShare * 100)
        var lines = [
            "\(grouped(Int(clamping: question.channels))) broadcast channels × \(grouped(Int(clamping: question.subscribers))) subscribers, an update every \(every):",
            "                         broadcast              per-token (the same audience)",
            "  requests an update     \(pad(grouped(Int(question.channels))))\(grouped(Int(clamping: perToken.question.devices)))",
            "  request rate           \(pad(rate(requestRate)))\(rate(perToken.requiredRate))",
            "  connections            \(pad(String(connections)))\(perToken.connections)",
        ]
        if let machines = perToken.machines {
            lines.append("  machines               \(pad(requests.machines.map(String.init) ?? "1"))\(machines)")
        }
        let carried: String = connections == 1 ? "so one connection carries it" : "at \(headroom)% of each"
        let plural: String = connections == 1 ? "" : "s"
        let seconds = String(format: "%.1f", perTokenSecondsOnBroadcastConnections)
        let fits: String = perTokenFits ? "fits in \(every)" : "does not fit in \(every)"
        let ceiling: String = rate(requests.connectionCeiling)
        lines.append("  device deliveries      \(rate(deliveriesPerSecond)) asked of APNs either way")
        lines.append(
            "  a connection carries   \(ceiling) at most (\(requests.binding.rawValue)): "
                + "the broadcast uses \(share)% of one, \(carried)"
        )
        lines.append(
            "  per-token on the broadcast's \(connections) connection\(plural): \(seconds) s an update, \(fits)"
        )
        lines.append("assuming:")
        lines += requests.assumptions.map { "  - \($0)" }
        lines.append(
            "  - one broadcast request an update a channel, every subscriber reached by APNs; the per-token fan-out sends one notification a subscriber with the same body"
        )
        return lines.joined(separator: "\n")
    }

    /// A column of 23 characters.
    private func pad(_ text: String) -> String {
        text.count >= 23 ? text + " " : text + String(repeating: " ", count: 23 - text.count)
    }
}
