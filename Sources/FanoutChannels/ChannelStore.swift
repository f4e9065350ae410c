import FanoutAPNs
import FanoutDevices
import FanoutNotation
import FanoutScenarioTerms
import NIOConcurrencyHelpers
import NIOCore

/// The broadcast channels of one sink (one APNs environment), shared by all its connections:
/// created, read, listed and deleted per app (bundle id), at most `limitPerApp` per app as
/// APNs allows, and at most `appLimit` apps with channels at once so that its memory is
/// bounded (≈ 100 bytes a channel: `appLimit` × `limitPerApp` channels at most, ~100 MB).
/// It also counts the broadcasts sent on them and the device deliveries they stand for.
/// One lock: channel requests are rare next to notifications, and a broadcast takes it once.
package final class ChannelStore: Sendable {
    /// One channel: its app, storage policy and subscribers.
    package struct Channel: Equatable, Sendable {
        package var bundle: [UInt8]
        /// `message-storage-policy`: 0 no message stored, 1 the most recent stored.
        package var storagePolicy: Int
        package var subscribers: Int
        /// Its last broadcast's update, stored for offline subscribers, while its fate is open.
        var pending: StoredUpdate?
    }

    /// What `create` did.
    package enum Creation: Equatable {
        case created(ChannelID)
        /// The app has `limitPerApp` channels (or the sink `appLimit` apps): 400 CannotCreateChannelConfig.
        case limitReached
    }

    /// What a broadcast on a channel reached (FanoutAPNs's `BroadcastReach`).
    package typealias Reach = BroadcastReach

    /// APNs: "up to 10,000 channels for your app in the development and production
    /// environment, respectively" (docs/apns.md, "Broadcast channels").
    static let limitPerApp = 10_000
    /// Apps with channels at once (Fanout's bound on memory; a provider under test has one).
    static let appLimit = 64

    private struct State {
        var channels: [ChannelID: Channel] = [:]
        /// Each app's channels in the order they were created (the list's order).
        var byApp: [[UInt8]: [ChannelID]] = [:]
        var random: SinkRandom
        var counts = BroadcastCounts()
        var log: BroadcastLog
        /// The first broadcast's acceptance (uptime ns): offline subscribers come back counted
        /// from it.
        var start: UInt64?
    }

    private let state: NIOLockedValueBox<State>
    private let subscribers: ChannelSubscribers
    private let shares: DeliveryShares
    private let times: BroadcastTimes
    private let returns: SubscriberReturns

    /// How many broadcasts the run folder lists one by one (`BroadcastLog`).
    package static let listedBroadcasts = 100_000

    /// A store whose channels get `subscribers` (drawn from `seed`), reached as `shares` say,
    /// delivered after `delay` (`nil`: at once); offline subscribers come back after
    /// `returnAfter` from the first broadcast (`nil`: not within the run).
    package init(
        subscribers: ChannelSubscribers,
        shares: DeliveryShares = .init(),
        delay: LatencyDistribution? = nil,
        returnAfter: LatencyDistribution? = nil,
        seed: UInt64,
        listed: Int = listedBroadcasts
    ) {
        self.subscribers = subscribers
        self.shares = shares
        times = BroadcastTimes(delay: delay)
        returns = SubscriberReturns(returnAfter)
        state = NIOLockedValueBox(
            State(random: SinkRandom(seed: seed ^ 0xC4A7_7E15), log: BroadcastLog(limit: listed))
        )
    }

    /// Creates a channel for `bundle`, unless it has `limitPerApp` already.
    package func create(bundle: UnsafeRawBufferPointer, storagePolicy: Int) -> Creation {
        state.withLockedValue { state in
            let app = Array(bundle)
            let existing = state.byApp[app]?.count ?? 0
            guard existing < Self.limitPerApp, existing > 0 || state.byApp.count < Self.appLimit else {
                state.counts.refusedCreations += 1
                return .limitReached
            }
            var id = ChannelID(high: state.random.next(), low: state.random.next())
            while state.channels[id] != nil { id = ChannelID(high: state.random.next(), low: state.random.next()) }
            let count = subscribers.draw(&state.random)
            state.channels[id] = Channel(bundle: app, storagePolicy: storagePolicy, subscribers: count)
            state.byApp[app, default: []].append(id)
            state.counts.created += 1
            return .created(id)
        }
    }

    /// The channel `id` of `bundle`, if it exists (a channel of another app does not).
    package func channel(_ id: ChannelID, bundle: UnsafeRawBufferPointer) -> Channel? {
        state.withLockedValue { state in
            guard let channel = state.channels[id], channel.bundle.elementsEqual(bundle) else { return nil }
            return channel
        }
    }

    /// The ids of `bundle`'s channels, oldest first.
    package func list(bundle: UnsafeRawBufferPointer) -> [ChannelID] {
        state.withLockedValue { $0.byApp[Array(bundle)] ?? [] }
    }

    /// Deletes channel `id` of `bundle`; false when it does not exist. Its stored update goes
    /// with it.
    package func delete(
        _ id: ChannelID,
        bundle: UnsafeRawBufferPointer,
        now: UInt64 = NIODeadline.now().uptimeNanoseconds
    ) -> Bool {
        state.withLockedValue { state in
            guard let channel = state.channels[id], channel.bundle.elementsEqual(bundle) else { return false }
            if let pending = channel.pending { settle(pending, at: now, closed: true, in: &state) }
            state.channels[id] = nil
            state.byApp[channel.bundle]?.removeAll { $0 == id }
            if state.byApp[channel.bundle]?.isEmpty == true { state.byApp[channel.bundle] = nil }
            state.counts.deleted += 1
            return true
        }
    }

    /// Counts one accepted broadcast on channel `id` of `bundle` and the deliveries it stands
    /// for; `nil` (nothing counted) when the channel does not exist. Unless `expiration` is 0
    /// (deliver once, never stored), its update replaces the channel's stored one and is stored
    /// for the subscribers away now; a deliver-once update leaves the stored one as it was.
    /// One bisection of the return distribution a broadcast (F(now), shared by the update it
    /// replaces), under the store's lock.
    package func broadcast(
        _ id: ChannelID,
        bundle: UnsafeRawBufferPointer,
        expiration: DeviceNotification.Expiration = .unset,
        now: UInt64 = NIODeadline.now().uptimeNanoseconds
    ) -> Reach? {
        state.withLockedValue { state in
            guard var channel = state.channels[id], channel.bundle.elementsEqual(bundle) else { return nil }
            // `now` is read before the lock: another loop's first broadcast may have set a later
            // start meanwhile, and time before the start is the start.
            let start = state.start ?? now
            state.start = start
            let elapsed = max(now, start) - start
            let back = returns.back(by: elapsed)
            let storable = channel.storagePolicy == 1 && expiration != .immediately
            if storable, let pending = channel.pending {
                settle(pending, at: now, closed: true, backByThen: back, in: &state)
            }
            var (reach, offline) = shares.reach(
                subscribers: channel.subscribers,
                stillAway: 1 - back,
                storable: storable
            )
            reach.stillStored = reach.stored
            state.counts.add(reach)
            let entry = state.log.add(BroadcastLog.Entry(acceptedAt: now, channel: id, reach: reach))
            if storable {
                channel.pending = nil
                if reach.stored > 0 {
                    var expires: UInt64?
                    if case .at(let time) = expiration { expires = time > start ? time - start : 0 }
                    channel.pending = StoredUpdate(
                        accepted: elapsed,
                        backAtAcceptance: back,
                        offline: offline,
                        stored: reach.stored,
                        expires: expires,
                        entry: entry
                    )
                }
            }
            state.channels[id] = channel
            return reach
        }
    }

    /// Closes or looks at a stored update's fate at `now` (uptime ns; no earlier than the first
    /// broadcast): counted, and its log entry told, when `closed`; on a copy of the state when
    /// the folder is written. `backByThen`: F at `now`, when the caller has it.
    private func settle(
        _ pending: StoredUpdate,
        at now: UInt64,
        closed: Bool,
        backByThen: Double? = nil,
        in state: inout State
    ) {
        let start = state.start ?? now
        let (fate, span) = pending.fate(
            at: max(now, start) - start,
            closed: closed,
            returns: returns,
            backByEnd: backByThen
        )
        state.counts.settle(fate)
        if let entry = pending.entry { state.log.settle(entry, fate, span: span) }
    }

    /// The broadcasts so far, for the run folder: the stored updates still open are looked at
    /// as of `now` (their subscribers back by now from storage, the rest still stored).
    package func records(now: UInt64 = NIODeadline.now().uptimeNanoseconds) -> BroadcastRecords {
        let (counts, log, start) = state.withLockedValue { state in
            var copy = state
            for channel in state.channels.values {
                if let pending = channel.pending { settle(pending, at: now, closed: false, in: &copy) }
            }
            copy.counts.open = state.channels.count
            return (copy.counts, copy.log, state.start ?? now)
        }
        return BroadcastRecords(
            counts: counts,
            broadcasts: log.entries.map {
                BroadcastRecords.Broadcast(
                    acceptedAt: $0.acceptedAt,
                    channel: $0.channel.text,
                    reach: $0.reach,
                    storage: $0.storage
                )
            },
            leftOut: log.leftOut,
            mostDelivered: log.mostDelivered,
            times: times,
            returns: returns,
            start: start
        )
    }

    /// What was counted so far (an update's stored subscribers count as still stored until
    /// its fate is closed).
    package var counts: BroadcastCounts {
        state.withLockedValue { state in
            var counts = state.counts
            counts.open = state.channels.count
            return counts
        }
    }
}

