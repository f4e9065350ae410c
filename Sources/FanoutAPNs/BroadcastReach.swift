/// What a broadcast on a channel reached, or many broadcasts added up: its subscribers, split
/// as the sink's device fleet splits them (without a fleet every subscriber is online and takes
/// it). One type for the sink's count of each broadcast, its running totals (`/stats`) and the
/// run folder's `broadcast.devices` (docs/sink.md, "Broadcast channels").
public struct BroadcastReach: Codable, Sendable, Hashable {
    public var subscribers = 0
    /// Delivered at once.
    public var delivered = 0
    /// Offline subscribers of a channel that stores the most recent message: they get it when
    /// they come back (or a later one).
    public var stored = 0
    /// Offline subscribers of a channel that stores nothing: they miss it.
    public var missed = 0
    /// Subscribers whose app has notifications disabled or is uninstalled.
    public var unreachable = 0

    public init(subscribers: Int = 0, delivered: Int = 0, stored: Int = 0, missed: Int = 0, unreachable: Int = 0) {
        self.subscribers = subscribers
        self.delivered = delivered
        self.stored = stored
        self.missed = missed
        self.unreachable = unreachable
    }

    /// Two reaches added (every field said, so a new one cannot be left out).
    public static func + (a: BroadcastReach, b: BroadcastReach) -> BroadcastReach {
        BroadcastReach(
            subscribers: a.subscribers + b.subscribers,
            delivered: a.delivered + b.delivered,
            stored: a.stored + b.stored,
            missed: a.missed + b.missed,
            unreachable: a.unreachable + b.unreachable
        )
    }
}
