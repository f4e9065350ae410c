import Atomics
import FanoutTokens
import NIOConcurrencyHelpers

/// A batch of tokens being sent, kept until every one of its tokens has a final outcome (a
/// notification waiting for a retry still reads its token and fields from the batch).
///
/// Its tokens are claimed one at a time through a shared cursor, by the connection that took
/// the batch from the feed and by any other that ran out of tokens of its own
/// (`NotificationFeed.take`): no connection sits on tokens another one's due tickets need.
///
/// ```
///   tokens   0  1  2  3  4  5  6  7  8  9        count = 10
///            └──── claimed ────┘  ▲
///                               cursor: the next claim (fetch-add) gets 6, from any connection
/// ```
/// A claim is the only way to a token, and a batch is recycled only once every token it holds
/// has finished, so a claimed index always reads the tokens it was claimed in. The count is
/// kept here, not read from the `TokenBatch`: once the last token finishes, the reader refills
/// that batch, and a connection still holding this one must see it as spent.
final class FeedBatch: Sendable {
    let tokens: TokenBatch
    /// How many tokens the batch held when it was taken.
    let count: Int
    private let cursor = ManagedAtomic<Int>(0)
    private let unfinished: ManagedAtomic<Int>
    private let stream: TokenStream

    #if DEBUG
    /// Which tokens have finished: a second finish of one would recycle the batch while a
    /// connection still reads it, so debug builds stop at the first.
    private let finished: NIOLockedValueBox<[Bool]>
    #endif

    init(_ tokens: TokenBatch, stream: TokenStream) {
        self.tokens = tokens
        self.stream = stream
        count = tokens.count
        unfinished = ManagedAtomic(tokens.count)
        #if DEBUG
        finished = NIOLockedValueBox(Array(repeating: false, count: tokens.count))
        #endif
    }

    /// The next unclaimed token's index, now this caller's, or `nil` when every token has been
    /// claimed.
    func claim() -> Int? {
        let index = cursor.loadThenWrappingIncrement(ordering: .relaxed)
        return index < count ? index : nil
    }

    /// Claims every token left at once (a connection that ends or leaves them unsent).
    func claimRest() -> Range<Int> {
        let first = cursor.exchange(count, ordering: .relaxed)
        return min(first, count)..<count
    }

    /// Tokens not claimed yet (a moment's view: others may be claiming).
    var unclaimed: Int { max(0, count - cursor.load(ordering: .relaxed)) }

    /// Token `index` reached its final outcome; the last one gives the batch back to the reader.
    func finish(_ index: Int) {
        #if DEBUG
        finished.withLockedValue { finished in
            precondition(!finished[index], "token \(index) of a batch of \(finished.count) finished twice")
            finished[index] = true
        }
        #endif
        if unfinished.wrappingDecrementThenLoad(ordering: .acquiringAndReleasing) == 0 { stream.recycle(tokens) }
    }
}

/// One notification to send: a token of a batch, and how often it has been tried.
struct PendingNotification {
    let batch: FeedBatch
    let index: Int32
    /// Tries that ended without an answer or with a retryable one.
    var attempts: UInt16
    /// Whether a request of it went out before (sent again after a refused stream, a GOAWAY
    /// or a lost connection, which are not attempts): its answer's latency then holds those
    /// sends too.
    var wasSent = false
    /// When it was meant to be sent (the open model's schedule) or first sent (the closed
    /// model), uptime nanoseconds, or 0 before that: latency counts from it, so retries and a
    /// late send show in it.
    var firstSentAt: UInt64
    /// Its `apns-id` (a random UUID's 128 bits) when the run sends them, kept for its retries;
    /// zero before its first send.
    var id: (high: UInt64, low: UInt64) = (0, 0)

    /// It reached its final outcome.
    func finish() { batch.finish(Int(index)) }

    var token: TokenRecord { batch.tokens[Int(index)] }
}

