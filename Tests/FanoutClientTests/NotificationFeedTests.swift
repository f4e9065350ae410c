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
        return (feed, batch)
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
