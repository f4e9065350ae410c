import FanoutNotation
import FanoutPush
import FanoutReport
import Foundation

/// What `fanout plan --verify` prints and exits by: a rehearsal's predicted and measured figures
/// side by side, and whether every one is within `Verification.tolerance`.
public protocol RehearsalVerdict: Sendable {
    var text: String { get }
    var passed: Bool { get }
}

/// One machine's share of a plan rehearsed here. APNs: the embedded sink sits behind a wire of
/// the planned round trip with the windows the plan assumed and answers after APNs' processing
/// (`PlanJob.putOnTheWire`), over TLS with token auth; the share's connections and streams send
/// the share's devices as fast as they go (the closed model, as the plan's expected duration
/// assumes). FCM (`PlanJob.rehearseFCM`): the FCM sink with the machine's share of the quota,
/// behind a wire of the round trip and processing, paced where the plan paces. Predicted and measured
/// figures side by side: throughput, duration, and — when the CPU cost is known — the sender
/// cores the share keeps busy.
public struct Verification: Sendable, RehearsalVerdict {
    /// The share rehearsed: devices and connections of one machine.
    public var devices: UInt64
    public var connections: Int
    /// Notifications a second a connection carried, and how long the share took.
    public var predictedPerConnection: Double
    public var measuredPerConnection: Double
    public var predictedDuration: Duration
    public var measuredDuration: Duration
    /// Cores of sender CPU: the share's predicted rate at the plan's CPU cost (`nil` when the
    /// cost is not known), and the rehearsal's sender CPU over its duration.
    public var predictedCores: Double?
    public var measuredCores: Double
    /// Whether every notification was accepted and sender and sink agree.
    public var complete: Bool
    /// The service rehearsed: the APNs sink, or the FCM sink (`PlanJob.rehearseFCM`).
    public var service = PushService.apns
    /// FCM: the machine's share of the quota the sink held, the pace the send kept where it
    /// binds, and the requests the sink answered 429 QUOTA_EXCEEDED.
    public var quota: QuotaFigures?

    public struct QuotaFigures: Sendable, Hashable {
        public var messages: Int
        public var window: Duration
        public var pace: Double?
        public var answered429: Int
    }
    /// The largest gap allowed between a prediction and its measurement.
    public static let tolerance = 0.10

    static func gap(_ predicted: Double, _ measured: Double) -> Double { abs(measured - predicted) / predicted }

    public var passed: Bool {
        complete && Self.gap(predictedPerConnection, measuredPerConnection) <= Self.tolerance
            && Self.gap(predictedDuration.seconds, measuredDuration.seconds)
                <= Self.tolerance
            && predictedCores.map { Self.gap($0, measuredCores) <= Self.tolerance } ?? true
    }

    /// The table's header line, above `row`'s columns.
    static let header = "                             predicted          measured       gap"

    /// A row of the side-by-side table: the figures as `figure` writes them (a rate grouped
    /// with `/s`, 1,816/s; seconds; cores), the gap in percent, and "over 10%" past `tolerance`.
    static func row(_ name: String, _ predicted: Double, _ measured: Double, _ figure: (Double) -> String) -> String {
        let gap = Self.gap(predicted, measured) * 100
        func column(_ text: String) -> String { String(repeating: " ", count: max(0, 14 - text.count)) + text }
        return name.padding(toLength: 24, withPad: " ", startingAt: 0)
            + column(figure(predicted)) + "    " + column(figure(measured))
            + String(format: "  %+7.1f%%", (measured - predicted) / predicted * 100)
            + (gap <= Self.tolerance * 100 ? "" : "   over 10%")
    }

    /// The side-by-side table.
    public var text: String {
        let row = Self.row
        var rows: [String] = [
            service == .fcm
                ? "rehearsal: \(devices.grouped) devices over \(connections) connections (one machine's share) to the FCM sink, the planned round trip and processing on the wire"
                : "rehearsal: \(devices.grouped) devices over \(connections) connections (one machine's share), the planned round trip on the wire"
        ]
        if let quota {
            let held = "\(quota.messages.grouped) a \(CapacityPlan.spoken(quota.window)) window"
            rows.append(
                quota.pace.map { "the quota's share, \(held), binds: paced at \(Int($0.rounded()).grouped)/s" }
                    ?? "the quota's share, \(held), does not bind"
            )
        }
        rows += [
            Self.header,
            row("a connection averages", predictedPerConnection, measuredPerConnection) {
                Int(saturating: $0.rounded()).grouped + "/s"
            },
            row(
                "the share takes",
                predictedDuration.seconds,
                measuredDuration.seconds
            ) { String(format: "%.1f s", $0) },
        ]
        if let predictedCores {
            rows.append(row("sender cores", predictedCores, measuredCores) { String(format: "%.3f", $0) })
        } else {
            rows.append(String(format: "sender cores: %.3f measured (no CPU cost to predict them)", measuredCores))
        }
        rows.append(
            complete ? "every notification accepted; sender and sink agree" : "NOT every notification was accepted"
        )
        if let quota {
            rows.append("the sink answered \(quota.answered429.grouped) requests 429 QUOTA_EXCEEDED")
        }
        rows.append(
            passed ? "verified: within 10%" : "NOT verified: a measurement is more than 10% from its prediction"
        )
        return rows.joined(separator: "\n")
    }
}
