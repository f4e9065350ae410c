import FanoutAPNs
import FanoutEndpoint
import FanoutTokens
import NIOCore

/// What one connection of the load engine decides, as a plain state machine: it is told what
/// happened (an answer, a reset, a PING's acknowledgement, the end of the connection) and what
/// time it is, and says what to do next. It reads no clock, owns no socket and writes no frame;
/// `LoadConnection` carries its steps out on an `HTTP2Connection` and records what it returns.
///
/// ```
///   glue: next(now:…) ──► .ping(epoch)            prove the peer alive since a loss elsewhere
///                    ──► .reset(stream, started?)  a stream unanswered past the timeout
///                    ──► .send(Send)              ──► sent(send, stream, …) / notSent(send) / skipped(send, …)
///                    ──► .goAway                  every notification taken has its outcome
///                    ──► .wait                    until an event or `nextWakeUp`
///   events: release(tag:) + settle(…, after: answered / refused / reset), pingAcknowledged,
///           writabilityChanged, connectionEnded ──► what is left goes back to the feed
/// ```
///
/// Work comes from the run's `NotificationFeed` (tokens, and notifications other connections
/// handed back) and, in the open model, each token waits for a ticket of `ArrivalTickets`; both
/// are shared by every connection and read no clock either. Every notification it takes ends in
/// exactly one outcome here (`LoadCounts`) or goes back to the feed.
struct LoadConnectionState {
    /// A ticket that fell due while every stream the server allowed was busy.
    struct StreamWait: Equatable {
        var nanoseconds: UInt64
        var streams: Int
    }

    /// A notification on the wire.
    struct InFlight {
        var notification: PendingNotification
        var stream: UInt32
        /// How long past its due time it waited for a stream (`StreamWait`, microseconds, 0:
        /// none): the server's limit on streams, part of its latency but not the harness's own
        /// delay. (Beside `stream`, in what was padding: the entry is no larger for it.)
        var streamWait: UInt32 = 0
        var sentAt: UInt64
        var digestHash: UInt64
        /// Whether its apns-id carries its send time: a Fanout sink's answer then says what it held.
        var timed = false

        /// Whether this is the notification's first request: neither an attempt after a
        /// retryable answer nor a request sent again after a refused stream or a lost
        /// connection.
        var isFirstRequest: Bool { notification.attempts == 0 && !notification.wasSent }
    }

    /// Where the connection is in its life. Only `taking` starts new work; every phase but
    /// `closed` finishes what it holds.
    ///
    /// ```
    ///   beforeStart(t) ──now ≥ t──► taking ──the feed has no more──► feedFinished
    ///                                 ▲                                   │
    ///                                 └──── another connection hands ─────┘
    ///                                       work back
    ///   taking / feedFinished ──the schedule is over, the feed closed──► scheduleEnded
    ///   any ──GOAWAY said, or the connection ended──► closed(finished | noStreamAllowed | ended)
    /// ```
    enum Phase: Equatable {
        /// Ready, but nothing goes out before this time (uptime nanoseconds; `--start-at`).
        case beforeStart(UInt64)
        /// New work is taken from the feed (and, in the open model, the schedule's tickets).
        case taking
        /// The feed had nothing more: what is held here finishes, and work another connection
        /// hands back brings the connection back to `taking`.
        case feedFinished
        /// The schedule (or the closed model's duration) is over: no new token is started;
        /// what is in flight, resent or retried still finishes.
        case scheduleEnded
        /// Nothing more is sent.
        case closed(Closure)

        /// The feed is done with, or the schedule over: the connection ends once what it holds
        /// has finished.
        var isFinishing: Bool {
            switch self {
            case .feedFinished, .scheduleEnded: true
            case .beforeStart, .taking, .closed: false
            }
        }

        /// Past the schedule: only notifications already started are sent.
        var isPastSchedule: Bool {
            if case .scheduleEnded = self { true } else { false }
        }
    }

    // Read with `case` patterns: `==` on an enum with payloads is a call (scripts/cost.sh).

