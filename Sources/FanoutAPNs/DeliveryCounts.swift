/// What became of the notifications APNs accepted, in the categories of Apple's Push
/// Notifications Console (Apple, "Viewing the status of push notifications using Metrics and
/// APNs"), and in three of ours where Apple names none: a stored notification discarded because
/// a newer one for the same device arrived (APNs keeps only the most recent), one the sink's
/// store had no room for (`forgotten`), and those still stored.
///
/// Every accepted notification is in exactly one of the final places at any time:
/// ```
///   received = stored + delivered + deliveredFromStorage
///            + discardedUnregistered + discardedUnregisteredFromStorage
///            + discardedDisabled + discardedDisabledFromStorage
///            + discardedExpired + discardedReplaced + forgotten
/// ```
/// `storedOffline` and `storedPower` count notifications that went into storage (Apple's
/// "Stored – …" data points, separate from their later delivery or discard), `collapsed` those
/// that replaced a stored one with the same `apns-collapse-id`.
public struct DeliveryCounts: Sendable, Hashable, Codable {
    /// Received by APNs: answered 200.
    public var received = 0
    /// Delivered to Device.
    public var delivered = 0
    /// Delivered to Device (From Storage).
    public var deliveredFromStorage = 0
    /// Stored – Device Offline.
    public var storedOffline = 0
    /// Stored – Power Considerations.
    public var storedPower = 0
    /// Discarded – Token Unregistered, and (From Storage).
    public var discardedUnregistered = 0
    public var discardedUnregisteredFromStorage = 0
    /// Discarded – Disabled, and (From Storage).
    public var discardedDisabled = 0
    public var discardedDisabledFromStorage = 0
    /// Discarded – Expired: `apns-expiration` 0 (or past) to a device that could not take it at
    /// once, or stored until its expiration went by.
    public var discardedExpired = 0
    /// Ours: a stored notification discarded when a newer one for its device arrived.
    public var discardedReplaced = 0
    /// Ours: of `discardedReplaced`, those whose successor had the same collapse id.
    public var collapsed = 0
    /// Ours: notifications the sink's store had no room for (`--device-store-cap`): neither
    /// delivered nor discarded by the model, never silently dropped.
    public var forgotten = 0
    /// Stored now, waiting for their device or their expiry.
    public var stored = 0
    /// Requests answered 410 Unregistered because an earlier delivery found the app uninstalled.
    public var unregisteredAnswers = 0

    public init() {}

    /// summary.json's names (its `delivery` holds them flat, beside the times).
    enum CodingKeys: String, CodingKey {
        case received, delivered
        case deliveredFromStorage = "delivered_from_storage"
        case storedOffline = "stored_offline"
        case storedPower = "stored_power"
        case discardedUnregistered = "discarded_unregistered"
        case discardedUnregisteredFromStorage = "discarded_unregistered_from_storage"
        case discardedDisabled = "discarded_disabled"
        case discardedDisabledFromStorage = "discarded_disabled_from_storage"
        case discardedExpired = "discarded_expired"
        case discardedReplaced = "discarded_replaced"
        case collapsed, forgotten, stored
        case unregisteredAnswers = "unregistered_answers"
    }

    /// Every accepted notification's final place so far, which must equal `received`.
    public var accountedFor: Int {
        stored + delivered + deliveredFromStorage + discardedUnregistered + discardedUnregisteredFromStorage
            + discardedDisabled + discardedDisabledFromStorage + discardedExpired + discardedReplaced + forgotten
    }

    /// All delivered to a device, at once or from storage.
    public var allDelivered: Int { delivered + deliveredFromStorage }

    /// The sum of two shards' counts (every field said, so a new one cannot be left out).
    public static func + (a: DeliveryCounts, b: DeliveryCounts) -> DeliveryCounts {
        var sum = DeliveryCounts()
        sum.received = a.received + b.received
        sum.delivered = a.delivered + b.delivered
        sum.deliveredFromStorage = a.deliveredFromStorage + b.deliveredFromStorage
        sum.storedOffline = a.storedOffline + b.storedOffline
        sum.storedPower = a.storedPower + b.storedPower
        sum.discardedUnregistered = a.discardedUnregistered + b.discardedUnregistered
        sum.discardedUnregisteredFromStorage = a.discardedUnregisteredFromStorage + b.discardedUnregisteredFromStorage
        sum.discardedDisabled = a.discardedDisabled + b.discardedDisabled
        sum.discardedDisabledFromStorage = a.discardedDisabledFromStorage + b.discardedDisabledFromStorage
        sum.discardedExpired = a.discardedExpired + b.discardedExpired
        sum.discardedReplaced = a.discardedReplaced + b.discardedReplaced
        sum.collapsed = a.collapsed + b.collapsed
        sum.forgotten = a.forgotten + b.forgotten
        sum.stored = a.stored + b.stored
        sum.unregisteredAnswers = a.unregisteredAnswers + b.unregisteredAnswers
        return sum
    }
}