/// The shares of a channel's subscribers a broadcast reaches at once, later, or never: the
/// device fleet's (`DeviceFleetSettings`) when the sink has one, else all at once.
package struct DeliveryShares: Equatable, Sendable {
    /// Offline when the broadcast goes out.
    package var offline = 0.0
    /// The app's notifications disabled, or the app uninstalled.
    package var unreachable = 0.0

    package init(offline: Double = 0, unreachable: Double = 0) {
        self.offline = offline
        self.unreachable = unreachable
    }

    /// The fleet's shares: low-power devices take a Live Activity update (Fanout's reading: a
    /// broadcast is delivered to them, in a burst at worst), offline ones do not.
    package init(_ devices: DeviceFleetSettings?) {
        self.init(
            offline: devices?.offline ?? 0,
            unreachable: min(1, (devices?.disabled ?? 0) + (devices?.uninstalled ?? 0))
        )
    }

    /// How `subscribers` split, rounded to whole devices (the remainder goes to the delivered),
    /// when the share `stillAway` of the offline devices has not come back yet: those away are
    /// stored when `storable` (storage policy 1, `apns-expiration` not 0), else they miss it.
    /// Also the offline devices before returns (reachable × offline), unrounded.
    func reach(subscribers: Int, stillAway: Double, storable: Bool) -> (ChannelStore.Reach, offline: Double) {
        let unreachable = Int((Double(subscribers) * unreachable).rounded())
        let offline = Double(subscribers - unreachable) * offline
        let away = min(subscribers - unreachable, Int((offline * min(max(stillAway, 0), 1)).rounded()))
        var reach = ChannelStore.Reach(subscribers: subscribers, unreachable: unreachable)
        reach.delivered = subscribers - unreachable - away
        if storable { reach.stored = away } else { reach.missed = away }
        return (reach, offline)
    }
}

