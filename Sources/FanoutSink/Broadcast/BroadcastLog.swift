import FanoutAPNs

/// The sink's record of its accepted broadcasts, for its run folder (`summary.json`'s
/// `broadcast`, `broadcasts.csv`; docs/sink.md, "Broadcast channels"): one fixed-size entry per
/// broadcast, the first `limit` kept, so memory stays bounded whatever the run (64 bytes an
/// entry: 6.4 MB at the default limit); beyond it only counts and the largest reach are kept.
///
/// Device deliveries are never drawn one by one: a broadcast keeps how many subscribers it
/// reached at once, and its delivery times are the fleet's delay distribution's quantiles
/// (`BroadcastTimes`), worked out when the folder is written.
struct BroadcastLog: Sendable {
    /// One accepted broadcast.
    struct Entry: Equatable, Sendable {
        /// When it was accepted, uptime nanoseconds.
        var acceptedAt: UInt64
        var channel: ChannelID
        var reach: ChannelStore.Reach
    }

    private(set) var entries: [Entry] = []
    /// Broadcasts accepted past `limit`: counted, not listed.
    private(set) var leftOut = 0
    /// The most subscribers delivered at once by one broadcast, listed or not.
    private(set) var mostDelivered = 0
    let limit: Int

    init(limit: Int) {
        self.limit = limit
    }

    mutating func add(_ entry: Entry) {
        mostDelivered = max(mostDelivered, entry.reach.delivered)
        guard entries.count < limit else {
            leftOut += 1
            return
        }
        entries.append(entry)
    }
}

/// A snapshot of what the sink's broadcasts reached, for its run folder.
public struct BroadcastRecords: Sendable {
    /// One accepted broadcast: when (uptime nanoseconds), on which channel (base64), and its
    /// subscribers' split.
    public struct Broadcast: Sendable, Equatable {
        public var acceptedAt: UInt64
        public var channel: String
        public var reach: BroadcastReach
    }

    public var counts: BroadcastCounts
    /// The first `BroadcastLog.limit` broadcasts, in the order accepted.
    public var broadcasts: [Broadcast]
    /// Broadcasts beyond them (counted in `counts`, not listed).
    public var leftOut: Int
    /// The most subscribers one broadcast delivered at once.
    public var mostDelivered: Int
    /// How delivery times are drawn: the fleet's delay, or at once.
    public var times: BroadcastTimes
}
