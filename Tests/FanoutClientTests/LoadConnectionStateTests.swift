import Crypto
import FanoutAPNs
import FanoutEndpoint
import FanoutTokens
import Foundation
import NIOConcurrencyHelpers
import Testing

@testable import FanoutClient

/// The sender's connection as a state machine, alone: no socket, no event loop and no clock —
/// every event carries its time, and the steps it returns are checked one by one. The feed and
/// the tickets are the run's real ones (they read no clock either), over generated tokens.
struct LoadConnectionStateTests {
    static let ms: UInt64 = 1_000_000
    static let second: UInt64 = 1_000_000_000

    /// A feed over `count` generated tokens in batches of `perBatch`, every batch read.
    static func feed(_ count: UInt64, perBatch: Int = 64) throws -> NotificationFeed {
        let stream = try TokenStream(
            .generated(TokenGenerator(count: count, seed: 3)),
            configuration: TokenReaderConfiguration(batchTokens: perBatch, batchCount: 8)
        )
        _ = try #require(stream.waitForSummary(timeout: .seconds(30)))
        return NotificationFeed(stream)
    }

    static func shape(streams: Int = 10, timeout: Duration = .seconds(30), attempts: Int = 3) -> LoadShape {
        var shape = LoadShape()
        shape.streamsPerConnection = streams
        shape.streamTimeout = timeout
        shape.maxAttempts = attempts
        return shape
    }

    static func machine(
        _ feed: NotificationFeed,
        tickets: ArrivalTickets? = nil,
        slot: Int = 0,
        shape: LoadShape = shape(),
        providerTokens: ProviderTokens? = nil,
        generation: Int = 0,
        notBefore: UInt64 = 0,
        now: UInt64 = 0
    ) -> LoadConnectionState {
        LoadConnectionState(
            feed: feed,
            tickets: tickets,
            slot: slot,
            shape: shape,
            retrySeed: 11,
            authorizations: providerTokens,
            authorizationGeneration: generation,
            notBefore: notBefore,
            now: now
        )
    }

    /// What a step was, for comparing: the notification's token index, tries and start.
    enum Seen: Equatable {
        case ping(UInt64)
        case reset(stream: UInt32, started: UInt64?)
        case send(index: Int32, attempts: UInt16, firstSentAt: UInt64, lag: UInt64?)
        case goAway
        case wait
    }

    /// Runs the state's turn at `now` as the glue does, with `streams` streams allowed, sending
    /// each notification on stream 2·tag + 1 (first sends start at `now`). Returns the steps.
    @discardableResult
    static func turn(
        _ state: inout LoadConnectionState,
        now: UInt64,
        streams: Int = 100,
        hasPeerSettings: Bool = true,
        waited: ((LoadConnectionState.StreamWait) -> Void)? = nil
    ) -> [Seen] {
        var seen: [Seen] = []
        var available = streams
        while true {
            let step = state.next(
                now: now,
                continuing: !seen.isEmpty,
                hasPeerSettings: hasPeerSettings,
                availableStreams: available
            )
            switch step {
            case .ping(let epoch):
                seen.append(.ping(epoch))
            case .reset(let stream, let started):
                seen.append(.reset(stream: stream, started: started))
            case .send(var send):
                if let wait = send.waited { waited?(wait) }
                if send.notification.firstSentAt == 0 { send.notification.firstSentAt = now }
                seen.append(
                    .send(
                        index: send.notification.index,
                        attempts: send.notification.attempts,
                        firstSentAt: send.notification.firstSentAt,
                        lag: send.lag
                    )
                )
                state.sent(send, stream: UInt32(2 * send.tag + 1), digestHash: 0, timed: false, now: now)
                available -= 1
            case .goAway:
                seen.append(.goAway)
                return seen
            case .wait:
                seen.append(.wait)
                return seen
            }
        }
    }

    /// Answers the stream tagged `tag` with `result` at `now`; the notification's start if that
    /// was its final outcome.
    @discardableResult
    static func answer(
        _ state: inout LoadConnectionState,
        tag: Int,
        _ result: RetryPolicy.Result = .answered(status: 200, reason: nil),
        now: UInt64
    ) throws -> UInt64? {
        let released = state.release(tag: UInt64(tag))
        let entry = try #require(released, "tag \(tag) is not in flight")
        return state.settle(entry, after: result, now: now)
    }