/// The sink's broadcast counts (`/stats`, summary.json's `broadcast`): the channels, and the
/// broadcasts accepted with the device deliveries they stand for (`reach`, written flat beside
/// the channels' counts and read as this type's own: `counts.delivered`).
@dynamicMemberLookup
public struct BroadcastCounts: Codable, Sendable, Equatable {
    /// Channels created, deleted, and open now.
    public var created = 0
    /// Channels deleted.
    public var deleted = 0
    /// Channels open now.
    public var open = 0
    /// Creations refused with CannotCreateChannelConfig.
    public var refusedCreations = 0
    /// Broadcasts accepted (200), and what they reached, added up.
    public var broadcasts = 0
    /// What the accepted broadcasts reached, added up.
    public var reach = BroadcastReach()

    /// No channel, no broadcast.
    public init() {}

    /// `reach`'s counts, read as the counts' own (`counts.delivered`).

    public subscript<Value>(dynamicMember path: WritableKeyPath<BroadcastReach, Value>) -> Value {
        get { reach[keyPath: path] }
        set { reach[keyPath: path] = newValue }
    }

    /// The fields beside `reach`'s (which `BroadcastReach` names).
    enum CodingKeys: String, CodingKey {
        case created, deleted, open, broadcasts
        case refusedCreations = "refused_creations"
    }

    /// Reads the counts written flat: `reach`'s fields beside the channels'.
    public init(from decoder: any Decoder) throws {
        reach = try BroadcastReach(from: decoder)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        created = try container.decode(Int.self, forKey: .created)
        deleted = try container.decode(Int.self, forKey: .deleted)
        open = try container.decode(Int.self, forKey: .open)
        refusedCreations = try container.decode(Int.self, forKey: .refusedCreations)
        broadcasts = try container.decode(Int.self, forKey: .broadcasts)
    }

    /// Writes `reach`'s fields flat beside the channels'.
    public func encode(to encoder: any Encoder) throws {
        try reach.encode(to: encoder)
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(created, forKey: .created)
        try container.encode(deleted, forKey: .deleted)
        try container.encode(open, forKey: .open)
        try container.encode(refusedCreations, forKey: .refusedCreations)
        try container.encode(broadcasts, forKey: .broadcasts)
    }

    /// One line for the sink's summary.
    public var line: String {
        "broadcast channels: \(created.grouped) created, \(deleted.grouped) deleted, \(open.grouped) open, "
            + "\(refusedCreations.grouped) refused; \(broadcasts.grouped) broadcasts to \(reach.subscribers.grouped) "
            + "subscribers: \(reach.delivered.grouped) delivered, \(reach.stored.grouped) stored for offline devices "
            + "(\(reach.fromStorage.grouped) delivered from storage), \(reach.missed.grouped) missed offline, "
            + "\(reach.unreachable.grouped) unreachable"
    }

    mutating func add(_ reach: BroadcastReach) {
        broadcasts += 1
        self.reach = self.reach + reach
    }

    /// A stored update's fate (`StoredUpdate.fate`) taken out of the still stored.
    mutating func settle(_ fate: BroadcastReach) {
        reach.fromStorage += fate.fromStorage
        reach.discarded += fate.discarded
        reach.expired += fate.expired
        reach.stillStored -= fate.fromStorage + fate.discarded + fate.expired
    }
}