    /// Why nothing more is sent.
    enum Closure: Equatable {
        /// Every notification taken had its outcome and no work was left: GOAWAY was said.
        case finished
        /// The server allowed no stream for the stream timeout with nothing in flight: GOAWAY
        /// was said, and what waited here went back to the feed.
        case noStreamAllowed
        /// The connection ended first.
        case ended
    }

    /// A notification `next` hands out to send, on the stream slot it reserved: `sent`,
    /// `notSent` or `skipped` takes it back.
    struct Send {
        var notification: PendingNotification
        /// The stream slot reserved for it: its stream's tag.
        let tag: Int
        /// In the open model, how late the generator sends it beyond its due time and the
        /// moment a stream came free for it (nanoseconds: the generator's own delay).
        let lag: UInt64?
        /// How long past its due time it waited for a stream, and how many streams the
        /// connection then had busy (the server's limit: 1 before a connection's first request
        /// is accepted, APNs's rule).
        let waited: StreamWait?

        /// `waited` in microseconds, as an `InFlight` keeps it (0: none).
        var streamWaitMicroseconds: UInt32 {
            waited.map { UInt32(min($0.nanoseconds / 1000, UInt64(UInt32.max))) } ?? 0
        }
    }

    /// What to do next on the connection.
    enum Step {
        /// Send a PING whose payload is this loss epoch: once acknowledged, the connection may
        /// take notifications that another connection lost (`NotificationFeed`).
        case ping(UInt64)
        /// Reset this stream: its request went unanswered for the stream timeout. `started`:
        /// the notification's start when that try was its last (its latency is recorded).
        case reset(stream: UInt32, started: UInt64?)
        /// Send this notification; then report `sent` or `notSent` (or `skipped` when its
        /// payload cannot be made).
        case send(Send)
        /// Every notification this connection took has its outcome and no work is left:
        /// say GOAWAY.
        case goAway
        /// Nothing to do until an event, or `nextWakeUp`.
        case wait
    }

    // Twelve stored properties: the phase, the feed and two settings, and the parts
    // (LoadConnectionState+Parts.swift), each owning one concern. All change only in this file;
    // `LoadConnection` takes the gone tokens out of the ledger, and tests read the PING proof.
    private(set) var phase: Phase
    let feed: NotificationFeed
    let streamTimeout: UInt64
    private var retryPolicy: RetryPolicy
    private var streams: StreamSlots
    private var held = HeldWork()
    private var openModel: OpenModelSlot
    private var capacity = Capacity()
    private(set) var proof = PeerProof()
    var ledger: Ledger
    private var authorization: AuthorizationWatch
    /// Whether the turn's start has steps left (a PING or a reset returned before the sends).
    private var inTurnStart = false

    init(
        feed: NotificationFeed,
        tickets: ArrivalTickets?,
        slot: Int,
        shape: LoadShape,
        retrySeed: UInt64,
        collectsGone: Bool = false,
        goneLabel: TokenLabel? = nil,
        authorizations: (any AuthorizationSource)? = nil,
        authorizationGeneration: Int = 0,
        notBefore: UInt64 = 0,
        now: UInt64
    ) {
        self.feed = feed
        phase = notBefore == 0 ? .taking : .beforeStart(notBefore)
        streamTimeout = shape.streamTimeout.wholeNanoseconds
        retryPolicy = RetryPolicy(shape, seed: retrySeed)
        streams = StreamSlots(capacity: max(1, shape.streamsPerConnection), now: now)
        openModel = OpenModelSlot(tickets: tickets, slot: slot, pacing: PacingWindow(shape.coalescing))
        ledger = Ledger(collectsGone: collectsGone, goneLabel: goneLabel, now: now)
        authorization = AuthorizationWatch(source: authorizations, generation: authorizationGeneration)
    }

    /// Notifications on the wire.
    var inFlight: Int { streams.count }
    /// Outcomes since the last flush.
    var counts: LoadCounts { ledger.counts }
    /// The largest pacing window it has used (nanoseconds).
    var largestPacingWindow: UInt64 { openModel.pacing.largest }
    /// The connection ended because the server allowed it no stream for the stream timeout.
    var allowsNoStream: Bool { phase == .closed(.noStreamAllowed) }

    // MARK: Events

    /// The connection is up (its preface is queued).
    mutating func started(now: UInt64) {
        capacity.freedAt = now
        capacity.busyStreams = 0
    }

