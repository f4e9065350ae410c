import FanoutAPNs
import NIOCore

/// What one connection of the load engine decides, as a plain state machine: it is told what
/// happened (an answer, a reset, a PING's acknowledgement, the end of the connection) and what
/// time it is, and says what to do next. It reads no clock, owns no socket and writes no frame;
/// `LoadConnection` carries its steps out on an `HTTP2Connection` and records what it returns.
///
/// ```
///   glue: next(now:…) ──► .ping(epoch)            prove the peer alive since a loss elsewhere
///                    ──► .reset(stream, started?)  a stream unanswered past the timeout
///                    ──► .send(notification, tag)  ──► sent(tag, stream, …) / notSent(tag, …)
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

    /// What to do next on the connection.
    enum Step {
        /// Send a PING whose payload is this loss epoch: once acknowledged, the connection may
        /// take notifications that another connection lost (`NotificationFeed`).
        case ping(UInt64)
        /// Reset this stream: its request went unanswered for the stream timeout. `started`:
        /// the notification's start when that try was its last (its latency is recorded).
        case reset(stream: UInt32, started: UInt64?)
        /// Send `notification` on a new stream tagged `tag`; then report `sent` or `notSent`
        /// (or `skipped` when its payload cannot be made). `lag`: in the open model, how late
        /// the generator sends it beyond its due time and the moment a stream came free for it
        /// (nanoseconds: the generator's own delay). `waited`: how long past its due time it
        /// waited for a stream, and how many streams the connection then had busy (the server's
        /// limit: 1 before a connection's first request is accepted, APNs's rule).
        case send(PendingNotification, tag: Int, lag: UInt64?, waited: StreamWait?)
        /// Every notification this connection took has its outcome and no work is left:
        /// say GOAWAY.
        case goAway
        /// Nothing to do until an event, or `nextWakeUp`.
        case wait
    }

    // Internal, not private: the state LoadConnectionState+Turn.swift and +Work.swift change
    // (only `LoadConnection`, in this module, holds a state); the rest is private.
    let feed: NotificationFeed
    /// The open model's schedule, `nil` for the closed model.
    let tickets: ArrivalTickets?
    /// The connection slot it fills: whose share of the tickets it claims.
    let slot: Int
    let streamTimeout: UInt64
    private var retryPolicy: RetryPolicy
    /// Tokens answered 410 are kept for `--gone-tokens` when this is set.
    private let collectsGone: Bool
    private let providerTokens: ProviderTokens?

    /// Nothing is sent before this time (uptime nanoseconds; `--start-at`), 0 once it passed
    /// or when none was set.
    var notBefore: UInt64
    var slots: [InFlight?]
    private var freeSlots: [Int]
    private(set) var inFlight = 0
    /// Sent again as soon as a stream is free (refused streams: the server never saw them).
    var resend: [PendingNotification] = []
    /// Waiting for their backoff to pass, earliest last.
    var retries: [(due: UInt64, notification: PendingNotification)] = []
    /// The batch this connection claims new tokens from, while it has unclaimed ones (other
    /// connections may claim from it too: `FeedBatch`). Let go of once it is spent: from then
    /// on in-flight notifications hold it, and the last to finish recycles it.
    var batch: FeedBatch?
    /// The feed had nothing ready: ask again at this time.
    var starvedUntil: UInt64 = 0
    var feedFinished = false
    /// The schedule (or the closed model's duration) is over: no new token is started.
    private(set) var scheduleEnded = false
    /// The open model: a new token taken before its ticket fell due; it goes out with the
    /// slot's next ticket. (A connection without a token claims no ticket: its slot's tickets
    /// then go, overdue, to connections that have tokens.)
    var waiting: PendingNotification?
    /// When to ask for the next ticket: the start of its pacing window (0: none is waited for).
    var nextTicketAt: UInt64 = 0
    /// When a stream last came free after all were busy: a ticket due before then waited for
    /// the server, not for the generator.
    var capacityFreedAt: UInt64 = 0
    /// The streams in flight when the last turn stopped for want of one (the server's limit).
    var capacityStreams = 0
    /// Since when every stream has been busy without a break (0: the last turn ended with a
    /// stream to spare and nothing to send on it). A ticket due before then waited for
    /// something else first (its connection, the generator): only the time after is a stream
    /// wait. A turn that frees a stream and fills it again is no break.
    var busySince: UInt64 = 0
    /// The stream wait of the notification the last `.send` step handed out (microseconds),
    /// kept here for `sent(…)` rather than carried through the connection.
    private var sendingStreamWait: UInt32 = 0
    /// The open model's tickets go out a window at a time (`PacingWindow`).
    var pacing: PacingWindow
    /// The largest pacing window it has used (nanoseconds).
    var largestPacingWindow: UInt64 { pacing.largest }
    private var isWritable = true
    /// GOAWAY was said: nothing more is sent.
    private(set) var isDone = false
    /// The loss epoch (`NotificationFeed.lossEpoch`) this connection has shown its peer alive
    /// through: it takes started notifications handed back after a loss only when this covers
    /// the loss.
    var provenEpoch: UInt64 = 0
    /// The epoch and send time of the PING that is to show it, while unacknowledged.
    var proofPing: (epoch: UInt64, sentAt: UInt64)?
    /// Since when the server has allowed no stream at all, nothing in flight (0: it allows
    /// some). RFC 9113 lets SETTINGS_MAX_CONCURRENT_STREAMS be 0 and a client wait for more;
    /// a connection that waits the stream timeout so ends (`allowsNoStream`), or a run against
    /// such a server never ended.
    var noStreamSince: UInt64 = 0
    /// The connection ended because the server allowed it no stream for the stream timeout.
    private(set) var allowsNoStream = false
    /// Whether the last turn stopped for want of a stream (or writability) rather than work:
    /// then only an answer (or a window) can let more go, and no timer is needed for retries or
    /// the feed.
    var atCapacity = false
    var lastTimeoutScan: UInt64
    /// Where the timeout scan under way goes on (`resetOverdue`).
    var timeoutScanPosition = 0
    private var lastFlush: UInt64
    /// Requests sent here and already added to the run's statistics.
    private var flushedRequests = 0
    /// The provider token's generation in the request fields.
    private var authorizationGeneration: Int

    /// Outcomes since the last flush.
    private(set) var counts = LoadCounts()
    /// Tokens answered 410, one a line, waiting to be written (`collectsGone`).
    var gone = ByteBuffer()

    init(
        feed: NotificationFeed,
        tickets: ArrivalTickets?,
        slot: Int,
        shape: LoadShape,
        retrySeed: UInt64,
        collectsGone: Bool = false,
        providerTokens: ProviderTokens? = nil,
        authorizationGeneration: Int = 0,
        notBefore: UInt64 = 0,
        now: UInt64
    ) {
        self.feed = feed
        self.tickets = tickets
        self.slot = slot
        self.notBefore = notBefore
        self.collectsGone = collectsGone
        self.providerTokens = providerTokens
        self.authorizationGeneration = authorizationGeneration
        streamTimeout = shape.streamTimeout.wholeNanoseconds
        retryPolicy = RetryPolicy(shape, seed: retrySeed)
        let cap = max(1, shape.streamsPerConnection)
        slots = [InFlight?](repeating: nil, count: cap)
        freeSlots = Array((0..<cap).reversed())
        lastTimeoutScan = now
        lastFlush = now
        pacing = PacingWindow(shape.coalescing)
    }

    // MARK: Events

    /// The connection is up (its preface is queued).
    mutating func started(now: UInt64) {
        capacityFreedAt = now
        capacityStreams = 0
    }

    mutating func writabilityChanged(_ isWritable: Bool) {
        self.isWritable = isWritable
    }

    /// The peer answered a PING sent after loss `opaque`: it is alive since.
    mutating func pingAcknowledged(_ opaque: UInt64) {
        guard let ping = proofPing, ping.epoch == opaque else { return }
        proofPing = nil
        provenEpoch = max(provenEpoch, opaque)
    }

    /// The notification on the stream tagged `tag`, whose stream is now free; `nil` for a tag
    /// that is not in flight (answered already, or reset).
    mutating func release(tag: UInt64) -> InFlight? {
        let slot = Int(tag)
        guard slot < slots.count, let entry = slots[slot] else { return nil }
        slots[slot] = nil
        freeSlots.append(slot)
        inFlight -= 1
        return entry
    }

    /// Carries out the retry policy's decision for a try that ended with `result`. Returns the
    /// notification's start when this was its final outcome (its latency is to be recorded).
    mutating func settle(_ entry: InFlight, after result: RetryPolicy.Result, now: UInt64) -> UInt64? {
        if case .answered(let status, let reason) = result {
            pacing.answered(sentAt: entry.sentAt, now: now)
            if status == 200 {
                counts.answeredOK += 1
            } else if let reason {
                counts.answers[reason.index] += 1
            }
        }
        var notification = entry.notification
        switch retryPolicy.next(after: result, attempts: Int(notification.attempts)) {
        case .accept:
            counts.accept(digestHash: entry.digestHash)
            notification.finish()
            return notification.firstSentAt
        case .reject(let reason):
            counts.reject(reason)
            if reason.status == 410, collectsGone {
                gone.writeBytes(notification.token.token)
                gone.writeInteger(UInt8(ascii: "\n"))
            }
            notification.finish()
            return notification.firstSentAt
        case .fail(let cause):
            counts.fail(cause)
            notification.finish()
            return notification.firstSentAt
        case .resend:
            counts.resent += 1
            notification.wasSent = true
            resend.append(notification)
            return nil
        case .retry(let delay):
            notification.attempts += 1
            counts.retries += 1
            let due = now + delay
            let position = retries.firstIndex { $0.due < due } ?? retries.count
            retries.insert((due, notification), at: position)
            return nil
        }
    }

    /// The connection is gone. What was in flight is settled as lost (`started` gets the start
    /// of each that reached its final outcome), and everything waiting here goes back to the
    /// feed for the connections still open — or, once the schedule is over, is left unsent.
    /// Returns whether the connection made progress (sent anything).
    mutating func connectionEnded(now: UInt64, started: (UInt64) -> Void) -> Bool {
        for index in slots.indices {
            guard let entry = slots[index] else { continue }
            slots[index] = nil
            if let start = settle(entry, after: .connectionLost, now: now) { started(start) }
        }
        freeSlots = Array((0..<slots.count).reversed())
        inFlight = 0
        var back: [PendingNotification] = resend
        back += retries.map(\.notification)
        if let waiting = waiting.take() {
            if scheduleEnded { leaveUnsent(waiting) } else { back.append(waiting) }
        }
        if let batch, scheduleEnded {
            leaveUnsent(batch)
        } else if let batch {
            for index in batch.claimRest() {
                back.append(PendingNotification(batch: batch, index: Int32(index), attempts: 0, firstSentAt: 0))
            }
        }
        resend.removeAll()
        retries.removeAll()
        batch = nil
        isDone = true
        feed.giveBack(back)
        return counts.requests > 0 || flushedRequests > 0
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
        guard !isDone, hasPeerSettings else { return .wait }
        if !continuing, tickets != nil { pacing.streamLimit(inFlight + min(availableStreams, freeSlots.count)) }
        if !continuing || inTurnStart {
            if let step = startTurn(now: now) { return step }
        }
        var lookedAgain = false
        while true {
            guard isWritable, !freeSlots.isEmpty, availableStreams > 0 else {
                if availableStreams <= 0 && inFlight == 0 && noStreamSince == 0 { noStreamSince = now }
                if !atCapacity { capacityStreams = isWritable ? inFlight : 0 }
                if busySince == 0 { busySince = now }
                atCapacity = true
                return .wait
            }
            atCapacity = false
            noStreamSince = 0
            if let (notification, lag, waited) = nextNotification(now: now) {
                sendingStreamWait = waited.map { UInt32(min($0.nanoseconds / 1000, UInt64(UInt32.max))) } ?? 0
                return .send(notification, tag: freeSlots.removeLast(), lag: lag, waited: waited)
            }
            // No work now, a stream to spare: done once the feed is finished and nothing is
            // left here.
            busySince = 0
            guard feedFinished, inFlight == 0, resend.isEmpty, retries.isEmpty, batch == nil, waiting == nil else {
                return .wait
            }
            guard (scheduleEnded ? feed.startedWaiting : feed.returnedWaiting) == 0 else {
                // Another connection handed work back after this one found the feed empty:
                // look once more (it may be started work this connection must first prove
                // its peer alive for).
                feedFinished = false
                if lookedAgain { return .wait }
                lookedAgain = true
                if let epoch = proofNeeded(now: now) { return .ping(epoch) }
                continue
            }
            isDone = true
            return .goAway
        }
    }

    /// The server allowed no stream for the stream timeout with nothing in flight: the
    /// connection says GOAWAY and ends, what waits here goes back to the feed, and the
    /// connection's end names the cause (`allowsNoStream`).
    mutating func endForWantOfStreams() -> Step {
        noStreamSince = 0
        allowsNoStream = true
        isDone = true
        return .goAway
    }

    /// `notification` went out on `stream` under `tag` (the slot `.send` reserved).
    @inline(__always)
    mutating func sent(
        _ notification: PendingNotification,
        tag: Int,
        stream: UInt32,
        digestHash: UInt64,
        timed: Bool,
        now: UInt64
    ) {
        slots[tag] = InFlight(
            notification: notification,
            stream: stream,
            streamWait: sendingStreamWait,
            sentAt: now,
            digestHash: digestHash,
            timed: timed
        )
        inFlight += 1
        counts.requests += 1
    }

    /// The connection could not open a stream for `notification` (it is closing): it is sent
    /// again at once, by this connection or, when it ends, another.
    mutating func notSent(_ notification: PendingNotification, tag: Int) {
        freeSlots.append(tag)
        resend.append(notification)
    }

    /// `notification`'s payload could not be made: it ends skipped, never sent.
    mutating func skipped(_ notification: PendingNotification, tag: Int, cause: SkipCause) {
        freeSlots.append(tag)
        counts.skip(cause)
        notification.finish()
    }

    /// When `next` has something to do without an event: a stream's timeout, a retry's
    /// backoff, the feed asked again, a ticket falling due, the counts' flush, a PING's timeout,
    /// or the start time.
    var nextWakeUp: UInt64? {
        guard !isDone else { return nil }
        var earliest = notBefore == 0 ? UInt64.max : notBefore
        if inFlight > 0 { earliest = lastTimeoutScan + Self.timeoutScanInterval }
        if !atCapacity {
            if let retry = retries.last { earliest = min(earliest, retry.due) }
            if starvedUntil > 0 { earliest = min(earliest, starvedUntil) }
            if nextTicketAt > 0 && !scheduleEnded { earliest = min(earliest, nextTicketAt) }
        }
        if counts.finals > 0 || counts.requests > 0 { earliest = min(earliest, lastFlush + Self.flushDelay) }
        if let ping = proofPing { earliest = min(earliest, ping.sentAt + streamTimeout) }
        if noStreamSince > 0 { earliest = min(earliest, noStreamSince + streamTimeout) }
        return earliest == .max ? nil : earliest
    }

    // MARK: Flushing

    /// Whether the counts are due to go to the run's statistics: every `LoadCounts.flushInterval`
    /// outcomes, and at least every `flushDelay`.
    func flushDue(now: UInt64) -> Bool {
        counts.finals >= LoadCounts.flushInterval || now >= lastFlush + Self.flushDelay
    }

    /// Hands the counts since the last flush to `deliver` (read in place: a copy kept past
    /// the call would make clearing them reallocate their arrays) and returns the provider
    /// token's new `authorization` when it was renewed since this connection's fields were made.
    mutating func flush(now: UInt64, counts deliver: (LoadCounts) -> Void) -> String? {
        lastFlush = now
        var authorization: String?
        if let providerTokens {
            let current = providerTokens.current()
            if current.generation != authorizationGeneration {
                authorizationGeneration = current.generation
                authorization = current.value
            }
        }
        flushedRequests += counts.requests
        deliver(counts)
        counts.clear()
        return authorization
    }

    // MARK: Deciding (the turn's start: +Turn.swift; the next notification: +Work.swift)

    /// Whether the turn's start has steps left (a PING or a reset returned before the sends).
    var inTurnStart = false

    /// The schedule is over: the rest of the batch is not sent.
    mutating func endSchedule() {
        scheduleEnded = true
        if let waiting = waiting.take() { leaveUnsent(waiting) }
        if let batch { leaveUnsent(batch) }
        batch = nil
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
        if feed.isInterrupted { counts.unsent += 1 } else { counts.unscheduled += 1 }
    }

    static let timeoutScanInterval: UInt64 = 250_000_000
    static let flushDelay: UInt64 = 1_000_000_000
    static let feedPollInterval: UInt64 = 1_000_000
}
