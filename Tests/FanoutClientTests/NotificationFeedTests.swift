import FanoutTokens
import Testing

@testable import FanoutClient

/// The feed's hand-back of notifications whose connection ended: a started one (sent once, a
/// try spent) goes only to a connection that has shown its peer alive since the loss, so that
/// one outage costs it one try, not one a connection that has not yet read its own end.
struct NotificationFeedTests {
    /// A feed over 4 generated tokens, every batch read, and the batch they are in.
    static func feed() throws -> (NotificationFeed, FeedBatch) {
        let stream = try TokenStream(.generated(TokenGenerator(count: 4, seed: 1)))
        _ = try #require(stream.waitForSummary(timeout: .seconds(30)))
        let feed = NotificationFeed(stream)
        guard case .batch(let batch) = feed.take(proven: 0) else {
            Issue.record("the feed handed out no batch")
            throw CancellationError()
        }
        // Its tokens are the test's to hand back (a connection claims each before sending).
        #expect(batch.claimRest() == 0..<4)
        return (feed, batch)
    }

    /// A feed over `count` generated tokens in batches of `perBatch`, every batch read.
    static func feed(count: UInt64, perBatch: Int) throws -> NotificationFeed {
        let stream = try TokenStream(
            .generated(TokenGenerator(count: count, seed: 1)),
            configuration: TokenReaderConfiguration(batchTokens: perBatch, batchCount: 8)
        )
        _ = try #require(stream.waitForSummary(timeout: .seconds(30)))
        return NotificationFeed(stream)
    }

    static func batch(_ taken: NotificationFeed.Take) -> FeedBatch? {
        if case .batch(let batch) = taken { return batch }
        return nil
    }

    /// Two connections, batches of 6 and 2: the one whose batch is spent shares the other's,
    /// so neither is without a token while one is unclaimed; every token is claimed once.
    @Test func aConnectionWithoutTokensSharesTheBatchWithTheMostLeft() throws {
        let feed = try Self.feed(count: 8, perBatch: 6)
        let first = try #require(Self.batch(feed.take(proven: 0)))
        let second = try #require(Self.batch(feed.take(proven: 0)))
        #expect(first.count == 6 && second.count == 2)
        var claimed: [ObjectIdentifier: Set<Int>] = [:]
        func claim(_ batch: FeedBatch) -> Int? {
            guard let index = batch.claim() else { return nil }
            #expect(claimed[ObjectIdentifier(batch), default: []].insert(index).inserted)
            return index
        }
        #expect(claim(first) == 0)
        #expect(claim(second) == 0 && claim(second) == 1 && claim(second) == nil)
        // The second connection's batch is spent and the stream has no more: it shares the first.
        let shared = try #require(Self.batch(feed.take(proven: 0)))
        #expect(shared === first)
        #expect(claim(shared) == 1 && claim(first) == 2 && claim(shared) == 3)
        #expect(first.claimRest() == 4..<6)
        claimed[ObjectIdentifier(first), default: []].formUnion(4..<6)
        #expect(claim(shared) == nil)
        // Nothing is left to claim anywhere: the feed is finished.
        if case .finished = feed.take(proven: 0) {} else { Issue.record("not finished with every token claimed") }
        #expect(claimed.values.map(\.count).reduce(0, +) == 8)
    }

    /// Many threads claiming from one batch, and one claiming the rest midway: each token is
    /// claimed exactly once.
    @Test func concurrentClaimsGiveEachTokenOnce() async throws {
        let feed = try Self.feed(count: 2048, perBatch: 2048)
        let batch = try #require(Self.batch(feed.take(proven: 0)))
        #expect(batch.count == 2048)
        let claims = await withTaskGroup(of: [Int].self) { group in
            for worker in 0..<4 {
                group.addTask {
                    var mine: [Int] = []
                    while let index = batch.claim() {
                        mine.append(index)
                        if worker == 0 && mine.count == 500 { mine += Array(batch.claimRest()) }
                    }
                    return mine
                }
            }
            var all: [Int] = []
            for await mine in group { all += mine }
            return all
        }
        #expect(claims.count == 2048)
        #expect(Set(claims).count == 2048 && claims.allSatisfy { (0..<2048).contains($0) })
    }

    static func notification(_ batch: FeedBatch, _ index: Int32, sentAt: UInt64) -> PendingNotification {
        PendingNotification(batch: batch, index: index, attempts: sentAt == 0 ? 0 : 1, firstSentAt: sentAt)
    }

    /// The index of the returned notification `take` gave, or nil for anything else.
    static func returnedIndex(_ taken: NotificationFeed.Take) -> Int32? {
        if case .returned(let notification) = taken { return notification.index }
        return nil
    }

    @Test func startedWorkWaitsForAConnectionShownAliveSinceTheLoss() throws {
        let (feed, batch) = try Self.feed()
        #expect(feed.lossEpoch == 0)
        feed.giveBack([Self.notification(batch, 0, sentAt: 1_000), Self.notification(batch, 1, sentAt: 0)])
        #expect(feed.lossEpoch == 1)
        // Not shown alive since: the started one stays, the fresh one (never sent) goes.
        #expect(feed.takeStarted(proven: 0) == nil)
        #expect(Self.returnedIndex(feed.take(proven: 0)) == 1)
        // Nothing else for it, but the run is not over while started work waits.
        if case .finished = feed.take(proven: 0) { Issue.record("finished with started work waiting") }
        #expect(feed.startedWaiting == 1)
        // Shown alive since loss 1: it takes the started one, and then the feed is done.
        #expect(feed.takeStarted(proven: 1)?.index == 0)
        if case .finished = feed.take(proven: 1) {} else { Issue.record("not finished with nothing left") }
    }

    @Test func takeHandsStartedWorkOnlyToAShownConnectionToo() throws {
        let (feed, batch) = try Self.feed()
        feed.giveBack([Self.notification(batch, 2, sentAt: 5)])
        #expect(Self.returnedIndex(feed.take(proven: 0)) == nil)
        #expect(Self.returnedIndex(feed.take(proven: 1)) == 2)
    }

    @Test func eachLossStartsAnEpochAndFreshWorkStartsNone() throws {
        let (feed, batch) = try Self.feed()
        feed.giveBack([Self.notification(batch, 0, sentAt: 0)])
        #expect(feed.lossEpoch == 0)
        feed.giveBack([Self.notification(batch, 1, sentAt: 7)])
        feed.giveBack([Self.notification(batch, 2, sentAt: 9)])
        #expect(feed.lossEpoch == 2)
        // Shown alive after the first loss only: the second may have taken its peer too.
        #expect(feed.takeStarted(proven: 1) == nil)
        #expect(feed.takeStarted(proven: 2) != nil)
        #expect(feed.takeStarted(proven: 2) != nil)
        #expect(feed.takeStarted(proven: 2) == nil)
    }
}
