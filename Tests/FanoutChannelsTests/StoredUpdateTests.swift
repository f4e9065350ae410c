import FanoutAPNs
import FanoutDevices
import FanoutScenarioTerms
import Testing

@testable import FanoutChannels

/// A channel's stored update (storage policy 1) reaches the offline subscribers who come back
/// before the channel's next broadcast, its deletion or its expiration (docs/sink.md, "Stored
/// updates"), worked out from the return distribution and checked against draws of it.
@Suite struct StoredUpdateTests {
    static let second: UInt64 = 1_000_000_000
    /// The first broadcast's acceptance, on the made-up uptime clock.
    static let start: UInt64 = 5 * second

    /// Half of 10,000 subscribers offline, back uniformly within 20 s of the first broadcast.
    static func store(returns: LatencyDistribution? = .uniform(.zero, .seconds(20))) throws -> (ChannelStore, ChannelID)
    {
        let store = ChannelStore(
            subscribers: .fixed(10_000),
            shares: DeliveryShares(offline: 0.5),
            returnAfter: returns,
            seed: 1
        )
        let id = try #require(ChannelStoreTests.create(store, "com.example.app", policy: 1))
        return (store, id)
    }

    static func broadcast(
        _ store: ChannelStore,
        _ id: ChannelID,
        at seconds: UInt64,
        expiration: DeviceNotification.Expiration = .unset
    ) -> BroadcastReach? {
        ChannelStoreTests.bytes("com.example.app") {
            store.broadcast(id, bundle: $0, expiration: expiration, now: start + seconds * second)
        }
    }

