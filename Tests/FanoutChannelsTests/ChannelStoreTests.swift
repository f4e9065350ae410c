import FanoutAPNs
import FanoutScenarioTerms
import Testing

@testable import FanoutChannels

/// The sink's broadcast channels: per app, limited as APNs limits them, and the deliveries a
/// broadcast stands for.
@Suite struct ChannelStoreTests {
    static func bytes<Result>(_ text: String, _ body: (UnsafeRawBufferPointer) -> Result) -> Result {
        Array(text.utf8).withUnsafeBytes(body)
    }

    static func create(_ store: ChannelStore, _ bundle: String, policy: Int = 1) -> ChannelID? {
        guard case .created(let id) = bytes(bundle, { store.create(bundle: $0, storagePolicy: policy) }) else {
            return nil
        }
        return id
    }

    @Test func createReadListDelete() throws {
        let store = ChannelStore(subscribers: .fixed(7), seed: 1)
        let first = try #require(Self.create(store, "com.example.app", policy: 0))
        let second = try #require(Self.create(store, "com.example.app"))
        #expect(first != second)
        #expect(
            Self.bytes("com.example.app") { store.channel(first, bundle: $0) }
                == .init(bundle: Array("com.example.app".utf8), storagePolicy: 0, subscribers: 7)
        )
        #expect(Self.bytes("com.example.other") { store.channel(first, bundle: $0) } == nil)
        #expect(Self.bytes("com.example.app") { store.list(bundle: $0) } == [first, second])
        #expect(Self.bytes("com.example.other") { store.delete(first, bundle: $0) } == false)
        #expect(Self.bytes("com.example.app") { store.delete(first, bundle: $0) })
        #expect(Self.bytes("com.example.app") { store.delete(first, bundle: $0) } == false)
        #expect(Self.bytes("com.example.app") { store.list(bundle: $0) } == [second])
        let counts = store.counts
        #expect((counts.created, counts.deleted, counts.open) == (2, 1, 1))
    }

    @Test func theTenThousandAndFirstChannelOfAnAppIsRefused() throws {
        let store = ChannelStore(subscribers: .fixed(0), seed: 1)
        for _ in 0..<ChannelStore.limitPerApp { _ = try #require(Self.create(store, "com.example.app")) }
        #expect(Self.bytes("com.example.app") { store.create(bundle: $0, storagePolicy: 1) } == .limitReached)
        #expect(Self.create(store, "com.example.other") != nil)
        let last = try #require(Self.bytes("com.example.app") { store.list(bundle: $0) }.last)
        #expect(Self.bytes("com.example.app") { store.delete(last, bundle: $0) })
        #expect(Self.create(store, "com.example.app") != nil)
        #expect(store.counts.refusedCreations == 1)
        #expect(store.counts.open == ChannelStore.limitPerApp + 1)
    }

    @Test func theAppsWithChannelsAreBounded() {
        let store = ChannelStore(subscribers: .fixed(0), seed: 1)
        for app in 0..<ChannelStore.appLimit { #expect(Self.create(store, "com.example.app\(app)") != nil) }
        #expect(Self.create(store, "com.example.one-too-many") == nil)
        #expect(Self.create(store, "com.example.app0") != nil)
    }

    @Test func aBroadcastCountsItsSubscribersAsTheSharesSplitThem() throws {
        let shares = DeliveryShares(offline: 0.25, unreachable: 0.2)
        let store = ChannelStore(subscribers: .fixed(1000), shares: shares, seed: 1)
        let stored = try #require(Self.create(store, "com.example.app", policy: 1))
        let unstored = try #require(Self.create(store, "com.example.app", policy: 0))
        let reach = Self.bytes("com.example.app") { store.broadcast(stored, bundle: $0) }
        #expect(
            reach
                == .init(subscribers: 1000, delivered: 600, stored: 200, missed: 0, unreachable: 200, stillStored: 200)
        )
        let missed = Self.bytes("com.example.app") { store.broadcast(unstored, bundle: $0) }
        #expect(missed == .init(subscribers: 1000, delivered: 600, stored: 0, missed: 200, unreachable: 200))
        #expect(Self.bytes("com.example.other") { store.broadcast(stored, bundle: $0) } == nil)
        let counts = store.counts
        #expect((counts.broadcasts, counts.subscribers, counts.delivered) == (2, 2000, 1200))
        #expect((counts.stored, counts.missed, counts.unreachable) == (200, 200, 400))
    }

    @Test func subscribersAreDrawnPerChannelFromTheSeed() throws {
        func counts(seed: UInt64) throws -> [Int] {
            let store = ChannelStore(subscribers: .logNormal(median: 50_000, sigma: 1), seed: seed)
            return try (0..<20).map { _ in
                let id = try #require(Self.create(store, "com.example.app"))
                return try #require(Self.bytes("com.example.app") { store.channel(id, bundle: $0) }).subscribers
            }
        }
        #expect(try counts(seed: 3) == counts(seed: 3))
        #expect(try counts(seed: 3) != counts(seed: 4))
        #expect(try Set(counts(seed: 3)).count > 10)
    }

    @Test func subscriberSpreadsParseAndDraw() throws {
        #expect(try ChannelSubscribers(parsing: "10000") == .fixed(10_000))
        #expect(try ChannelSubscribers(parsing: "10_000") == .fixed(10_000))
        #expect(try ChannelSubscribers(parsing: "uniform:10-20") == .uniform(10, 20))
        #expect(try ChannelSubscribers(parsing: "lognormal:50000,1") == .logNormal(median: 50_000, sigma: 1))
        for bad in ["", "-1", "uniform:20-10", "lognormal:5", "lognormal:5,9", "many"] {
            #expect(throws: SinkScenarioError.self, "\(bad)") { try ChannelSubscribers(parsing: bad) }
        }
        var random = SinkRandom(seed: 1)
        for _ in 0..<100 { #expect((10...20).contains(ChannelSubscribers.uniform(10, 20).draw(&random))) }
    }
}