    mutating func writabilityChanged(_ isWritable: Bool) {
        capacity.isWritable = isWritable
    }

    /// The peer answered a PING sent after loss `opaque`: it is alive since.
    mutating func pingAcknowledged(_ opaque: UInt64) {
        proof.acknowledged(opaque)
    }

    /// The notification on the stream tagged `tag`, whose stream is now free; `nil` for a tag
    /// that is not in flight (answered already, or reset).
    mutating func release(tag: UInt64) -> InFlight? {
        streams.release(tag: tag)
    }

    /// Carries out the retry policy's decision for a try that ended with `result`. Returns the
    /// notification's start when this was its final outcome (its latency is to be recorded).
    mutating func settle(_ entry: InFlight, after result: RetryPolicy.Result, now: UInt64) -> UInt64? {
        if case .answered(let status, let reason, _) = result {
            openModel.pacing.answered(sentAt: entry.sentAt, now: now)
            if status == 200 {
                ledger.counts.answeredOK += 1
            } else if let reason {
                ledger.counts.answers[reason.index] += 1
            }
        }
        var notification = entry.notification
        switch retryPolicy.next(after: result, attempts: Int(notification.attempts)) {
        case .accept:
            ledger.counts.accept(digestHash: entry.digestHash)
            notification.finish()
            return notification.firstSentAt
        case .reject(let reason):
            ledger.counts.reject(reason)
            if reason.isGoneToken, ledger.collectsGone { ledger.keepGone(notification.token.token) }
            notification.finish()
            return notification.firstSentAt
        case .fail(let cause):
            ledger.counts.fail(cause)
            notification.finish()
            return notification.firstSentAt
        case .resend:
            ledger.counts.resent += 1
            notification.wasSent = true
            held.resend.append(notification)
            return nil
        case .retry(let delay):
            notification.attempts += 1
            ledger.counts.retries += 1
            held.retry(notification, at: now + delay)
            return nil
        }
    }

    /// The connection is gone. What was in flight is settled as lost (`started` gets the start
    /// of each that reached its final outcome), and everything waiting here goes back to the
    /// feed for the connections still open. (Once the schedule is over nothing new waits here:
    /// `endSchedule` left it unsent.) Returns whether the connection made progress (sent
    /// anything).
    mutating func connectionEnded(now: UInt64, started: (UInt64) -> Void) -> Bool {
        var lost: [InFlight] = []
        streams.releaseAll { lost.append($0) }
        for entry in lost {
            if let start = settle(entry, after: .connectionLost, now: now) { started(start) }
        }
        var back = held.takeAll()
        if let waiting = openModel.waiting.take() { back.append(waiting) }
        if case .closed = phase {} else { phase = .closed(.ended) }
        feed.giveBack(back)
        return ledger.madeProgress
    }

    // MARK: Sending

    /// The next step of this turn: called until it says `.wait` or `.goAway` (or a send fails),
    /// with `continuing` false the first time and true after (the turn's start looks at the
    /// start time, the timeout scan and the PING proof; each send after needs none of them).
    /// `hasPeerSettings`: the server's SETTINGS arrived (nothing goes out before: a connection
    /// accepted by a listener that then dies would cost every request on it a try);
    /// `availableStreams`: how many more streams the peer allows now.
    @inline(__always)
    mutating func next(now: UInt64, continuing: Bool, hasPeerSettings: Bool, availableStreams: Int) -> Step {
        if case .closed = phase { return .wait }
        guard hasPeerSettings else { return .wait }
        if !continuing, openModel.tickets != nil {
            openModel.pacing.streamLimit(streams.count + min(availableStreams, streams.freeCount))
        }
        if !continuing || inTurnStart {
            if let step = startTurn(now: now) { return step }
        }
        var lookedAgain = false
        while true {
            guard capacity.isWritable, streams.freeCount > 0, availableStreams > 0 else {
                if availableStreams <= 0 && streams.count == 0 && capacity.noStreamSince == 0 {
                    capacity.noStreamSince = now
                }
                if !capacity.atCapacity { capacity.busyStreams = capacity.isWritable ? streams.count : 0 }
                if capacity.busySince == 0 { capacity.busySince = now }
                capacity.atCapacity = true
                return .wait
            }
            capacity.atCapacity = false
            capacity.noStreamSince = 0
            if !authorization.withheld, let (notification, lag, waited) = nextNotification(now: now) {
                return .send(Send(notification: notification, tag: streams.reserve(), lag: lag, waited: waited))
            }
            // No work now, a stream to spare: done once the feed is finished and nothing is
            // left here.
            capacity.busySince = 0
            guard phase.isFinishing, streams.count == 0, held.isEmpty,
                openModel.waiting == nil
            else {
                return .wait
            }
            guard (phase.isPastSchedule ? feed.startedWaiting : feed.returnedWaiting) == 0 else {
                // Another connection handed work back after this one found the feed empty:
                // look once more (it may be started work this connection must first prove
                // its peer alive for).
                if case .feedFinished = phase { phase = .taking }
                if lookedAgain { return .wait }
                lookedAgain = true
                if let epoch = proof.needed(now: now, feed: feed, timeout: streamTimeout) { return .ping(epoch) }
                continue
            }
            phase = .closed(.finished)
            return .goAway
        }
    }