    @Test func theNextBroadcastReplacesWhatTheAwayDidNotGet() throws {
        let (store, id) = try Self.store()
        let first = try #require(Self.broadcast(store, id, at: 0))
        #expect((first.delivered, first.stored, first.stillStored) == (5000, 5000, 5000))
        // At 10 s half of the offline are back: they take the second at once; the first reached
        // them from storage, and the 2,500 still away lose it to the second.
        let second = try #require(Self.broadcast(store, id, at: 10))
        #expect((second.delivered, second.stored) == (7500, 2500))
        let live = store.counts
        #expect((live.fromStorage, live.discarded, live.stillStored) == (2500, 2500, 2500))
        // By 30 s everyone is back: the second's stored all delivered from storage.
        let records = store.records(now: Self.start + 30 * Self.second)
        let fates = records.broadcasts.map(\.reach)
        #expect(
            fates[0] == .init(subscribers: 10_000, delivered: 5000, stored: 5000, fromStorage: 2500, discarded: 2500)
        )
        #expect(fates[1] == .init(subscribers: 10_000, delivered: 7500, stored: 2500, fromStorage: 2500))
        #expect(
            records.broadcasts.map(\.storage) == [
                .init(from: 0, to: 10 * Self.second), .init(from: 10 * Self.second, to: 30 * Self.second),
            ]
        )
        #expect(records.counts.reach.stored == 7500)
        #expect(
            records.counts.fromStorage == 5000 && records.counts.discarded == 2500 && records.counts.stillStored == 0
        )
        // The folder looks at open updates as of its writing, and leaves the store's counts alone.
        #expect(store.records(now: Self.start + 15 * Self.second).broadcasts[1].reach.fromStorage == 1250)
        #expect(store.records(now: Self.start + 15 * Self.second).broadcasts[1].reach.stillStored == 1250)
        #expect(store.counts.stillStored == 2500)
    }

    @Test func deletingTheChannelDiscardsWhatIsStored() throws {
        let (store, id) = try Self.store()
        _ = try #require(Self.broadcast(store, id, at: 0))
        let deleted = ChannelStoreTests.bytes("com.example.app") {
            store.delete(id, bundle: $0, now: Self.start + 12 * Self.second)
        }
        #expect(deleted)
        // 60% are back by 12 s: theirs from storage; the 40% still away lose it with the channel.
        let fate = store.records(now: Self.start + 60 * Self.second).broadcasts[0].reach
        #expect((fate.stored, fate.fromStorage, fate.discarded, fate.stillStored) == (5000, 3000, 2000, 0))
    }

    @Test func anExpirationEndsTheSpanAndTheRestExpire() throws {
        let (store, id) = try Self.store()
        _ = try #require(Self.broadcast(store, id, at: 0))
        _ = try #require(Self.broadcast(store, id, at: 10, expiration: .at(Self.start + 12 * Self.second)))
        let fate = store.records(now: Self.start + 30 * Self.second).broadcasts[1].reach
        #expect((fate.stored, fate.fromStorage, fate.expired, fate.stillStored) == (2500, 500, 2000, 0))
        // Not yet expired when the folder is written: still stored.
        let open = store.records(now: Self.start + 11 * Self.second).broadcasts[1].reach
        #expect((open.fromStorage, open.expired, open.stillStored) == (250, 0, 2250))
    }

    @Test func expirationZeroIsNeverStored() throws {
        let (store, id) = try Self.store()
        let reach = try #require(Self.broadcast(store, id, at: 0, expiration: .immediately))
        #expect((reach.delivered, reach.stored, reach.missed) == (5000, 0, 5000))
        #expect(store.records(now: Self.start + 30 * Self.second).counts.fromStorage == 0)
    }

    /// A deliver-once broadcast is not stored, and leaves the channel's stored update as it was:
    /// those coming back still get the earlier one.
    @Test func aDeliverOnceBroadcastLeavesTheStoredUpdate() throws {
        let (store, id) = try Self.store()
        _ = try #require(Self.broadcast(store, id, at: 0))
        let once = try #require(Self.broadcast(store, id, at: 5, expiration: .immediately))
        #expect((once.delivered, once.stored, once.missed) == (6250, 0, 3750))
        let fates = store.records(now: Self.start + 10 * Self.second).broadcasts.map(\.reach)
        #expect((fates[0].fromStorage, fates[0].discarded, fates[0].stillStored) == (2500, 0, 2500))
    }

    /// `now` is read before the store's lock: a broadcast whose clock reading is older than
    /// the first broadcast's (another loop took the lock first) counts as at the start, never
    /// as 2⁶⁴ ns after it.
    @Test func aClockReadingBeforeTheStartIsTheStart() throws {
        let (store, id) = try Self.store()
        _ = try #require(Self.broadcast(store, id, at: 10))
        let early = try #require(
            ChannelStoreTests.bytes("com.example.app") {
                store.broadcast(id, bundle: $0, now: Self.start + 9 * Self.second)
            }
        )
        #expect((early.delivered, early.stored) == (5000, 5000))
        let fates = store.records(now: Self.start).broadcasts.map(\.reach)
        #expect((fates[0].fromStorage, fates[0].discarded) == (0, 5000))
        #expect((fates[1].fromStorage, fates[1].stillStored) == (0, 5000))
        #expect(store.records(now: Self.start).broadcasts.map(\.storage?.to) == [0, 0])
    }

    @Test func withoutReturnsNothingIsDeliveredFromStorage() throws {
        let (store, id) = try Self.store(returns: nil)
        _ = try #require(Self.broadcast(store, id, at: 0))
        let second = try #require(Self.broadcast(store, id, at: 100))
        #expect(second.stored == 5000)
        let counts = store.records(now: Self.start + 1000 * Self.second).counts
        #expect((counts.fromStorage, counts.discarded, counts.stillStored) == (0, 5000, 5000))
    }

    /// The worked-out counts and return times agree with returns drawn one by one from the same
    /// distribution (the fleet's own `sample`), for a log-normal spread.
    @Test func workedOutAgreesWithDraws() {
        let spread = LatencyDistribution.logNormal(median: .seconds(30), sigma: 1)
        let returns = SubscriberReturns(spread)
        let drawn = spread.draws(200_000, seed: 7).map { UInt64($0 * 1e9) }
        let span = StorageSpan(from: 10 * Self.second, to: 60 * Self.second)
        let within = drawn.filter { $0 > span.from && $0 <= span.to }.sorted()
        let share = Double(within.count) / Double(drawn.count)
        let worked = returns.back(by: span.to) - returns.back(by: span.from)
        #expect(abs(worked - share) < 0.005, "worked out \(worked), drawn \(share)")
        for q in [0.1, 0.5, 0.9, 0.99] {
            let fromDraws = Double(within[Int(q * Double(within.count))])
            let fromModel = Double(returns.within(span).returnTime(q))
            #expect(
                abs(fromModel - fromDraws) / fromDraws < 0.02,
                "q \(q): worked out \(fromModel), drawn \(fromDraws)"
            )
        }
        let update = StoredUpdate(
            accepted: span.from,
            backAtAcceptance: returns.back(by: span.from),
            offline: 100_000,
            stored: 80_000,
            expires: nil,
            entry: nil
        )
        let fate = update.fate(at: span.to, closed: true, returns: returns).reach
        #expect(abs(Double(fate.fromStorage) - 100_000 * share) < 500, "\(fate.fromStorage) against \(100_000 * share)")
        #expect(fate.fromStorage + fate.discarded == 80_000)
    }
}
