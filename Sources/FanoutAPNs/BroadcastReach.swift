/// What a broadcast on a channel reached, or many broadcasts added up: its subscribers, split
/// as the sink's device fleet splits them (without a fleet every subscriber is online and takes
/// it). One type for the sink's count of each broadcast, its running totals (`/stats`) and the
/// run folder's `broadcast.devices` (docs/sink.md, "Broadcast channels").
///
/// A stored update's fate is decided later, as its offline subscribers come back:
///
/// ```
///   subscribers = delivered + stored + missed + unreachable
///   stored      = fromStorage + discarded + expired + stillStored
/// ```
public struct BroadcastReach: Codable, Sendable, Hashable {
    public var subscribers = 0
    /// Delivered at once.
    public var delivered = 0
    /// Offline subscribers of a channel that stores the most recent message: they get it when
    /// they come back (or a later one).
    public var stored = 0
    /// Offline subscribers of a channel that stores nothing (or of a broadcast sent with
    /// `apns-expiration: 0`): they miss it.
    public var missed = 0
    /// Subscribers whose app has notifications disabled or is uninstalled.
    public var unreachable = 0
    /// Of the stored: delivered from storage when their device came back.
    public var fromStorage = 0
    /// Of the stored: still away when the channel's next broadcast replaced it (APNs keeps the
    /// most recent), or when the channel was deleted.
    public var discarded = 0
    /// Of the stored: still away when its `apns-expiration` passed.
    public var expired = 0
    /// Of the stored: still away and stored when the counts were taken.
    public var stillStored = 0

    public init(
        subscribers: Int = 0,
        delivered: Int = 0,
        stored: Int = 0,
        missed: Int = 0,
        unreachable: Int = 0,
        fromStorage: Int = 0,
        discarded: Int = 0,
        expired: Int = 0,
        stillStored: Int = 0
    ) {
        self.subscribers = subscribers
        self.delivered = delivered
        self.stored = stored
        self.missed = missed
        self.unreachable = unreachable
        self.fromStorage = fromStorage
        self.discarded = discarded
        self.expired = expired
        self.stillStored = stillStored
    }

    /// Two reaches added (every field said, so a new one cannot be left out).
    public static func + (a: BroadcastReach, b: BroadcastReach) -> BroadcastReach {
        BroadcastReach(
            subscribers: a.subscribers + b.subscribers,
            delivered: a.delivered + b.delivered,
            stored: a.stored + b.stored,
            missed: a.missed + b.missed,
            unreachable: a.unreachable + b.unreachable,
            fromStorage: a.fromStorage + b.fromStorage,
            discarded: a.discarded + b.discarded,
            expired: a.expired + b.expired,
            stillStored: a.stillStored + b.stillStored
        )
    }

    public enum CodingKeys: String, CodingKey {
        case subscribers, delivered, stored, missed, unreachable, discarded, expired
        case fromStorage = "from_storage"
        case stillStored = "still_stored"
    }

    /// Folders written before stored updates were timed have no `from_storage`, `discarded`,
    /// `expired` nor `still_stored`: their stored updates read as still stored.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        subscribers = try container.decode(Int.self, forKey: .subscribers)
        delivered = try container.decode(Int.self, forKey: .delivered)
        stored = try container.decode(Int.self, forKey: .stored)
        missed = try container.decode(Int.self, forKey: .missed)
        unreachable = try container.decode(Int.self, forKey: .unreachable)
        fromStorage = try container.decodeIfPresent(Int.self, forKey: .fromStorage) ?? 0
        discarded = try container.decodeIfPresent(Int.self, forKey: .discarded) ?? 0
        expired = try container.decodeIfPresent(Int.self, forKey: .expired) ?? 0
        stillStored =
            try container.decodeIfPresent(Int.self, forKey: .stillStored) ?? stored - fromStorage - discarded - expired
    }
}