/// The work every connection draws from: the token stream's batches, plus the notifications
/// that connections which ended hand back to be sent elsewhere (first in line). Those already
/// sent once ("started") are kept apart from those never sent: when the run stops taking new
/// work (the open model's schedule or the closed model's duration is over), the started ones
/// are still owed an outcome and the others are not sent.
///
/// A batch taken from the stream stays open to every connection until its last token is
/// claimed: a connection whose own batch is spent, with no new batch ready (the reader is
/// behind, or the set is read to its end), shares the open batch with the most tokens left.
/// Without it, near the end of a finite set one connection sat on a batch worth seconds of its
/// share while another had none; in the open model the starving connection's tickets then went
/// overdue to the one holding tokens, whose streams could not carry both shares (a sink answering
/// in 50 ms over 2 × 100 streams at 3,000/s: every full second p99 50.3 ms, the run's p99 600 ms).
/// A connection is now never without a token while any is unclaimed.
///
/// ```
///   stream ──► take() ──► batch A ◄── claim() ── connection 1
///                         batch B ◄── claim() ── connection 2
///   stream empty:  connection 2 (B spent) ──► take() ──► A (most left) ◄── claim() ── both
/// ```
///
/// A started notification handed back after a loss goes only to a connection that has shown
/// its peer alive since that loss. A server that dies ends every connection to it, but not at
/// the same moment for the sender: one that has not read its end yet would take the
/// notification, send it into the dead connection and lose it again — a second try spent on
/// one outage, a third on the next connection (seen: 45 of 100,000 failed ConnectionLost in a
/// 4-second outage under load). Each loss starts an epoch; a connection shows its peer alive
/// for an epoch by a PING sent after it began and acknowledged (`LoadConnection`).
///
/// ```
///   connection ends with started work ──► giveBack(…) ──► lossEpoch += 1
///   another connection: startedWaiting > 0, proven < lossEpoch ──► PING(lossEpoch)
///                       PING ACK(e) ──► proven = e ──► takeStarted(proven:) hands work out
/// ```
package final class NotificationFeed: Sendable {
    let stream: TokenStream
    private let returned = NIOLockedValueBox<(started: [PendingNotification], fresh: [PendingNotification])>(([], []))
    /// How many times a connection ended handing back started notifications.
    private let losses = ManagedAtomic<UInt64>(0)
    private let startedCount = ManagedAtomic(0)
    private let freshCount = ManagedAtomic(0)
    private let takenTokens = ManagedAtomic<UInt64>(0)
    private let closed = ManagedAtomic(false)
    private let interrupted = ManagedAtomic(false)
    /// Batches taken from the stream that may still hold unclaimed tokens (spent ones are
    /// dropped as they are found): at most the batches in circulation.
    private let open = NIOLockedValueBox<[FeedBatch]>([])
    /// No connection sends before this uptime (0: none held): FCM's project quota is spent
    /// until then (`holdSends`).
    private let heldUntil = ManagedAtomic<UInt64>(0)

    package init(_ stream: TokenStream) {
        self.stream = stream
    }

    /// Holds every connection's sends until `deadline` (uptime nanoseconds), or the later hold
    /// already set: the endpoint said its quota for the whole run is spent until then (FCM's 429
    /// QUOTA_EXCEEDED for the project, with Retry-After). What is in flight is answered as it
    /// comes; a sender that went on would only be answered 429 until then, each answer counted
    /// against nothing and a try spent.
    ///
    /// ```
    ///   429 project quota, Retry-After 25 ─► holdSends(until: now + 25 s)
    ///   every connection: nextNotification ─► held until then (woken at it) ─► sends again
    /// ```
    package func holdSends(until deadline: UInt64) {
        var current = heldUntil.load(ordering: .relaxed)
        while deadline > current {
            let (exchanged, original) = heldUntil.compareExchange(
                expected: current,
                desired: deadline,
                ordering: .relaxed
            )
            if exchanged { return }
            current = original
        }
    }

    /// Until when sends are held (0, or a past time: they are not).
    @inline(__always)
    var sendsHeldUntil: UInt64 { heldUntil.load(ordering: .relaxed) }

    enum Take {
        case returned(PendingNotification)
        case batch(FeedBatch)
        /// The reader has nothing ready yet.
        case notReady
        /// Every token has been handed out and nothing waits to be sent again.
        case finished
    }

    /// The next work, never waiting: a returned notification, else a new batch, else an open
    /// batch another connection is claiming from (its tokens are shared, not handed over).
    /// Started notifications go only to a connection `proven` alive since the last loss
    /// (`lossEpoch`).
    func take(proven: UInt64) -> Take {
        if returnedWaiting > 0, let pending = takeReturned(proven: proven, fresh: true) { return .returned(pending) }
        if let batch = nextBatch() { return .batch(batch) }
        if let batch = sharedBatch() { return .batch(batch) }
        // The reader records its summary before it closes the queue: once the summary is
        // there, every batch it read is in the queue.
        guard stream.summary != nil else { return .notReady }
        if let batch = nextBatch() { return .batch(batch) }
        if let pending = takeReturned(proven: proven, fresh: true) { return .returned(pending) }
        if let batch = sharedBatch() { return .batch(batch) }
        // Started work waiting for a connection that has shown its peer alive is not the end.
        return startedWaiting > 0 ? .notReady : .finished
    }

    private func nextBatch() -> FeedBatch? {
        while let tokens = stream.tryNext() {
            takenTokens.wrappingIncrement(by: UInt64(tokens.count), ordering: .relaxed)
            if !tokens.isEmpty {
                let batch = FeedBatch(tokens, stream: stream)
                open.withLockedValue { open in
                    open.removeAll { $0.unclaimed == 0 }
                    open.append(batch)
                }
                return batch
            }
            stream.recycle(tokens)
        }
        return nil
    }

    /// The open batch with the most tokens left to claim, if any has one.
    private func sharedBatch() -> FeedBatch? {
        open.withLockedValue { open in
            open.removeAll { $0.unclaimed == 0 }
            return open.max { $0.unclaimed < $1.unclaimed }
        }
    }

    /// A handed-back notification that was already sent once, if one waits and the caller is
    /// `proven` alive since the last loss.
    func takeStarted(proven: UInt64) -> PendingNotification? {
        guard startedCount.load(ordering: .relaxed) > 0, proven >= lossEpoch else { return nil }
        return takeReturned(proven: proven, fresh: false)
    }

    /// A started notification if `proven` covers every loss (read under the lock that
    /// `giveBack` counts them under), else a fresh one if `fresh`.
    private func takeReturned(proven: UInt64, fresh: Bool) -> PendingNotification? {
        returned.withLockedValue { lists in
            if proven >= losses.load(ordering: .relaxed), let last = lists.started.popLast() {
                startedCount.wrappingDecrement(ordering: .relaxed)
                return last
            }
            guard fresh, let last = lists.fresh.popLast() else { return nil }
            freshCount.wrappingDecrement(ordering: .relaxed)
            return last
        }
    }

    /// Hands back notifications a connection could not finish (it ended); when any of them was
    /// sent, that starts a loss epoch.
    func giveBack(_ notifications: some Sequence<PendingNotification>) {
        returned.withLockedValue { lists in
            var startedAny = false
            for notification in notifications {
                if notification.firstSentAt == 0 {
                    lists.fresh.append(notification)
                    freshCount.wrappingIncrement(ordering: .relaxed)
                } else {
                    lists.started.append(notification)
                    startedCount.wrappingIncrement(ordering: .relaxed)
                    startedAny = true
                }
            }
            // Inside the lock: a connection that sees the work sees the epoch that holds it back.
            if startedAny { losses.wrappingIncrement(ordering: .relaxed) }
        }
    }

    /// The number of losses so far: a connection takes started work once a PING it sent after
    /// the last of them was acknowledged.
    var lossEpoch: UInt64 { losses.load(ordering: .relaxed) }

    /// Notifications waiting to be sent again.
    var returnedWaiting: Int { startedCount.load(ordering: .relaxed) + freshCount.load(ordering: .relaxed) }

    /// Those of them already sent once: still owed an outcome after the run stops taking work.
    var startedWaiting: Int { startedCount.load(ordering: .relaxed) }

    /// Tokens handed out in batches so far.
    var taken: UInt64 { takenTokens.load(ordering: .relaxed) }

    /// Stops handing out new work (the closed model's duration is over): connections finish
    /// what they started and leave the rest.
    func close() { closed.store(true, ordering: .relaxed) }

    /// Stops handing out new work because the run was interrupted: as `close()`, but what is
    /// left unsent counts as never sent (`LoadCounts.unsent`), not as past the schedule.
    func interrupt() {
        interrupted.store(true, ordering: .relaxed)
        closed.store(true, ordering: .relaxed)
    }

    var isClosed: Bool { closed.load(ordering: .relaxed) }

    /// Whether `interrupt()` closed it.
    var isInterrupted: Bool { interrupted.load(ordering: .relaxed) }

    /// Whether every token has been read and handed out, and nothing waits to be sent again
    /// (what connections hold is theirs until they end).
    var isDrained: Bool {
        guard let summary = stream.summary else { return false }
        return taken == summary.tokens && returnedWaiting == 0
    }

    /// Takes everything left (after `stream.cancel()`, what was read), for the caller to fail
    /// or leave unsent.
    func drain() -> [PendingNotification] {
        var left: [PendingNotification] = []
        while case let taken = take(proven: .max), !isFinishedOrNotReady(taken) {
            switch taken {
            case .returned(let notification): left.append(notification)
            case .batch(let batch):
                for index in batch.claimRest() {
                    left.append(PendingNotification(batch: batch, index: Int32(index), attempts: 0, firstSentAt: 0))
                }
            case .notReady, .finished: break
            }
        }
        return left
    }

    private func isFinishedOrNotReady(_ taken: Take) -> Bool {
        switch taken {
        case .notReady, .finished: true
        case .returned, .batch: false
        }
    }
}