    /// Turns at each `nextWakeUp` from `now` until a turn sends something (at most 10 turns),
    /// flushing the counts when they are due as the glue does; that turn's steps and time.
    static func turnsUntilASend(_ state: inout LoadConnectionState, from now: UInt64) throws -> ([Seen], UInt64) {
        var now = now
        for _ in 0..<10 {
            let steps = turn(&state, now: now)
            if state.flushDue(now: now) { _ = state.flush(now: now) { _ in } }
            if !sends(steps).isEmpty { return (steps, now) }
            let wakeUp = state.nextWakeUp
            now = max(now, try #require(wakeUp, "nothing to wake for"))
        }
        Issue.record("no send in 10 turns")
        return ([], now)
    }

    static func sends(_ steps: [Seen]) -> [Int32] {
        steps.compactMap { if case .send(let index, _, _, _) = $0 { index } else { nil } }
    }

    @Test func everyTokenIsSentOnceAndTheConnectionSaysGoAwayWhenAllAreAnswered() throws {
        let feed = try Self.feed(3)
        var state = Self.machine(feed)
        #expect(Self.turn(&state, now: 0, hasPeerSettings: false) == [.wait])
        let steps = Self.turn(&state, now: 5)
        #expect(Self.sends(steps) == [0, 1, 2] && steps.last == .wait)
        #expect(state.inFlight == 3)
        for tag in 0..<3 { #expect(try Self.answer(&state, tag: tag, now: 9) == 5) }
        #expect(Self.turn(&state, now: 9) == [.goAway])
        var counts = LoadCounts()
        _ = state.flush(now: 9) { counts = $0 }
        #expect(counts.accepted == 3 && counts.requests == 3 && counts.answeredOK == 3)
        #expect(state.counts.accepted == 0, "cleared once flushed")
        #expect(state.nextWakeUp == nil)
    }

    @Test func theServersStreamLimitHoldsSendsBackUntilAStreamFrees() throws {
        let feed = try Self.feed(5)
        var state = Self.machine(feed)
        #expect(Self.sends(Self.turn(&state, now: 0, streams: 2)) == [0, 1])
        // At capacity, only an answer (or the timeout scan, or the flush) wakes it.
        #expect(state.nextWakeUp == LoadConnectionState.timeoutScanInterval)
        try Self.answer(&state, tag: 1, now: 3)
        #expect(Self.sends(Self.turn(&state, now: 3, streams: 1)) == [2])
    }

    @Test func refusedStreamIsSentAgainAtOnceWithoutSpendingATry() throws {
        let feed = try Self.feed(1)
        var state = Self.machine(feed)
        Self.turn(&state, now: 1)
        #expect(try Self.answer(&state, tag: 0, .refused, now: 2) == nil)
        #expect(Self.turn(&state, now: 2) == [.send(index: 0, attempts: 0, firstSentAt: 1, lag: nil), .wait])
    }

    /// The harness account times only a notification's first request: one sent again after a
    /// refused stream (no attempt spent) or after a retryable answer holds earlier requests in
    /// its latency, and is not a first request.
    @Test func onlyANotificationsFirstRequestIsItsFirst() throws {
        let feed = try Self.feed(2)
        var state = Self.machine(feed)
        Self.turn(&state, now: 1)
        let released = state.release(tag: 0)
        let first = try #require(released)
        #expect(first.isFirstRequest)
        #expect(state.settle(first, after: .refused, now: 2) == nil)
        let releasedOther = state.release(tag: 1)
        let other = try #require(releasedOther)
        #expect(other.isFirstRequest)
        #expect(state.settle(other, after: .answered(status: 429, reason: .apns(.tooManyRequests)), now: 2) == nil)
        Self.turn(&state, now: 3)
        let releasedAgain = state.release(tag: 1)
        let again = try #require(releasedAgain, "the refused one, sent again at once")
        #expect(again.notification.index == first.notification.index && again.notification.attempts == 0)
        #expect(!again.isFirstRequest)
        let turn = Self.turn(&state, now: 200 * Self.ms)
        #expect(Self.sends(turn).count == 1, "\(turn): the retry after its backoff")
        let releasedRetry = state.release(tag: 1)
        let retry = try #require(releasedRetry)
        #expect(retry.notification.attempts == 1 && !retry.isFirstRequest)
    }

    @Test func aRetryableAnswerWaitsOutItsBackoffThenSpendsATry() throws {
        let feed = try Self.feed(1)
        var state = Self.machine(feed)
        Self.turn(&state, now: 1)
        #expect(
            try Self.answer(&state, tag: 0, .answered(status: 429, reason: .apns(.tooManyRequests)), now: Self.ms)
                == nil
        )
        #expect(Self.turn(&state, now: Self.ms) == [.wait])
        // Full jitter on 100 ms: due within it.
        let wakeUp = state.nextWakeUp
        let due = try #require(wakeUp)
        #expect(due >= Self.ms && due <= Self.ms + 100 * Self.ms)
        #expect(Self.turn(&state, now: due - 1) == [.wait])
        #expect(Self.turn(&state, now: due) == [.send(index: 0, attempts: 1, firstSentAt: 1, lag: nil), .wait])
        #expect(state.counts.retries == 1 && state.counts.answers.reduce(0, +) == 1)
    }

    /// FCM's project quota spent until a time: no connection takes new work before it (woken at
    /// it), a later hold wins over an earlier one, and sends go on at it.
    @Test func aHeldFeedSendsNothingUntilTheHoldEnds() throws {
        let feed = try Self.feed(4)
        var state = Self.machine(feed)
        #expect(Self.sends(Self.turn(&state, now: 1, streams: 1)) == [0])
        try Self.answer(&state, tag: 0, now: Self.ms)
        feed.holdSends(until: 500 * Self.ms)
        feed.holdSends(until: 200 * Self.ms)
        #expect(feed.sendsHeldUntil == 500 * Self.ms)
        #expect(Self.turn(&state, now: Self.ms) == [.wait])
        #expect(state.nextWakeUp == 500 * Self.ms)
        #expect(Self.turn(&state, now: 500 * Self.ms - 1) == [.wait])
        #expect(Self.sends(Self.turn(&state, now: 500 * Self.ms)) == [1, 2, 3])
    }

    /// A connection whose first answer refused the run's credentials sends nothing (no new
    /// token, no retry falling due) and asks to be woken for none of it, while what it has in
    /// flight is still answered and timed out; released, it sends the rest.
    @Test func withheldCredentialsSendNothingUntilReleased() throws {
        let feed = try Self.feed(5)
        var state = Self.machine(feed, shape: Self.shape(timeout: .seconds(1)))
        #expect(Self.sends(Self.turn(&state, now: 1, streams: 3)) == [0, 1, 2])
        state.withholdCredentials()
        #expect(state.isWithheld)
        // A retryable answer: its retry falls due within 100 ms, and is not sent.
        try Self.answer(&state, tag: 0, .answered(status: 429, reason: .apns(.tooManyRequests)), now: Self.ms)
        try Self.answer(&state, tag: 1, now: Self.ms)
        #expect(Self.turn(&state, now: Self.ms) == [.wait])
        #expect(Self.turn(&state, now: 200 * Self.ms) == [.wait])
        // The retry due since 101 ms at the latest asks for no wake-up: the first is the stream
        // still in flight's timeout scan.
        let wakeUp = state.nextWakeUp
        #expect(wakeUp == LoadConnectionState.timeoutScanInterval)
        #expect(Self.turn(&state, now: 2 * Self.second) == [.reset(stream: 5, started: nil), .wait])
        #expect(state.inFlight == 0)
        // Nothing in flight, nothing sent, the counts flushed: no wake-up at all, and no GOAWAY.
        if state.flushDue(now: 2 * Self.second) { _ = state.flush(now: 2 * Self.second) { _ in } }
        #expect(state.nextWakeUp == nil)
        #expect(Self.turn(&state, now: 3 * Self.second) == [.wait])
        state.releaseCredentials()
        let sent = Self.sends(Self.turn(&state, now: 3 * Self.second))
        #expect(sent.sorted() == [0, 2, 3, 4])
    }

    @Test func aStreamUnansweredForTheTimeoutIsResetAndTriedAgain() throws {
        let feed = try Self.feed(1)
        var state = Self.machine(feed, shape: Self.shape(timeout: .seconds(1), attempts: 2))
        Self.turn(&state, now: 1)
        // Not yet at 0.9 s (the scan runs every 250 ms).
        #expect(Self.turn(&state, now: 900 * Self.ms) == [.wait])
        #expect(Self.turn(&state, now: 1_250 * Self.ms) == [.reset(stream: 1, started: nil), .wait])
        let (retried, at) = try Self.turnsUntilASend(&state, from: 1_250 * Self.ms)
        #expect(retried.first == .send(index: 0, attempts: 1, firstSentAt: 1, lag: nil))
        // Its last try times out too: it fails, and its latency counts from its first send.
        #expect(Self.turn(&state, now: at + 1_250 * Self.ms).first == .reset(stream: 1, started: 1))
        #expect(state.counts.failed[FailureCause.all.firstIndex(of: .timeout)!] == 1)
    }

    /// A connection lost with work in flight: the work goes back to the feed, and another
    /// connection takes it only once a PING it sent after the loss was acknowledged.
    @Test func workLostWithAConnectionWaitsForAnotherToProveItsPeerAlive() throws {
        let feed = try Self.feed(2)
        var first = Self.machine(feed, slot: 0)
        var second = Self.machine(feed, slot: 1)
        #expect(Self.sends(Self.turn(&first, now: 1)) == [0, 1])
        var finals: [UInt64] = []
        #expect(first.connectionEnded(now: 10) { finals.append($0) })
        #expect(finals.isEmpty && feed.startedWaiting == 2 && feed.lossEpoch == 1)
        // Not shown alive since the loss: a PING, and nothing sent.
        #expect(Self.turn(&second, now: 10) == [.ping(1), .wait])
        #expect(Self.turn(&second, now: 11) == [.wait])
        second.pingAcknowledged(1)
        #expect(
            Set(Self.sends(Self.turn(&second, now: 12))) == [0, 1],
            "each sent again, its first send kept, a try spent"
        )
        #expect(second.counts.requests == 2)
    }