    /// The server allowed no stream for the stream timeout with nothing in flight: the
    /// connection says GOAWAY and ends, what waits here goes back to the feed, and the
    /// connection's end names the cause (`allowsNoStream`).
    mutating func endForWantOfStreams() -> Step {
        capacity.noStreamSince = 0
        phase = .closed(.noStreamAllowed)
        return .goAway
    }

    /// `send` went out on `stream`.
    @inline(__always)
    mutating func sent(_ send: consuming Send, stream: UInt32, digestHash: UInt64, timed: Bool, now: UInt64) {
        streams.fill(
            send.tag,
            with: InFlight(
                notification: send.notification,
                stream: stream,
                streamWait: send.streamWaitMicroseconds,
                sentAt: now,
                digestHash: digestHash,
                timed: timed
            )
        )
        ledger.counts.requests += 1
    }

    /// The connection could not open a stream for `send` (it is closing): it is sent again at
    /// once, by this connection or, when it ends, another.
    mutating func notSent(_ send: consuming Send) {
        streams.unreserve(send.tag)
        held.resend.append(send.notification)
    }

    /// `send`'s payload could not be made: it ends skipped, never sent.
    mutating func skipped(_ send: Send, cause: SkipCause) {
        streams.unreserve(send.tag)
        ledger.counts.skip(cause)
        send.notification.finish()
    }

    /// When `next` has something to do without an event: a stream's timeout, a retry's
    /// backoff, the feed asked again, a ticket falling due, the counts' flush, a PING's timeout,
    /// or the start time.
    var nextWakeUp: UInt64? {
        var earliest = UInt64.max
        switch phase {
        case .closed: return nil
        case .beforeStart(let notBefore): earliest = notBefore
        case .taking, .feedFinished, .scheduleEnded: break
        }
        if streams.count > 0 { earliest = streams.lastScan + Self.timeoutScanInterval }
        // Withheld, nothing is sent until the run decides (`release()`): no work falls due.
        if !capacity.atCapacity && !authorization.withheld {
            if held.quotaHeldUntil > 0 {
                // The quota holds sends: work due (a retry, an overdue ticket) waits for its end.
                earliest = min(earliest, held.quotaHeldUntil)
            } else {
                if let retry = held.nextRetry { earliest = min(earliest, retry) }
                if held.starvedUntil > 0 { earliest = min(earliest, held.starvedUntil) }
                if openModel.nextTicketAt > 0 && !phase.isPastSchedule {
                    earliest = min(earliest, openModel.nextTicketAt)
                }
            }
        }
        if let flush = ledger.nextFlush { earliest = min(earliest, flush) }
        if let ping = proof.ping { earliest = min(earliest, ping.sentAt + streamTimeout) }
        if capacity.noStreamSince > 0 { earliest = min(earliest, capacity.noStreamSince + streamTimeout) }
        return earliest == .max ? nil : earliest
    }

    // MARK: Flushing

    /// Whether the counts are due to go to the run's statistics.
    func flushDue(now: UInt64) -> Bool { ledger.flushDue(now: now) }

