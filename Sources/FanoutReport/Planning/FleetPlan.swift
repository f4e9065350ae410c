import FanoutNotation
import FanoutPush
import FanoutResults

/// A campaign across both push services, planned as its two halves (`fanout plan --fleet
/// apns=55%,fcm=45%`): each half's devices by its share, each planned with its service's
/// physics (`CapacityPlan`: APNs' 1000 streams; FCM's 100 and the project's quota), sent
/// together, so the campaign ends with the slower half.
///
/// ```
///   devices × apns share ──► CapacityPlan (APNs) ──┐
///   devices × fcm share  ──► CapacityPlan (FCM)  ──┴─► the campaign: the later of the two,
///                                                      connections and machines of both
/// ```
public struct FleetPlan: Sendable {
    public let apnsShare: Double
    public let fcmShare: Double
    public let apns: CapacityPlan
    public let fcm: CapacityPlan

    /// The halves `apns` and `fcm` of one campaign, by their shares of its devices.
    public init(apnsShare: Double, fcmShare: Double, apns: CapacityPlan, fcm: CapacityPlan) {
        self.apnsShare = apnsShare
        self.fcmShare = fcmShare
        self.apns = apns
        self.fcm = fcm
    }

    /// Each half's devices: the APNs share of `devices` rounded, the rest FCM's.
    public static func halves(of devices: UInt64, apnsShare: Double) -> (apns: UInt64, fcm: UInt64) {
        let apns = min(devices, UInt64((Double(devices) * apnsShare).rounded()))
        return (apns, devices - apns)
    }

    /// The half that ends last, and so sets when the campaign does.
    public var slowerHalf: PushService {
        fcm.expectedDuration > apns.expectedDuration ? .fcm : .apns
    }

    /// When the last device of either half is sent to.
    public var expectedDuration: Duration { max(apns.expectedDuration, fcm.expectedDuration) }

    /// Both halves, then the campaign.
    public var text: String {
        let devices = apns.question.devices + fcm.question.devices
        let slower = slowerHalf == .apns ? apns : fcm
        var lines = [
            "APNs half: \(ShareNotation.percent(apnsShare)) of \(grouped(Int(devices))) devices",
            apns.text,
            "",
            "FCM half: \(ShareNotation.percent(fcmShare)) of \(grouped(Int(devices))) devices",
            fcm.text,
            "",
            "campaign: \(grouped(Int(devices))) devices in \(CapacityPlan.spoken(apns.question.deadline)):",
            "  connections            \(apns.connections) to APNs, \(fcm.connections) to FCM",
            "  expected duration      \(String(format: "%.1f", expectedDuration.seconds)) s, the \(slowerHalf.name) half's",
            "  binds                  the \(slowerHalf.name) half: \(slower.binding.rawValue)",
        ]
        if let apnsMachines = apns.machines, let fcmMachines = fcm.machines {
            lines.insert(
                "  machines               \(apnsMachines) for APNs, \(fcmMachines) for FCM",
                at: lines.count - 2
            )
        }
        return lines.joined(separator: "\n")
    }

    public var document: FleetPlanDocument {
        FleetPlanDocument(
            fleet: ["apns": apnsShare, "fcm": fcmShare],
            apns: apns.document,
            fcm: fcm.document,
            expectedDurationSeconds: expectedDuration.seconds,
            slowerHalf: slowerHalf.rawValue
        )
    }
}
