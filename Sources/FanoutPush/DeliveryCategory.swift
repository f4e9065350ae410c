import FanoutAPNs

/// One way a notification ended behind a push service, as its sink's device fleet counts it
/// (`DeliveryCounts`), named in that service's words: Apple's Push Notifications Console
/// categories for APNs (Apple, "Viewing the status of push notifications using Metrics and
/// APNs"); for FCM, which publishes no such list for one campaign, the same counts in words of
/// ours and Android's (Doze for "power considerations", ttl for expiration). summary.md's
/// table, report.html's bars and both sinks' `/metrics` labels read these.
public struct DeliveryCategory: Sendable {
    /// What became of the notifications it counts: report.html colours its bar by it.
    public enum Fate: Sendable {
        case received, delivered, stored, discarded
    }

    public var name: String
    public var count: KeyPath<DeliveryCounts, Int> & Sendable
    public var fate: Fate

    /// The service's categories, in the order the table and the bars give them.
    public static func all(for service: PushService) -> [DeliveryCategory] {
        let names =
            service == .apns
            ? [
                "Received by APNs", "Delivered to Device", "Delivered to Device (From Storage)",
                "Stored – Device Offline", "Stored – Power Considerations", "Discarded – Token Unregistered",
                "Discarded – Token Unregistered (From Storage)", "Discarded – Expired", "Discarded – Disabled",
                "Discarded – Disabled (From Storage)",
            ]
            : [
                "Received by FCM", "Delivered to the device", "Delivered to the device (kept first)",
                "Kept – device offline", "Kept – Doze", "Discarded – app uninstalled",
                "Discarded – app uninstalled (kept first)", "Discarded – ttl expired",
                "Discarded – notifications disabled", "Discarded – notifications disabled (kept first)",
            ]
        return zip(names, counted).map { DeliveryCategory(name: $0, count: $1.count, fate: $1.fate) }
    }

    /// The counts the names above name, in their order.
    private static let counted: [(count: KeyPath<DeliveryCounts, Int> & Sendable, fate: Fate)] = [
        (\.received, .received), (\.delivered, .delivered), (\.deliveredFromStorage, .delivered),
        (\.storedOffline, .stored), (\.storedPower, .stored), (\.discardedUnregistered, .discarded),
        (\.discardedUnregisteredFromStorage, .discarded), (\.discardedExpired, .discarded),
        (\.discardedDisabled, .discarded), (\.discardedDisabledFromStorage, .discarded),
    ]
}