    /// Hands the counts since the last flush to `deliver` and returns the new `authorization`
    /// (an APNs provider token, an FCM access token) when it was renewed since this
    /// connection's fields were made.
    mutating func flush(now: UInt64, counts deliver: (LoadCounts) -> Void) -> String? {
        let authorization = authorization.renewed(now: now)
        ledger.flush(now: now, deliver)
        return authorization
    }

    /// The endpoint refused the bearer `entry` carried (FCM's 401 without a code): unless the
    /// fields have taken a newer one since it was sent, its source is asked for a new one, and
    /// the connection looks for it at every turn until it comes (`renewedAfterRefusal`)
    /// instead of at its next flush.
    mutating func authorizationRefused(_ entry: InFlight) { authorization.refused(sentAt: entry.sentAt) }

    /// The connection's first answer refused the run's credentials: nothing more is sent until
    /// `releaseCredentials()` (what is in flight still finishes, and what is held waits).
    mutating func withholdCredentials() { authorization.withhold() }

    /// Whether nothing is sent until the run decides on the credentials.
    var isWithheld: Bool { authorization.withheld }

    /// The run reached the endpoint on another connection: sending resumes.
    mutating func releaseCredentials() { authorization.release() }

    /// The renewed `authorization` once it came, while a refusal waits for one; `nil`
    /// otherwise. One flag read on the hot path when nothing was refused.
    mutating func renewedAfterRefusal(now: UInt64) -> String? {
        authorization.awaitsRenewal ? authorization.renewed(now: now) : nil
    }

    // MARK: Deciding (the turn's start, then the next notification, both below)

    /// The schedule is over: the rest of the batch is not sent.
    mutating func endSchedule() {
        phase = .scheduleEnded
        if let waiting = openModel.waiting.take() { leaveUnsent(waiting) }
        if let batch = held.batch { leaveUnsent(batch) }
        held.batch = nil
    }

    /// The start time came: new work is taken.
    mutating func begin() { phase = .taking }

    /// The feed had nothing more for this connection.
    mutating func feedRanOut() {
        if case .taking = phase { phase = .feedFinished }
    }

    private mutating func leaveUnsent(_ notification: PendingNotification) {
        countUnsent()
        notification.finish()
    }

    /// Leaves the batch's unclaimed tokens unsent.
    private mutating func leaveUnsent(_ batch: FeedBatch) {
        for index in batch.claimRest() {
            countUnsent()
            batch.finish(index)
        }
    }

    /// A token left unsent: past the schedule, or never sent because the run was interrupted.
    private mutating func countUnsent() {
        if feed.isInterrupted { ledger.counts.unsent += 1 } else { ledger.counts.unscheduled += 1 }
    }

    static let timeoutScanInterval: UInt64 = 250_000_000
    static let flushDelay: UInt64 = 1_000_000_000
    static let feedPollInterval: UInt64 = 1_000_000
}

// MARK: The turn's start

extension LoadConnectionState {
    /// What a turn does before it sends: waits for the start time, resets streams past their
    /// timeout, proves the peer alive when lost work waits. A step, or `nil` to go on sending.
    mutating func startTurn(now: UInt64) -> Step? {
        inTurnStart = true
        if case .beforeStart(let notBefore) = phase {
            // Ready early (SETTINGS exchanged): `nextWakeUp` brings it back at the start.
            guard now >= notBefore else { return .wait }
            begin()
            capacity.freedAt = now
        }
        if streams.scanDue(now: now), let entry = streams.nextOverdue(now: now, timeout: streamTimeout) {
            return .reset(stream: entry.stream, started: settle(entry, after: .timedOut, now: now))
        }
        if let epoch = proof.needed(now: now, feed: feed, timeout: streamTimeout) { return .ping(epoch) }
        if capacity.noStreamSince > 0, now >= capacity.noStreamSince + streamTimeout { return endForWantOfStreams() }
        if capacity.atCapacity { capacity.freedAt = now }
        inTurnStart = false
        return nil
    }
}

// MARK: Where the next notification comes from

