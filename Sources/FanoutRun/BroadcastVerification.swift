import FanoutNotation
import FanoutReport
import Foundation

/// A broadcast plan rehearsed here (`PlanJob.rehearseBroadcast`): the embedded sink behind a
/// wire of the planned round trip, its channels each with the plan's subscribers, and
/// `fanout send --broadcast`'s sender creating the plan's channels, sending `updates` rounds of
/// updates at the plan's request rate (`BroadcastRehearsal`: the update period scaled down when
/// a few periods would take too long) and deleting the channels. Predicted and measured side by
/// side, in the plan's terms: broadcast requests a second, device deliveries a second, and
/// connections.
///
/// ```
///   requests/s    predicted  channels ÷ interval              (BroadcastPlan.requestRate)
///                 measured   (n − 1) ÷ (last − first)         the sink's acceptance times of
///                                                             the n broadcasts, ÷ the scale
///   deliveries/s  predicted  requests/s × subscribers
///                 measured   deliveries of broadcasts 2…n ÷ (last − first), ÷ the scale
///   connections   predicted  the plan's; measured: the connections the sender opened
/// ```
public struct BroadcastVerification: Sendable, RehearsalVerdict {
    public var channels: UInt64
    public var subscribers: UInt64
    /// The plan's update interval, the rehearsal's, and the updates sent to each channel.
    public var updateEvery: Duration
    public var rehearsedEvery: Duration
    public var updates: Int
    public var predictedRequestRate: Double
    public var measuredRequestRate: Double
    public var predictedDeliveryRate: Double
    public var measuredDeliveryRate: Double
    public var predictedConnections: Int
    public var measuredConnections: Int
    /// What was refused, failed or not accounted for (empty: every channel created and deleted,
    /// every broadcast accepted, each reaching every subscriber, sender and sink agreeing).
    public var problems: [String]

    public init(
        channels: UInt64,
        subscribers: UInt64,
        updateEvery: Duration,
        rehearsedEvery: Duration,
        updates: Int,
        predictedRequestRate: Double,
        measuredRequestRate: Double,
        predictedDeliveryRate: Double,
        measuredDeliveryRate: Double,
        predictedConnections: Int,
        measuredConnections: Int,
        problems: [String]
    ) {
        self.channels = channels
        self.subscribers = subscribers
        self.updateEvery = updateEvery
        self.rehearsedEvery = rehearsedEvery
        self.updates = updates
        self.predictedRequestRate = predictedRequestRate
        self.measuredRequestRate = measuredRequestRate
        self.predictedDeliveryRate = predictedDeliveryRate
        self.measuredDeliveryRate = measuredDeliveryRate
        self.predictedConnections = predictedConnections
        self.measuredConnections = measuredConnections
        self.problems = problems
    }

    /// How many times faster than the plan the rehearsal's updates came (1: the plan's interval).
    public var scale: Double { updateEvery.seconds / rehearsedEvery.seconds }

    public var complete: Bool { problems.isEmpty }

    public var passed: Bool {
        complete
            && Verification.gap(predictedRequestRate, measuredRequestRate) <= Verification.tolerance
            && Verification.gap(predictedDeliveryRate, measuredDeliveryRate) <= Verification.tolerance
            && measuredConnections == predictedConnections
    }

    /// `12/s`, `0.167/s`, `100,000/s`: whole rates grouped, small ones with three figures.
    static func rate(_ value: Double) -> String {
        value >= 100 ? Int(saturating: value.rounded()).grouped + "/s" : String(format: "%.3g/s", value)
    }

    /// The side-by-side table.
    public var text: String {
        let every = CapacityPlan.spoken(updateEvery)
        var rows = [
            "rehearsal: \(channels.grouped) channels × \(subscribers.grouped) subscribers, \(updates) updates a channel "
                + "every \(CapacityPlan.spoken(rehearsedEvery)) over \(predictedConnections) connection"
                + "\(predictedConnections == 1 ? "" : "s"), the planned round trip on the wire"
        ]
        if rehearsedEvery < updateEvery {
            rows.append(
                "  the plan's \(every) scaled down \(String(format: "%g", (scale * 100).rounded() / 100))× to keep "
                    + "the rehearsal short: the rates measured are divided by that to compare with the plan's"
            )
        }
        rows += [
            Verification.header,
            Verification.row("broadcast requests", predictedRequestRate, measuredRequestRate, Self.rate),
            Verification.row("device deliveries", predictedDeliveryRate, measuredDeliveryRate, Self.rate),
            Verification.row("connections", Double(predictedConnections), Double(measuredConnections)) {
                String(Int($0))
            } + (measuredConnections == predictedConnections ? "" : "   not the plan's"),
        ]
        if complete {
            rows.append(
                "every channel created and deleted, every broadcast accepted and counted by the sink with its subscribers"
            )
        } else {
            rows += problems.map { "NOT accounted for: \($0)" }
        }
        rows.append(
            passed
                ? "verified: within 10%"
                : !complete
                    ? "NOT verified: something was refused, failed or is unaccounted for"
                    : "NOT verified: a measurement is more than 10% from its prediction"
        )
        return rows.joined(separator: "\n")
    }
}
