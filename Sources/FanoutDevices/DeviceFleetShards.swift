import Atomics
import FanoutAPNs
import FanoutInstrument
import NIOConcurrencyHelpers

/// The sink's device fleet, shared by its event loops: a device can get requests on several
/// connections, so its state lives in one of `shardCount` `DeviceFleet`s chosen by its token's
/// hash, each behind its own lock (requests for different devices rarely meet on one). The
/// fan-out's start is the first request any loop saw, given to every shard.
package final class DeviceFleetShards: Sendable {
    /// One shard: its fleet is read and changed only with `lock` held.
    private final class Shard: @unchecked Sendable {
        let lock = NIOLock()
        var fleet: DeviceFleet

        init(settings: DeviceFleetSettings, capacity: Int, stream: UInt64) {
            fleet = DeviceFleet(settings: settings, capacity: capacity, stream: stream)
        }
    }

    /// 16: a few times the event loops a sink runs, so two loops seldom wait for one lock.
    package static let shardCount = 16
    private let shards: [Shard]
    /// The fan-out's first request (uptime nanoseconds; 0: none yet).
    private let fanOutStart = ManagedAtomic<UInt64>(0)
    package let settings: DeviceFleetSettings

    package init(settings: DeviceFleetSettings) {
        self.settings = settings
        let perShard = (settings.storeCapacity + Self.shardCount - 1) / Self.shardCount
        shards = (0..<Self.shardCount).map { Shard(settings: settings, capacity: perShard, stream: UInt64($0)) }
    }

    private func shard(_ token: UInt64) -> Shard {
        shards[Int(truncatingIfNeeded: (token >> 32) ^ token) & (Self.shardCount - 1)]
    }

    /// A notification APNs accepted arrived at `now` (uptime nanoseconds).
    package func accept(_ notification: DeviceNotification, now: UInt64) -> DeviceFleet.Answer {
        var start = fanOutStart.load(ordering: .relaxed)
        if start == 0 {
            start =
                fanOutStart.compareExchange(expected: 0, desired: now, ordering: .relaxed).exchanged
                ? now : fanOutStart.load(ordering: .relaxed)
        }
        let shard = shard(notification.token)
        return shard.lock.withLock {
            shard.fleet.start(at: start)
            return shard.fleet.accept(notification, now: now)
        }
    }

    /// When the service learnt that `token`'s app is gone, if it has by `now`: a request for it
    /// is answered unregistered (`DeviceFleet.unregisteredSince`). FCM asks before its rates and
    /// for a validate_only send too; `accept` asks again.
    package func unregisteredSince(_ token: UInt64, now: UInt64) -> UInt64? {
        let shard = shard(token)
        return shard.lock.withLock { shard.fleet.unregisteredSince(token, now: now) }
    }

    /// Delivers or discards what fell due by `now` in every shard (the sink's timer).
    package func advance(now: UInt64) {
        for shard in shards {
            shard.lock.withLock { shard.fleet.advance(to: now) }
        }
    }

    /// Hands every return event due at `now` to `body`, shard by shard (each under its lock, at
    /// most `limit` from each a call); returns how many.
    package func takeReturns(now: UInt64, limit: Int, _ body: (ReturnEventView) -> Void) -> Int {
        var taken = 0
        for shard in shards {
            taken += shard.lock.withLock { shard.fleet.takeReturns(now: now, limit: limit, body) }
        }
        return taken
    }

    /// How many return events wait, when the earliest of them is due, and the latest due time
    /// of any event held so far (uptime nanoseconds; 0: none).
    package func returnsWaiting() -> (count: Int, earliest: UInt64?, latest: UInt64) {
        var count = 0
        var earliest: UInt64?
        var latest: UInt64 = 0
        for shard in shards {
            shard.lock.withLock {
                count += shard.fleet.returnsWaiting
                if let next = shard.fleet.nextReturn { earliest = min(earliest ?? .max, next) }
                latest = max(latest, shard.fleet.latestReturn)
            }
        }
        return (count, earliest, latest)
    }

    /// The fan-out's first request (uptime nanoseconds), once one came.
    package var fanOutStarted: UInt64? {
        let start = fanOutStart.load(ordering: .relaxed)
        return start == 0 ? nil : start
    }

    /// The history of the notification whose apns-id is `id`, if it is among the recent ones
    /// (the shard is not known from the id: each is asked).
    package func events(of id: UnsafeRawBufferPointer) -> [DeliveryEvent]? {
        for shard in shards {
            if let events = shard.lock.withLock({ shard.fleet.events(of: id) }) { return events }
        }
        return nil
    }

    /// What every shard's outcomes said of the provider, for its card: the fleet's rules'
    /// counts and their earliest examples (times on the uptime clock).
    package func findings() -> FleetFindingsSnapshot {
        var snapshot = FleetFindingsSnapshot()
        for shard in shards {
            shard.lock.withLock { snapshot.add(shard.fleet.findings) }
        }
        snapshot.trim()
        return snapshot
    }

    /// Every shard's counts and times now.
    package func snapshot() -> DeliverySnapshot {
        var snapshot = DeliverySnapshot()
        let start = fanOutStart.load(ordering: .relaxed)
        snapshot.fanOutStart = start == 0 ? nil : start
        for shard in shards {
            shard.lock.withLock {
                snapshot.counts = snapshot.counts + shard.fleet.counts
                snapshot.times = snapshot.times + shard.fleet.times
                snapshot.devicesKept += shard.fleet.devicesKept
                snapshot.engaged = snapshot.engaged + shard.fleet.engaged
                snapshot.returnPathsNotKept += shard.fleet.returnsCut.paths
                snapshot.returnTokensCut += shard.fleet.returnsCut.tokens
                if let stored = shard.fleet.storedExpiries {
                    snapshot.earliestExpiry = min(snapshot.earliestExpiry ?? .max, stored.earliest)
                    snapshot.latestExpiry = max(snapshot.latestExpiry ?? 0, stored.latest)
                }
            }
        }
        return snapshot
    }
}

/// The fleet's state at one moment, summed over its shards.
package struct DeliverySnapshot: Sendable {
    package var counts = DeliveryCounts()
    package var times = DeliveryTimes()
    /// The fan-out's first request (uptime nanoseconds), when one came.
    package var fanOutStart: UInt64?
    /// Devices the store holds something for, and when the notifications still stored expire
    /// (uptime nanoseconds).
    package var devicesKept = 0
    package var earliestExpiry: UInt64?
    package var latestExpiry: UInt64?
    /// What the devices did after their deliveries (`Engagement`).
    package var engaged = EngagementCounts(actions: 0)
    /// Return events sent to their kind's default path (no room for theirs), and tokens cut.
    package var returnPathsNotKept = 0
    package var returnTokensCut = 0

    package init() {}
}