extension LoadConnectionState {
    /// The next notification: one to send again, a retry whose time has come, one another
    /// connection handed back, or a new token (the open model: once its ticket falls in the
    /// pacing window, with the generator's lag and its wait for a stream).
    mutating func nextNotification(now: UInt64) -> (PendingNotification, UInt64?, StreamWait?)? {
        // The endpoint's quota is spent until then (`NotificationFeed.holdSends`): nothing is
        // sent, and the connection is woken at it; the run's end is still seen while it holds.
        let hold = feed.sendsHeldUntil
        let holding = hold > now
        if holding {
            held.quotaHeldUntil = hold
        } else if held.quotaHeldUntil != 0 {
            // The wait was the endpoint's: what falls due in it is late from the hold's end, not
            // from its due time (its latency still counts from that), so the hold is not the
            // generator's lag; nor is it a wait for a stream (a stream is free now, or this is
            // not asked: what waited, waited for the hold).
            capacity.freedAt = max(capacity.freedAt, held.quotaHeldUntil)
            capacity.busyStreams = 0
            held.quotaHeldUntil = 0
        }
        if !holding {
            if let notification = held.resend.popLast() { return (notification, nil, nil) }
            if let retry = held.dueRetry(now: now) { return (retry, nil, nil) }
            if let started = feed.takeStarted(proven: proof.provenEpoch) { return (started, nil, nil) }
        }
        if case .scheduleEnded = phase { return nil }
        if feed.isClosed {
            endSchedule()
            return nil
        }
        if holding { return nil }
        guard let tickets = openModel.tickets else { return nextToken(now: now).map { ($0, nil, nil) } }
        let horizon = openModel.pacing.horizon(now: now)
        // Its ticket is known to fall in a later window: no need to ask (an answer's turn).
        if openModel.waiting != nil, openModel.nextTicketAt > horizon { return nil }
        guard var notification = openModel.waiting.take() ?? nextToken(now: now) else { return nil }
        // Handed back after its first send: its time was kept, it needs no ticket.
        if notification.firstSentAt != 0 { return (notification, nil, nil) }
        let slot = openModel.slot
        switch tickets.claim(now: now, slot: slot, until: horizon) {
        case .due(let due):
            openModel.nextTicketAt = 0
            openModel.pacing.ticket { tickets.spacing(slot: slot) }
            // Sent early in its window: its latency counts from now, when it went out.
            notification.firstSentAt = min(due, now)
            // A wait for a stream, when streams were what was short (not writability, not the
            // connection itself: one opened after its tickets fell due waited for connecting).
            let freed = min(now, capacity.freedAt)
            let busyFrom = max(due, capacity.busySince)
            let waited =
                freed > busyFrom && capacity.busyStreams > 0
                ? StreamWait(nanoseconds: freed - busyFrom, streams: capacity.busyStreams) : nil
            return (notification, now - min(now, max(due, capacity.freedAt)), waited)
        case .notYet(let due):
            openModel.waiting = notification
            // Woken at the start of the ticket's pacing window; at the ticket's own time when
            // that start has passed (a ticket of another slot, free to take once overdue).
            let start = openModel.pacing.wake(for: due)
            openModel.nextTicketAt = start > now ? start : due
            return nil
        case .exhausted:
            openModel.waiting = notification
            endSchedule()
            return nil
        }
    }

    /// The batch's next token, or new work from the feed.
    fileprivate mutating func nextToken(now: UInt64) -> PendingNotification? {
        while true {
            if let current = held.batch {
                if let index = current.claim() {
                    if index == current.count - 1 { held.batch = nil }
                    return PendingNotification(batch: current, index: Int32(index), attempts: 0, firstSentAt: 0)
                }
                // Another connection claimed the rest.
                held.batch = nil
            }
            guard now >= held.starvedUntil else { return nil }
            held.starvedUntil = 0
            switch feed.take(proven: proof.provenEpoch) {
            case .returned(let notification):
                return notification
            case .batch(let next):
                held.batch = next
            case .notReady:
                held.starvedUntil = now + Self.feedPollInterval
                return nil
            case .finished:
                feedRanOut()
                // Its tickets are the other connections' now, without waiting.
                openModel.tickets?.retire(slot: openModel.slot)
                return nil
            }
        }
    }
}
