import FanoutAPNs

/// The sink's record of its accepted broadcasts, for its run folder (`summary.json`'s
/// `broadcast`, `broadcasts.csv`; docs/sink.md, "Broadcast channels"): one fixed-size entry per
/// broadcast, the first `limit` kept, so memory stays bounded whatever the run (at most 128
/// bytes an entry, `entryBytes`: 12.8 MB at the default limit); beyond it only counts and the
/// largest reach are kept.
///
/// Device deliveries are never drawn one by one: a broadcast keeps how many subscribers it
/// reached at once and what became of its stored update (`StoredUpdate`), and its delivery
/// times are the fleet's delay and return distributions' quantiles (`BroadcastTimes`,
/// `SubscriberReturns`), worked out when the folder is written.
struct BroadcastLog: Sendable {
    /// One accepted broadcast.
    struct Entry: Equatable, Sendable {
        /// When it was accepted, uptime nanoseconds.
        var acceptedAt: UInt64
        var channel: ChannelID
        var reach: ChannelStore.Reach
        /// Where its deliveries from storage fall, once its stored update's fate is known.
        var storage: StorageSpan?
    }

    /// What an entry takes at most (`BroadcastLogTests` holds `Entry` to it).
    static let entryBytes = 128

    private(set) var entries: [Entry] = []
    /// Broadcasts accepted past `limit`: counted, not listed.
    private(set) var leftOut = 0
    /// The most subscribers delivered at once by one broadcast, listed or not.
    private(set) var mostDelivered = 0
    let limit: Int

    init(limit: Int) {
        self.limit = limit
    }

    /// Lists `entry` unless `limit` are listed; its index when listed.
    @discardableResult
    mutating func add(_ entry: Entry) -> Int? {
        mostDelivered = max(mostDelivered, entry.reach.delivered)
        guard entries.count < limit else {
            leftOut += 1
            return nil
        }
        entries.append(entry)
        return entries.count - 1
    }

    /// Entry `index`'s stored update came to `fate` (`StoredUpdate.fate`) within `span`.
    mutating func settle(_ index: Int, _ fate: BroadcastReach, span: StorageSpan) {
        entries[index].reach.fromStorage = fate.fromStorage
        entries[index].reach.discarded = fate.discarded
        entries[index].reach.expired = fate.expired
        entries[index].reach.stillStored = fate.stillStored
        entries[index].storage = span
    }
}

/// A snapshot of what the sink's broadcasts reached, for its run folder.
public struct BroadcastRecords: Sendable {
    /// One accepted broadcast: when (uptime nanoseconds), on which channel (base64), and its
    /// subscribers' split.
    public struct Broadcast: Sendable, Equatable {
        /// When it was accepted, uptime nanoseconds.
        public var acceptedAt: UInt64
        /// Its channel's id, base64.
        public var channel: String
        /// Its subscribers' split.
        public var reach: BroadcastReach
        /// Where its deliveries from storage fall (ns after the first broadcast); `nil`: nothing
        /// was stored.
        public var storage: StorageSpan?
    }

    /// The channels' and broadcasts' counts.
    public var counts: BroadcastCounts
    /// The first `BroadcastLog.limit` broadcasts, in the order accepted.
    public var broadcasts: [Broadcast]
    /// Broadcasts beyond them (counted in `counts`, not listed).
    public var leftOut: Int
    /// The most subscribers one broadcast delivered at once.
    public var mostDelivered: Int
    /// How delivery times are drawn: the fleet's delay, or at once.
    public var times: BroadcastTimes
    /// When offline subscribers come back, from `start`.
    public var returns: SubscriberReturns
    /// The first broadcast's acceptance (uptime ns).
    public var start: UInt64
}