    @Test func aPingUnansweredForTheStreamTimeoutStandsAsAnAnswer() throws {
        let feed = try Self.feed(1)
        var first = Self.machine(feed, slot: 0)
        var second = Self.machine(feed, slot: 1, shape: Self.shape(timeout: .seconds(2)))
        Self.turn(&first, now: 1)
        _ = first.connectionEnded(now: 1) { _ in }
        #expect(Self.turn(&second, now: 1) == [.ping(1), .wait])
        // It asks the feed again every millisecond meanwhile; the PING's timeout is 2 s.
        #expect(second.nextWakeUp == 1 + Self.ms)
        #expect(Self.turn(&second, now: Self.second) == [.wait])
        #expect(
            Self.turn(&second, now: 1 + 2 * Self.second) == [
                .send(index: 0, attempts: 1, firstSentAt: 1, lag: nil), .wait,
            ]
        )
        #expect(second.proof.provenEpoch == 1)
    }

    /// GOAWAY mid-run: the server answers the streams up to its last stream id; those past it
    /// come back as refused (the connection reports them so) and, when the connection ends,
    /// go to another connection without having spent a try.
    @Test func aGoAwayMidRunSendsTheStreamsPastItsLastIdAgainElsewhere() throws {
        let feed = try Self.feed(4)
        var first = Self.machine(feed, slot: 0)
        #expect(Self.sends(Self.turn(&first, now: 1)) == [0, 1, 2, 3])
        // GOAWAY with last stream id 3: streams 1 and 3 answered, 5 and 7 refused.
        try Self.answer(&first, tag: 0, now: 2)
        try Self.answer(&first, tag: 1, now: 2)
        try Self.answer(&first, tag: 2, .refused, now: 2)
        try Self.answer(&first, tag: 3, .refused, now: 2)
        _ = first.connectionEnded(now: 3) { _ in Issue.record("nothing was lost") }
        #expect(first.counts.accepted == 2)
        var second = Self.machine(feed, slot: 1)
        #expect(Self.turn(&second, now: 4).first == .ping(1))
        second.pingAcknowledged(1)
        let steps = Self.turn(&second, now: 5)
        #expect(Set(Self.sends(steps)) == [2, 3])
        #expect(steps.allSatisfy { if case .send(_, let attempts, _, _) = $0 { attempts == 0 } else { true } })
    }

    /// The open model: tickets dealt in turn to 2 slots at 1 ms apart; a connection for slot 0
    /// alone takes its own as they fall due and its neighbour's once 2 ms overdue.
    @Test func aTicketItsConnectionLeftOverdueIsTakenOver() throws {
        let feed = try Self.feed(10)
        let start = 100 * Self.ms
        let tickets = ArrivalTickets(
            schedule: try ArrivalSchedule(rate: 1000, duration: .milliseconds(10)),
            slots: 2,
            start: start
        )
        var state = Self.machine(feed, tickets: tickets, slot: 0)
        let steps = Self.turn(&state, now: start + 4 * Self.ms)
        let starts = steps.compactMap { if case .send(_, _, let at, _) = $0 { at - start } else { nil } }
        // Its own 0, 2 and 4 ms; slot 1's 1 ms (3 ms overdue); its 3 ms is only 1 ms overdue.
        #expect(starts == [0, 2 * Self.ms, 4 * Self.ms, Self.ms], "\(steps)")
        // It waits for the next due ticket (its own at 6 ms, slot 1's 3 ms at 5 ms).
        #expect(state.nextWakeUp == start + 5 * Self.ms)
    }

    /// A source whose value's generation moves when told, counting the refusals it is told of.
    final class CountingSource: AuthorizationSource, @unchecked Sendable {
        var generation = 1
        var refusals: [Int] = []
        func authorization() -> (value: String, generation: Int)? { ("Bearer \(generation)", generation) }
        func refused(generation: Int) { refusals.append(generation) }
        var renews: Bool { true }
    }

    /// A refusal is told to the source once until the value is renewed, and a refusal of a
    /// request sent before (or in the turn of) the renewal is the old value's, not told again.
    @Test func aRefusalIsToldOncePerValueAndNotForRequestsSentBeforeItsRenewal() {
        let source = CountingSource()
        var watch = LoadConnectionState.AuthorizationWatch(source: source, generation: 1)
        watch.refused(sentAt: 10)
        watch.refused(sentAt: 11)
        #expect(source.refusals == [1] && watch.awaitsRenewal)
        #expect(watch.renewed(now: 20) == nil)
        source.generation = 2
        #expect(watch.renewed(now: 20) == "Bearer 2")
        #expect(!watch.awaitsRenewal)
        // Sent at 15 and at 20 with the value before: their 401s are that value's.
        watch.refused(sentAt: 15)
        watch.refused(sentAt: 20)
        #expect(source.refusals == [1])
        watch.refused(sentAt: 21)
        #expect(source.refusals == [1, 2])
    }

    /// A connection of the open model alone (one slot) over `tokens` tokens, 1,000 tickets a
    /// second for `duration` from 1 s on, with pacing `window`, made at 1 s.
    static func paced(
        tokens: UInt64,
        window: Duration,
        duration: Duration
    ) throws -> (state: LoadConnectionState, start: UInt64) {
        var shape = Self.shape(streams: 100)
        shape.coalescing = .fixed(window)
        let tickets = ArrivalTickets(schedule: try ArrivalSchedule(rate: 1000, duration: duration), start: second)
        return (Self.machine(try Self.feed(tokens), tickets: tickets, shape: shape, now: second), second)
    }

    /// A pacing window: each window's tickets go out at its start, in one turn; those sent before
    /// their due time count their latency from the send (they lag nothing), one sent late (the
    /// loop woke late) from its due time; the connection wakes at the next window's start.
    @Test func ticketsGoOutAWindowAtATimeTimedFromTheirSend() throws {
        var (state, start) = try Self.paced(tokens: 40, window: .milliseconds(10), duration: .milliseconds(30))
        let first = Self.turn(&state, now: start)
        #expect(Self.sends(first) == Array(0..<10), "the tickets due at 0–9 ms")
        #expect(
            first.allSatisfy { if case .send(_, _, let at, let lag) = $0 { at == start && lag == 0 } else { true } }
        )
        #expect(state.nextWakeUp == start + 10 * Self.ms)
        // The loop wakes 300 µs late: ticket 10 went out late and counts from its due time.
        let late = start + 10 * Self.ms + 300_000
        let second = Self.turn(&state, now: late)
        #expect(Self.sends(second) == Array(10..<20))
        let starts = second.compactMap { if case .send(_, _, let at, _) = $0 { at } else { nil } }
        #expect(starts.first == start + 10 * Self.ms && starts.dropFirst().allSatisfy { $0 == late })
        #expect(state.nextWakeUp == start + 20 * Self.ms)
    }

    /// A ticket due while every stream the server allows is busy waits for one, and says how
    /// long and how many were busy (1: APNs's first-request limit); the generator's lag leaves
    /// that wait out.
    @Test func aTicketDueWhileTheStreamsAreBusySaysItWaited() throws {
        var (state, start) = try Self.paced(tokens: 10, window: .zero, duration: .milliseconds(10))
        var waits: [LoadConnectionState.StreamWait] = []
        #expect(Self.sends(Self.turn(&state, now: start, streams: 1) { waits.append($0) }) == [0])
        // The server allows one stream: tickets 1–4 fall due and wait.
        #expect(Self.turn(&state, now: start + 4 * Self.ms, streams: 0) == [.wait])
        try Self.answer(&state, tag: 0, now: start + 80 * Self.ms)
        let after = Self.turn(&state, now: start + 80 * Self.ms, streams: 1) { waits.append($0) }
        #expect(Self.sends(after) == [1])
        #expect(waits == [.init(nanoseconds: 79 * Self.ms, streams: 1)], "\(waits)")
        #expect(after.contains { if case .send(_, _, _, let lag) = $0 { lag == 0 } else { false } })
    }

    /// The open model under a quota hold: tickets that fall due in it go out at its end, late
    /// from their due time (their latency) but lagging nothing of the generator's and waiting
    /// for no stream: the wait was the quota's. Nothing goes out, and no overdue ticket wakes
    /// the connection, before.
    @Test func ticketsHeldByTheQuotaLagNothingOfTheGenerators() throws {
        var (state, start) = try Self.paced(tokens: 10, window: .zero, duration: .milliseconds(10))
        var waits: [LoadConnectionState.StreamWait] = []
        // One stream, busy from the start: the hold, not the stream, is what the tickets wait for.
        #expect(Self.sends(Self.turn(&state, now: start, streams: 1)) == [0])
        state.feed.holdSends(until: start + 50 * Self.ms)
        try Self.answer(&state, tag: 0, now: start + 5 * Self.ms)
        #expect(Self.turn(&state, now: start + 5 * Self.ms) == [.wait])
        #expect(state.nextWakeUp == start + 50 * Self.ms)
        let after = Self.turn(&state, now: start + 50 * Self.ms) { waits.append($0) }
        #expect(Self.sends(after) == Array(1...9))
        #expect(waits.isEmpty, "\(waits)")
        #expect(
            after.allSatisfy {
                if case .send(_, _, let at, let lag) = $0 { at < start + 10 * Self.ms && lag == 0 } else { true }
            }
        )
    }

    /// A run whose feed closes (a signal, a duration's end) while the quota holds ends then,
    /// not when the hold would have.
    @Test func aHoldDoesNotKeepAClosedRunWaiting() throws {
        let feed = try Self.feed(10)
        var state = Self.machine(feed)
        #expect(Self.sends(Self.turn(&state, now: 1, streams: 1)) == [0])
        try Self.answer(&state, tag: 0, now: Self.ms)
        feed.holdSends(until: 3_600 * Self.second)
        feed.close()
        #expect(Self.turn(&state, now: 2 * Self.ms) == [.goAway])
    }

    /// Tickets due before the connection was up waited for connecting, not for a stream.
    @Test func aConnectionUpLateNamesNoStreamWait() throws {
        var (state, start) = try Self.paced(tokens: 10, window: .zero, duration: .milliseconds(10))
        state.started(now: start + 5 * Self.ms)
        var waits: [LoadConnectionState.StreamWait] = []
        let steps = Self.turn(&state, now: start + 5 * Self.ms) { waits.append($0) }
        #expect(Self.sends(steps) == Array(0...5))
        #expect(waits.isEmpty, "\(waits)")
    }

    /// A ticket due while its connection was still connecting, then kept waiting for a stream:
    /// only the time since every stream was busy is a stream wait (the rest was connecting,
    /// which is not the server's stream limit).
    @Test func aStreamWaitCountsFromWhenTheStreamsWereBusy() throws {
        var (state, start) = try Self.paced(tokens: 10, window: .zero, duration: .milliseconds(10))
        state.started(now: start + 5 * Self.ms)
        var waits: [LoadConnectionState.StreamWait] = []
        #expect(Self.sends(Self.turn(&state, now: start + 5 * Self.ms, streams: 1) { waits.append($0) }) == [0])
        try Self.answer(&state, tag: 0, now: start + 85 * Self.ms)
        let after = Self.turn(&state, now: start + 85 * Self.ms, streams: 1) { waits.append($0) }
        #expect(Self.sends(after) == [1])
        // Ticket 1 fell due at 1 ms; the one stream was busy from 5 ms to 85 ms (it said 84 ms).
        #expect(waits == [.init(nanoseconds: 80 * Self.ms, streams: 1)], "\(waits)")
    }

    /// The schedule ends with tokens still in the batch: they are left unsent (unscheduled),
    /// and once the sent ones are answered the connection says GOAWAY.
    @Test func theEndOfTheScheduleLeavesTheRestOfTheTokensUnsent() throws {
        let feed = try Self.feed(10)
        let tickets = ArrivalTickets(
            schedule: try ArrivalSchedule(rate: 1000, duration: .milliseconds(3)),
            slots: 1,
            start: Self.second
        )
        var state = Self.machine(feed, tickets: tickets)
        let steps = Self.turn(&state, now: Self.second + 5 * Self.ms)
        #expect(Self.sends(steps) == [0, 1, 2] && steps.last == .wait)
        #expect(state.phase == .scheduleEnded)
        #expect(state.counts.unscheduled == 7)
        for tag in 0..<3 { try Self.answer(&state, tag: tag, now: Self.second + 6 * Self.ms) }
        #expect(Self.turn(&state, now: Self.second + 6 * Self.ms) == [.goAway])
    }

    /// An interrupted run (a signal): what is in flight is still answered, and the tokens the
    /// connection holds but never sent count as unsent, neither unscheduled nor failed.
    @Test func anInterruptionLeavesTheTokensNotSentUnsentAndLetsTheSentBeAnswered() throws {
        let feed = try Self.feed(10)
        var state = Self.machine(feed)
        #expect(Self.sends(Self.turn(&state, now: 0, streams: 3)) == [0, 1, 2])
        feed.interrupt()
        try Self.answer(&state, tag: 0, now: 1)
        #expect(Self.sends(Self.turn(&state, now: 1)) == [], "nothing new goes out")
        #expect(state.counts.unsent == 7 && state.counts.unscheduled == 0)
        for tag in 1..<3 { try Self.answer(&state, tag: tag, now: 2) }
        #expect(Self.turn(&state, now: 2) == [.goAway])
        #expect(state.counts.accepted == 3 && state.counts.failed.reduce(0, +) == 0)
    }

    @Test func nothingIsSentBeforeTheStartTime() throws {
        let feed = try Self.feed(1)
        var state = Self.machine(feed, notBefore: 50 * Self.ms)
        #expect(Self.turn(&state, now: 10 * Self.ms) == [.wait])
        #expect(state.nextWakeUp == 50 * Self.ms)
        #expect(Self.sends(Self.turn(&state, now: 50 * Self.ms)) == [0])
    }

    /// Provider tokens are renewed by age (ProviderTokens' clock); the connection puts the new
    /// one in its fields at its next flush: not at 49 minutes, at 50.
    @Test func aProviderTokenRenewedAtFiftyMinutesReachesTheNextFlush() throws {
        let clock = NIOLockedValueBox<Int64>(1_700_000_000)
        let tokens = try ProviderTokens(
            pem: P256.Signing.PrivateKey().pemRepresentation,
            keyID: "ABC123DEFG",
            teamID: "DEF123GHIJ",
            now: { clock.withLockedValue { $0 } }
        )
        let first = tokens.current()
        let feed = try Self.feed(1)
        var state = Self.machine(feed, providerTokens: tokens, generation: first.generation)
        #expect(state.flush(now: Self.second) { _ in } == nil)
        clock.withLockedValue { $0 += 49 * 60 }
        #expect(state.flush(now: 2 * Self.second) { _ in } == nil)
        clock.withLockedValue { $0 += 60 }
        let flushed = state.flush(now: 3 * Self.second) { _ in }
        let renewed = try #require(flushed)
        #expect(renewed != first.value && renewed.hasPrefix("bearer "))
        #expect(state.flush(now: 4 * Self.second) { _ in } == nil)
    }

    @Test func countsAreDueEveryFlushIntervalOutcomesOrEverySecond() throws {
        let feed = try Self.feed(2)
        var state = Self.machine(feed)
        Self.turn(&state, now: 0)
        #expect(!state.flushDue(now: 1))
        #expect(state.flushDue(now: LoadConnectionState.flushDelay))
        #expect(state.nextWakeUp == LoadConnectionState.timeoutScanInterval)
    }
}
