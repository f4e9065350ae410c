import FanoutAPNs
import FanoutHTTP2
import FanoutPayload
import FanoutRandom
import FanoutSettings
import FanoutTokens
import Histogram
import NIOCore

/// One connection of the load engine: keeps as many notifications in flight as the server's
/// MAX_CONCURRENT_STREAMS and the run's cap allow, following the limit as it changes, and gives
/// every notification it takes exactly one final outcome or hands it back to the feed.
///
/// ```
///        feed.take() ─┐      ┌─ retry (429, 5xx, reset, timeout) after backoff ─┐
///                     ▼      ▼                                                   │
///   sendMore ──► in flight (slot = stream tag) ──► 200 ──► accepted               │
///                     │                        └─► 4xx ──► rejected (reason)     │
///                     ├─ REFUSED_STREAM / past GOAWAY ──► sent again at once      │
///                     └─ no answer in time ──► RST_STREAM CANCEL ─────────────────┘
///   connection ends ──► what is in flight or waiting goes back to the feed
///   work lost elsewhere waits ──► PING ──► ACK: the peer is alive since the loss ──► take it
/// ```
package struct LoadConnection: HTTP2ConnectionDelegate {
    /// A notification on the wire.
    private struct InFlight {
        var notification: PendingNotification
        var stream: UInt32
        var sentAt: UInt64
        var digestHash: UInt64
        /// Whether its apns-id carries its send time: a Fanout sink's answer then says what it held.
        var timed = false
    }

    private let configuration: LoadConfiguration
    private let feed: NotificationFeed
    private let statistics: LoadStatistics
    private let recorder: LoopRecorder
    /// The open model's schedule, `nil` for the closed model.
    private let tickets: ArrivalTickets?
    /// The connection slot it fills: whose share of the tickets it claims.
    private let slot: Int
    /// Nothing is sent before this time (uptime nanoseconds; `--start-at`), 0 once it passed
    /// or when none was set.
    private var notBefore: UInt64
    /// Until the first request goes out, which the run records (`LoadStatistics.firstSend`).
    private var isFirstSend = true
    private let ended: @Sendable (_ madeProgress: Bool) -> Void
    /// Called once, at the first answer: the endpoint is up (slots waiting to reconnect need
    /// not wait out their backoff).
    private let answered: @Sendable () -> Void
    private var hasAnswered = false

    private var slots: [InFlight?]
    private var freeSlots: [Int]
    private var inFlight = 0
    /// Sent again as soon as a stream is free (refused streams: the server never saw them).
    private var resend: [PendingNotification] = []
    /// Waiting for their backoff to pass, earliest last.
    private var retries: [(due: UInt64, notification: PendingNotification)] = []
    /// The batch this connection claims new tokens from, while it has unclaimed ones (other
    /// connections may claim from it too: `FeedBatch`). Let go of once it is spent: from then
    /// on in-flight notifications hold it, and the last to finish recycles it.
    private var batch: FeedBatch?
    /// The feed had nothing ready: ask again at this time.
    private var starvedUntil: UInt64 = 0
    private var feedFinished = false
    /// The schedule (or the closed model's duration) is over: no new token is started.
    private var scheduleEnded = false
    /// The open model: a new token taken before its ticket fell due; it goes out with the
    /// slot's next ticket. (A connection without a token claims no ticket: its slot's tickets
    /// then go, overdue, to connections that have tokens.)
    private var waiting: PendingNotification?
    /// The next ticket is due then (0: none is waited for).
    private var nextTicketAt: UInt64 = 0
    /// When a stream last came free after all were busy: a ticket due before then waited for
    /// the server, not for the generator.
    private var capacityFreedAt: UInt64 = 0
    private var isWritable = true
    private var done = false
    /// The loss epoch (`NotificationFeed.lossEpoch`) this connection has shown its peer alive
    /// through: it takes started notifications handed back after a loss only when this covers
    /// the loss.
    private var provenEpoch: UInt64 = 0
    /// The epoch and send time of the PING that is to show it, while unacknowledged.
    private var proofPing: (epoch: UInt64, sentAt: UInt64)?
    /// Whether the last `sendMore` stopped for want of a stream (or writability) rather than
    /// work: then only an answer (or a window) can let more go, and no timer is needed for
    /// retries or the feed.
    private var atCapacity = false

    private var fields: APNsRequestFields
    private var body = ByteBuffer()
    private var counts = LoadCounts()
    private var lastFlush = NIODeadline.now().uptimeNanoseconds
    private var lastTimeoutScan = NIODeadline.now().uptimeNanoseconds
    private var random: SeededRandom
    /// What becomes of a notification after each try.
    private var retryPolicy: RetryPolicy
    /// The provider token's generation in `fields`.
    private var authorizationGeneration = 0
    /// Tokens answered 410, waiting to be written.
    private var gone = ByteBuffer()
    /// `configuration.headers`' apns-id policy, kept apart: reading it through the headers
    /// retained and released their strings on every request (4% of the sender's instructions
    /// per notification, scripts/cost.sh).
    private let generatesAPNsID: Bool
    private let timedAPNsIDs: Int
    /// Requests until the next one whose apns-id carries its send time (`timedAPNsIDs`).
    private var untilTimedID = 0
    /// Answers until the next whose read delay is recorded (the first is).
    private var untilReadDelaySample = 0

    package init(
        configuration: LoadConfiguration,
        feed: NotificationFeed,
        statistics: LoadStatistics,
        recorder: LoopRecorder,
        tickets: ArrivalTickets?,
        slot: Int = 0,
        notBefore: UInt64 = 0,
        seed: UInt64,
        answered: @escaping @Sendable () -> Void = {},
        ended: @escaping @Sendable (_ madeProgress: Bool) -> Void
    ) {
        self.configuration = configuration
        self.feed = feed
        self.statistics = statistics
        self.recorder = recorder
        self.tickets = tickets
        self.slot = slot
        self.notBefore = notBefore
        self.ended = ended
        self.answered = answered
        random = SeededRandom(seed: seed)
        retryPolicy = RetryPolicy(configuration.shape, seed: SeededRandom.mix(seed))
        let cap = max(1, configuration.shape.streamsPerConnection)
        slots = [InFlight?](repeating: nil, count: cap)
        freeSlots = Array((0..<cap).reversed())
        let authorization = configuration.providerTokens?.current()
        authorizationGeneration = authorization?.generation ?? 0
        fields = APNsRequestFields(
            shared: configuration.sharedFields(authorization: authorization?.value),
            generatesID: configuration.headers.generatesAPNsID || configuration.headers.timedAPNsIDs > 0
        )
        generatesAPNsID = configuration.headers.generatesAPNsID
        timedAPNsIDs = configuration.headers.timedAPNsIDs
        body.reserveCapacity(configuration.encoder.template.sizeLimit + 64)
    }

    // MARK: Events

    package mutating func connectionStarted(_ connection: inout HTTP2Connection) {
        capacityFreedAt = NIODeadline.now().uptimeNanoseconds
        sendMore(&connection)
    }

    package mutating func handle(_ event: HTTP2Event, connection: inout HTTP2Connection) {
        let now = NIODeadline.now().uptimeNanoseconds
        switch event {
        case .message(let response):
            guard let entry = release(tag: response.tag) else { break }
            // One answer in `readDelaySampling`: a histogram record on every answer was 2% of the
            // sender's instructions per notification (scripts/cost.sh).
            untilReadDelaySample &-= 1
            if untilReadDelaySample <= 0 {
                untilReadDelaySample = Self.readDelaySampling
                recorder.answerRead(startedAt: connection.readStartedAt, now: now)
            }
            if entry.timed { timeAnswer(response, entry, now: now) }
            if !hasAnswered {
                hasAnswered = true
                answered()
            }
            let reason = response.status == 200 ? nil : APNsErrorBody.reason(in: response.body)
            if response.status == 200 {
                counts.answeredOK += 1
            } else if let reason {
                counts.answers[LoadCounts.reasonIndex[reason]!] += 1
            }
            settle(entry, after: .answered(status: response.status, reason: reason), now: now)
        case .streamReset(_, let tag, let code, _):
            guard let entry = release(tag: tag) else { break }
            settle(entry, after: code == .refusedStream ? .refused : .reset, now: now)
        case .pingAcknowledged(let opaque):
            // The peer answered a PING sent after loss `opaque`: it is alive since.
            guard let ping = proofPing, ping.epoch == opaque else { break }
            proofPing = nil
            provenEpoch = max(provenEpoch, opaque)
        default:
            break
        }
        sendMore(&connection)
        finishIfIdle(&connection)
        if counts.finals >= LoadCounts.flushInterval { flush(now: now) }
    }

    package mutating func writabilityChanged(_ isWritable: Bool, connection: inout HTTP2Connection) {
        self.isWritable = isWritable
        if isWritable { sendMore(&connection) }
    }

    package var nextWakeUp: NIODeadline? {
        var earliest = notBefore == 0 ? UInt64.max : notBefore
        if inFlight > 0 { earliest = lastTimeoutScan + Self.timeoutScanInterval }
        if !atCapacity {
            if let retry = retries.last { earliest = min(earliest, retry.due) }
            if starvedUntil > 0 { earliest = min(earliest, starvedUntil) }
            if nextTicketAt > 0 && !scheduleEnded { earliest = min(earliest, nextTicketAt) }
        }
        if counts.finals > 0 || counts.requests > 0 { earliest = min(earliest, lastFlush + Self.flushDelay) }
        if let ping = proofPing {
            earliest = min(earliest, ping.sentAt + configuration.shape.streamTimeout.wholeNanoseconds)
        }
        return earliest == .max ? nil : .uptimeNanoseconds(earliest)
    }

    package mutating func wake(now: NIODeadline, connection: inout HTTP2Connection) {
        let now = now.uptimeNanoseconds
        if inFlight > 0 && now >= lastTimeoutScan + Self.timeoutScanInterval { resetOverdue(now: now, &connection) }
        if now >= lastFlush + Self.flushDelay { flush(now: now) }
        sendMore(&connection)
        finishIfIdle(&connection)
    }

    package mutating func connectionEnded(_ connection: borrowing HTTP2Connection, error: (any Error)?) {
        let now = NIODeadline.now().uptimeNanoseconds
        for index in slots.indices {
            guard let entry = slots[index] else { continue }
            slots[index] = nil
            settle(entry, after: .connectionLost, now: now)
        }
        // What waits here (to resend, or for its backoff) goes to the connections still open.
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
        feed.giveBack(back)
        let madeProgress = counts.requests > 0 || statisticsFlushedRequests > 0
        flush(now: now)
        if error != nil { statistics.connectionFailures.wrappingIncrement(ordering: .relaxed) }
        ended(madeProgress)
    }

    // MARK: Sending

    /// Requests sent by this connection already added to the statistics.
    private var statisticsFlushedRequests = 0

    private mutating func sendMore(_ connection: inout HTTP2Connection) {
        // Nothing goes out before the server's SETTINGS: a connection accepted by a listener
        // that then dies (a server being killed) would cost every request on it a try.
        guard !done, connection.hasPeerSettings else { return }
        let now = NIODeadline.now().uptimeNanoseconds
        if notBefore != 0 {
            // Ready early (SETTINGS exchanged): `nextWakeUp` brings it back at the start.
            guard now >= notBefore else { return }
            notBefore = 0
            capacityFreedAt = now
        }
        proveAliveIfNeeded(now: now, &connection)
        if atCapacity { capacityFreedAt = now }
        defer { atCapacity = !isWritable || freeSlots.isEmpty || connection.availableStreams == 0 }
        while isWritable, !freeSlots.isEmpty, connection.availableStreams > 0,
            var notification = nextNotification(now: now)
        {
            let record = notification.token
            body.clear()
            let input = NotificationInput(
                token: record.token,
                sequence: record.sequence,
                fields: record.fields,
                tokenIsValidatedHex: true
            )
            do {
                _ = try configuration.encoder.encode(input, into: &body)
            } catch {
                if case .tooLarge = error { counts.skip(.payloadTooLarge) } else { counts.skip(.badFields) }
                notification.finish()
                continue
            }
            fields.select(token: record.token)
            if notification.firstSentAt == 0 { notification.firstSentAt = now }
            if timedAPNsIDs > 0 {
                fields.sendsID = untilTimedID == 0
                if fields.sendsID {
                    untilTimedID = timedAPNsIDs
                    fields.select(uuid: TimedAPNsID.bits(sentAt: now, random: random.next()))
                }
                untilTimedID -= 1
            } else if generatesAPNsID {
                if notification.id == (0, 0) { notification.id = (random.next(), random.next()) }
                fields.select(id: notification.id)
            }
            let digestHash = body.withUnsafeReadableBytes { NotificationDigest.hash(token: record.token, payload: $0) }
            let slot = freeSlots.removeLast()
            let stream: UInt32
            do {
                stream = try connection.sendRequest(fields, body: body, tag: UInt64(slot))
            } catch {
                freeSlots.append(slot)
                resend.append(notification)
                return
            }
            slots[slot] = InFlight(
                notification: notification,
                stream: stream,
                sentAt: now,
                digestHash: digestHash,
                timed: timedAPNsIDs > 0 && fields.sendsID
            )
            inFlight += 1
            counts.requests += 1
            if isFirstSend {
                isFirstSend = false
                statistics.noteFirstSend(now)
            }
        }
    }

    /// Sends a PING when notifications lost elsewhere wait for a connection whose peer is alive
    /// since the loss, and this one has not shown it (`NotificationFeed`). A PING unanswered
    /// for the stream timeout stands as an answer: the notifications are sent, and a dead
    /// connection costs them a try as before — the wait is bounded.
    private mutating func proveAliveIfNeeded(now: UInt64, _ connection: inout HTTP2Connection) {
        if let ping = proofPing {
            guard now - min(now, ping.sentAt) >= configuration.shape.streamTimeout.wholeNanoseconds else { return }
            proofPing = nil
            provenEpoch = max(provenEpoch, ping.epoch)
        }
        guard feed.startedWaiting > 0 else { return }
        let epoch = feed.lossEpoch
        guard epoch > provenEpoch else { return }
        connection.ping(opaque: epoch)
        proofPing = (epoch, now)
    }

    /// The next notification: one to send again, a retry whose time has come, one another
    /// connection handed back, or a new token (the open model: once its ticket is due).
    private mutating func nextNotification(now: UInt64) -> PendingNotification? {
        if let notification = resend.popLast() { return notification }
        if let retry = retries.last, retry.due <= now {
            retries.removeLast()
            return retry.notification
        }
        if let started = feed.takeStarted(proven: provenEpoch) { return started }
        if !scheduleEnded && feed.isClosed { endSchedule() }
        if scheduleEnded {
            feedFinished = true
            return nil
        }
        guard let tickets else { return nextToken(now: now) }
        guard var notification = waiting.take() ?? nextToken(now: now) else { return nil }
        // Handed back after its first send: its time was kept, it needs no ticket.
        if notification.firstSentAt != 0 { return notification }
        switch tickets.claim(now: now, slot: slot) {
        case .due(let due):
            nextTicketAt = 0
            notification.firstSentAt = due
            recorder.lagged(now - min(now, max(due, capacityFreedAt)), now: now)
            return notification
        case .notYet(let due):
            waiting = notification
            nextTicketAt = max(due, now + Self.ticketTick)
            return nil
        case .exhausted:
            waiting = notification
            endSchedule()
            feedFinished = true
            return nil
        }
    }

    /// The batch's next token, or new work from the feed.
    private mutating func nextToken(now: UInt64) -> PendingNotification? {
        while true {
            if let current = batch {
                if let index = current.claim() {
                    if index == current.count - 1 { batch = nil }
                    return PendingNotification(batch: current, index: Int32(index), attempts: 0, firstSentAt: 0)
                }
                // Another connection claimed the rest.
                batch = nil
            }
            guard now >= starvedUntil else { return nil }
            starvedUntil = 0
            switch feed.take(proven: provenEpoch) {
            case .returned(let notification):
                return notification
            case .batch(let next):
                batch = next
            case .notReady:
                starvedUntil = now + Self.feedPollInterval
                return nil
            case .finished:
                feedFinished = true
                // Its tickets are the other connections' now, without waiting.
                tickets?.retire(slot: slot)
                return nil
            }
        }
    }

    /// The schedule is over: the rest of the batch is not sent.
    private mutating func endSchedule() {
        scheduleEnded = true
        if let waiting = waiting.take() { leaveUnsent(waiting) }
        if let batch { leaveUnsent(batch) }
        batch = nil
    }

    private mutating func leaveUnsent(_ notification: PendingNotification) {
        counts.unscheduled += 1
        notification.finish()
    }

    /// Leaves the batch's unclaimed tokens unsent.
    private mutating func leaveUnsent(_ batch: FeedBatch) {
        for index in batch.claimRest() {
            counts.unscheduled += 1
            batch.finish(index)
        }
    }

    /// Once the feed is finished and nothing is left here, says GOAWAY: the connection closes.
    private mutating func finishIfIdle(_ connection: inout HTTP2Connection) {
        guard !done, feedFinished, inFlight == 0, resend.isEmpty, retries.isEmpty, batch == nil, waiting == nil else {
            return
        }
        guard (scheduleEnded ? feed.startedWaiting : feed.returnedWaiting) == 0 else {
            // Another connection handed work back after this one found the feed empty.
            feedFinished = false
            sendMore(&connection)
            return
        }
        done = true
        connection.goAway()
    }

    // MARK: Answers

    private mutating func release(tag: UInt64) -> InFlight? {
        let slot = Int(tag)
        guard slot < slots.count, let entry = slots[slot] else { return nil }
        slots[slot] = nil
        freeSlots.append(slot)
        inFlight -= 1
        return entry
    }

    /// Carries out the retry policy's action for a try that ended with `result`.
    private mutating func settle(_ entry: InFlight, after result: RetryPolicy.Result, now: UInt64) {
        var notification = entry.notification
        switch retryPolicy.next(after: result, attempts: Int(notification.attempts)) {
        case .accept:
            record(notification, now: now)
            counts.accept(digestHash: entry.digestHash)
            notification.finish()
        case .reject(let reason):
            record(notification, now: now)
            counts.reject(reason)
            if reason.status == 410, configuration.goneTokens != nil {
                gone.writeBytes(notification.token.token)
                gone.writeInteger(UInt8(ascii: "\n"))
            }
            notification.finish()
        case .fail(let cause):
            record(notification, now: now)
            counts.fail(cause)
            notification.finish()
        case .resend:
            resend.append(notification)
        case .retry(let delay):
            notification.attempts += 1
            counts.retries += 1
            let due = now + delay
            let position = retries.firstIndex { $0.due < due } ?? retries.count
            retries.insert((due, notification), at: position)
        }
    }

    /// A timed request's answer from a Fanout sink says when it was written and what the
    /// scenario held it (`TimedAPNsID`): the way back is the sender's, and the latency less the
    /// hold is the harness's whole share of this answer (first tries only: a retry's latency
    /// holds earlier tries too). That share splits, on one clock, where the sink wrote:
    ///
    /// ```
    ///   due ──► sent ──► sink reads ─ held ─► written ──► handled (now)
    ///   └ late ┘└─ the sink's (from the send) ─┘└ the way back ┘
    ///   └──────────────── own = now − due − held ─────────────────┘
    ///   the sender's share = late + the way back; the sink measures its own on the same answer
    /// ```
    private mutating func timeAnswer(_ response: HTTP2Message, _ entry: InFlight, now: UInt64) {
        guard let value = response.headers.first(TimedAPNsID.answerHeader),
            let answer = TimedAPNsID.answer(in: value)
        else { return }
        let returnPath = now - min(now, answer.writtenAt)
        let notification = entry.notification
        let firstTry =
            notification.attempts == 0
            ? (
                own: now - min(now, notification.firstSentAt + answer.held),
                senderShare: entry.sentAt - min(entry.sentAt, notification.firstSentAt) + returnPath
            ) : nil
        recorder.timedAnswer(returnPath: returnPath, firstTry: firstTry)
    }

    private mutating func resetOverdue(now: UInt64, _ connection: inout HTTP2Connection) {
        lastTimeoutScan = now
        let timeout = configuration.shape.streamTimeout.wholeNanoseconds
        for index in slots.indices {
            guard let entry = slots[index], now - entry.sentAt >= timeout else { continue }
            connection.resetStream(entry.stream, code: .cancel)
            _ = release(tag: UInt64(index))
            settle(entry, after: .timedOut, now: now)
        }
    }

    private mutating func record(_ notification: PendingNotification, now: UInt64) {
        recorder.complete(startedAt: notification.firstSentAt, now: now)
    }

    private mutating func flush(now: UInt64) {
        lastFlush = now
        if let tokens = configuration.providerTokens {
            let authorization = tokens.current()
            if authorization.generation != authorizationGeneration {
                authorizationGeneration = authorization.generation
                fields.shared = configuration.sharedFields(authorization: authorization.value)
            }
        }
        if gone.readableBytes > 0, let writer = configuration.goneTokens { writer.write(&gone) }
        statisticsFlushedRequests += counts.requests
        statistics.add(counts)
        counts.clear()
    }

    /// One answer in this many has its read delay recorded.
    static let readDelaySampling = 8
    static let timeoutScanInterval: UInt64 = 250_000_000
    static let flushDelay: UInt64 = 1_000_000_000
    static let feedPollInterval: UInt64 = 1_000_000
    /// The open model wakes a connection for tickets at most this often: a ticket may go out
    /// this much late, and its latency (counted from its due time) shows it. 1 ms made the
    /// send lateness at 5,000/s p50 0.26 / p99 0.97 ms and the measured p50 10.4 ms against a
    /// sink answering in 10 ms; 250 µs: 0.02 / 0.13–0.16 ms and 10.1 ms. 100 µs overloaded the
    /// sender at 100,000/s on 2 cores (p90 22–26 ms against 1.3 with 1 ms; 250 µs: 0.7–1.9).
    static let ticketTick: UInt64 = 250_000
}
