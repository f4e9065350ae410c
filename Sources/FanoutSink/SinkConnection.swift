import FanoutAPNs
import FanoutHTTP2
import FanoutMeasure
import FanoutRandom
import FanoutSettings
import Foundation
import NIOCore
import NIOSSL

/// One client connection to the sink: answers each request as APNs would, follows APNs'
/// MAX_CONCURRENT_STREAMS behaviour, and counts everything.
package struct SinkConnection: HTTP2ConnectionDelegate {
    let configuration: SinkConfiguration
    /// Whether the scenario's latency is drawn from a spread (`LatencyDistribution.hasSpread`),
    /// asked once: an empirical one's answer builds a set.
    private let latencyHasSpread: Bool
    /// Half the wire's round trip (`SinkWire`, its median for a spread; 0 without a wire): the
    /// time a timed request spent on the wire before its read, and its answer will spend after
    /// its write. It is the endpoint's path, not a queue of the harness, so it is taken out of
    /// the transit and given to the sender with the hold (`TimedAPNsID`).
    private let wireOneWay: UInt64
    let statistics: SinkStatistics
    let state: SinkState
    private var counts = SinkCounts()
    /// Requests already added to the statistics, and when they last were.
    private var handled = 0
    private var lastFlush = NIODeadline.now()
    /// This connection's entry in the live statistics.
    private let record: SinkConnectionRecord
    private var authentication = TokenAuthentication.ConnectionState()
    /// The connection's token-auth state (for tests).
    var authenticationState: TokenAuthentication.ConnectionState { authentication }
    private var streamsRaised = false
    /// Whether the provider authenticated with a TLS client certificate (not tokens).
    private var certificateAuthenticated = false
    private var ids: APNsIDGenerator
    /// The apns-id of the response being written.
    private let apnsIDStorage = ScratchBytes(count: 36)
    private var apnsID: UnsafeMutableRawBufferPointer { apnsIDStorage.bytes }
    /// The `apns-unique-id` of a timed request's answer.
    private let uniqueIDStorage = ScratchBytes(count: 36)
    private var timestampedBody = ByteBuffer()
    /// Answers held back by injected latency or a stall.
    private var pending = PendingResponses()
    /// Streams reset while answers were held: some of the held answers may be for them.
    private var resetsWhileHolding = 0

    /// Answers held now; read by tests (SinkConnectionTests bounds it under resets).
    var heldAnswers: Int { pending.count }
    private var random: SinkRandom
    /// When the connection opened, and whether its timed GOAWAY has gone out.
    private let openedAt = NIODeadline.now()
    private var timedGoAwaySent = false
    /// Requests seen: a connection whose count has not moved over a whole idle timeout, with
    /// nothing open or held, is idle. Only requests count: idle means no progress, not no
    /// frames (PINGs, SETTINGS or a stream that never ends keep nothing alive).
    private var activity = 0
    /// When streams whose requests are still arriving are looked at next (`requestTimeout`).
    private var requestCheck: NIODeadline?
    /// When idleness is checked next, and the activity seen at the last check.
    private var idleCheck: (at: NIODeadline, activity: Int)?
    /// With a per-connection throughput ceiling: when the next answer may go out.
    private var nextPacedAnswer: UInt64 = 0
    /// The bundle ids of the client's verified certificate, when it authenticated with one.
    private var certificateTopics: Set<[UInt8]>?
    /// The topics a request may name: the certificate's bundles, else `--bundle`'s (`nil`: any).
    /// Kept apart from the two it comes from so that a request borrows it rather than building
    /// it (`??` made a copy, a reference count up and down, per request).
    private var allowedTopics: Set<[UInt8]>?
    /// The topic a request without `apns-topic` gets: the certificate's bundle when it names
    /// one (then `hasDefaultTopic`), else empty.
    private var defaultTopic: [UInt8] = []
    private var hasDefaultTopic = false
    private var captured = CaptureBuffer()
    /// The sink's own delays on this connection's loop.
    private let recorder: SinkLoopRecorder
    /// The answers queued since the connection's bytes last went to the socket: each answer's
    /// lateness is timed when it is really written (`outboundWritten`). Keeps its capacity: at
    /// most the answers of one read burst or one wake-up.
    private let unwritten = UnwrittenAnswers(capacity: 256)
    /// The sink as the provider's instrument (`ProviderInstrument`), when it is one.
    private let instrument: ProviderInstrument?
    /// Streams in flight over time, and the HTTP/2 layer's refusals already on the card.
    private var streamUse = StreamUse()
    private var refusalsCarded = 0
    private var afterGoAwayCarded = 0
    /// Answers written on this connection, and how many of them the provider has shown it
    /// read: the sink sends a PING behind its answers (one outstanding at a time, its opaque
    /// data the count written before it), and the provider's acknowledgement says it read
    /// them (frames are read in order). With the sink as an instrument only.
    ///
    /// ```
    ///   sink:      answer 41 · answer 42 · PING(42) ··········· answer 43 · PING(43) ─╳ reset
    ///   provider:           read ········· PING ACK(42) ─►                    (unread)
    ///   → answersRead 42; the reset leaves answer 43 "answered, maybe unread"
    /// ```
    private var answersWritten = 0
    private var answersRead = 0
    private var readMarkerOutstanding = false
    /// With the device fleet: when the request being answered found its token unregistered
    /// (uptime nanoseconds, 0: it did not), the time its 410's body gives.
    private var unregisteredSince: UInt64 = 0
    /// The wall clock minus the uptime clock, in nanoseconds: turns `apns-expiration`'s UNIX
    /// seconds into the fleet's uptime clock, and the fleet's times into a 410's timestamp.
    private let wallOffset = Int64(Date().timeIntervalSince1970 * 1e9) - Int64(NIODeadline.now().uptimeNanoseconds)

    package init(
        configuration: SinkConfiguration,
        statistics: SinkStatistics,
        state: SinkState,
        seed: UInt64,
        peer: String = "in-memory",
        recorder: SinkLoopRecorder = SinkLoopRecorder()
    ) {
        self.configuration = configuration
        self.statistics = statistics
        self.state = state
        self.recorder = recorder
        allowedTopics = configuration.bundleBytes
        latencyHasSpread = configuration.scenario.latency?.hasSpread ?? false
        wireOneWay = (configuration.scenario.wire?.roundTrip.median ?? 0) / 2
        ids = APNsIDGenerator(seed: seed)
        random = SinkRandom(seed: configuration.scenario.seed ^ seed)
        record = statistics.connectionOpened(peer: peer)
        instrument = configuration.instrument
        idleCheck = configuration.idleTimeout.map { (openedAt + .nanoseconds(Int64($0.wholeNanoseconds)), -1) }
        requestCheck = configuration.requestTimeout.map { openedAt + .nanoseconds(Int64($0.wholeNanoseconds)) }
        instrument?.card.connectionOpened(record.id, now: openedAt.uptimeNanoseconds)
    }

    package var nextWakeUp: NIODeadline? {
        guard !counts.isEmpty || captured.lines > 0 else { return nextTimedEvent }
        var flush = lastFlush + .nanoseconds(SinkCounts.flushDelay)
        if instrument != nil && streamUse.level == 0 && pending.count == 0 && !counts.isEmpty {
            flush = lastFlush + .nanoseconds(Int64(SinkCounts.idleFlushDelay))
        }
        return nextTimedEvent.map { min($0, flush) } ?? flush
    }

    /// The next held answer, timed GOAWAY or idleness check (`nextWakeUp` also wakes to add
    /// counts to the statistics).
    var nextTimedEvent: NIODeadline? {
        var earliest = pending.earliest.map { NIODeadline.uptimeNanoseconds($0) }
        func consider(_ time: NIODeadline) { earliest = earliest.map { min($0, time) } ?? time }
        if !timedGoAwaySent, let after = configuration.scenario.faults.goAwayAfter {
            consider(openedAt + .nanoseconds(Int64(after.wholeNanoseconds)))
        }
        if let idleCheck { consider(idleCheck.at) }
        if let requestCheck { consider(requestCheck) }
        return earliest
    }

    package mutating func wake(now: NIODeadline, connection: inout HTTP2Connection) {
        if now >= lastFlush + .nanoseconds(SinkCounts.flushDelay) { flushCounts(now: now) }
        if let check = requestCheck, now >= check, let timeout = configuration.requestTimeout {
            resetIncompleteRequests(now: now, timeout: timeout, &connection)
        }
        if let check = idleCheck, now >= check.at, let timeout = configuration.idleTimeout {
            if check.activity == activity && connection.openStreams == 0 && pending.count == 0 {
                // APNs closes idle connections too; a shared sink must not keep them forever.
                idleCheck = nil
                goAway(&connection, reason: .idleTimeout)
            } else {
                idleCheck = (now + .nanoseconds(Int64(timeout.wholeNanoseconds)), activity)
            }
        }
        if !timedGoAwaySent, let after = configuration.scenario.faults.goAwayAfter,
            now >= openedAt + .nanoseconds(Int64(after.wholeNanoseconds))
        {
            timedGoAwaySent = true
            goAway(&connection, reason: configuration.scenario.faults.goAwayReason)
        }
        while let entry = pending.popDue(now: now.uptimeNanoseconds) {
            var id = entry.id
            withUnsafeBytes(of: &id) { apnsID.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[..<36])) }
            let rejection = entry.reason < 0 ? nil : APNsReason.all[Int(entry.reason)]
            let transit = UInt64(entry.transit) * 1000
            // A timed request's id holds its send time: it was received at sent + transit.
            let sent = transit == 0 ? 0 : TimedAPNsID.sendTime(in: UnsafeRawBufferPointer(apnsID)) ?? 0
            respond(
                to: entry.stream,
                rejection,
                digestHash: entry.digestHash,
                due: entry.due,
                transit: transit,
                held: entry.due - min(entry.due, sent + transit),
                &connection
            )
        }
        if instrument != nil { instrumentTurnEnded(now: now.uptimeNanoseconds, &connection) }
    }

    /// Resets the streams whose requests have not arrived whole `timeout` after their HEADERS
    /// (their slots come back: a client cannot hold them, nor the connection, forever), and
    /// looks again when the oldest one left would be due.
    private mutating func resetIncompleteRequests(
        now: NIODeadline,
        timeout: Duration,
        _ connection: inout HTTP2Connection
    ) {
        let span = timeout.wholeNanoseconds
        let time = now.uptimeNanoseconds
        let (reset, oldest) = connection.resetIncompleteRequests(openedBy: time - min(time, span))
        requestCheck = .uptimeNanoseconds((oldest ?? time) + span)
        guard reset > 0 else { return }
        let peer = record.peer
        state.limits.note(
            "request timeout",
            peer: peer,
            "reset \(reset) stream\(reset == 1 ? "" : "s") whose request did not arrive whole within \(DurationNotation.format(timeout))"
        )
    }

    package mutating func outboundWritten(at now: UInt64) {
        unwritten.drain { due, transit in recorder.written(due: due, transit: transit, at: now) }
    }

    package mutating func connectionStarted(_ connection: inout HTTP2Connection) {
        if state.isDraining { shutdown(&connection) }
    }

    package mutating func handle(_ event: HTTP2Event, connection: inout HTTP2Connection) {
        switch event {
        case .message(let request):
            activity &+= 1
            answer(request, &connection)
        case .streamReset:
            counts.resets += 1
            forgetHeldAnswersOfResetStreams(&connection)
        case .pingAcknowledged(let opaque) where readMarkerOutstanding && opaque <= UInt64(answersWritten):
            // The provider read every answer written before the PING.
            answersRead = max(answersRead, Int(opaque))
            readMarkerOutstanding = false
        default: break
        }
    }

    /// A held answer for a reset stream would never be sent: once resets could account for half
    /// of what is held, the answers of streams no longer open are dropped, so a client that
    /// opens and resets streams (rapid reset) cannot make the heap grow past twice what is open.
    private mutating func forgetHeldAnswersOfResetStreams(_ connection: inout HTTP2Connection) {
        guard pending.count > 0 else { return }
        resetsWhileHolding += 1
        guard resetsWhileHolding >= 64, 2 * resetsWhileHolding >= pending.count else { return }
        pending.removeAll { !connection.isOpen($0.stream) }
        resetsWhileHolding = 0
    }

    package mutating func tlsEstablished(peerCertificate: NIOSSLCertificate?, connection: inout HTTP2Connection) {
        guard configuration.certificateAuthentication, let peerCertificate else { return }
        let topics = SinkCertificates.topics(of: peerCertificate).map { Array($0.utf8) }
        certificateTopics = Set(topics)
        allowedTopics = certificateTopics
        defaultTopic = topics.count == 1 ? topics[0] : []
        hasDefaultTopic = topics.count == 1
        // The provider authenticated with its certificate: Apple's one stream until a valid
        // token is a token connection's rule, so its streams are raised now, not at the first
        // acceptance (the SETTINGS goes out right behind the first, in the same flight).
        certificateAuthenticated = true
        if !streamsRaised {
            streamsRaised = true
            connection.setMaxConcurrentStreams(configuration.maxConcurrentStreams)
        }
    }

    package mutating func connectionEnded(_ connection: borrowing HTTP2Connection, error: (any Error)?) {
        let now = NIODeadline.now()
        if let instrument {
            cardConnectionFaults(connection, now: now.uptimeNanoseconds)
            // Closed by the provider: neither the sink's GOAWAY (a fault, the drain, idleness)
            // nor its abort (`close-after-requests`, the connection limit) came first.
            let byProvider = connection.sentGoAway == nil && !connection.isAborted && !state.isDraining
            record.closed(at: now.uptimeNanoseconds, byProvider: byProvider)
            // A connection that broke (reset, timed out) with answers the provider never
            // showed it read: Linux answers a close with unread bytes in the receive buffer
            // with a reset, so a provider that died holding answers shows here. A clean close
            // (FIN) read what had arrived; answers still on the way then are not counted.
            if answersWritten > answersRead, let error, Self.isBroken(error) {
                record.maybeUnread(answersWritten - answersRead)
            }
            if byProvider {
                instrument.card.providerClosed(
                    record.id,
                    lifetime: now.uptimeNanoseconds - openedAt.uptimeNanoseconds,
                    requests: handled + counts.requests,
                    now: now.uptimeNanoseconds
                )
            }
        }
        flushCounts(now: now)
        statistics.connectionClosed(record)
    }

    /// After a turn that read requests or wrote answers: the streams now in flight; and, once
    /// nothing is in flight, the counts handed over (at most every `SinkCounts.idleFlushDelay`:
    /// answered at once, a connection is idle after every request), so that `--expect` sees the
    /// last notifications without waiting a second for the next flush.
    private mutating func instrumentTurnEnded(now: UInt64, _ connection: inout HTTP2Connection) {
        streamUse.note(connection.openStreams, at: now)
        if !readMarkerOutstanding && answersWritten > answersRead && connection.sentGoAway == nil {
            connection.ping(opaque: UInt64(answersWritten))
            readMarkerOutstanding = true
        }
        if connection.openStreams == 0 && pending.count == 0 && !counts.isEmpty
            && now >= lastFlush.uptimeNanoseconds + SinkCounts.idleFlushDelay
        {
            flushCounts(now: .uptimeNanoseconds(now))
        }
    }

    /// Puts the HTTP/2 layer's refusals since the last look on the card.
    private mutating func cardConnectionFaults(_ connection: borrowing HTTP2Connection, now: UInt64) {
        guard let instrument else { return }
        if connection.refusedStreams > refusalsCarded {
            instrument.card.refused(
                connection.refusedStreams - refusalsCarded,
                limit: connection.streamLimit,
                connection: record.id,
                now: now
            )
            refusalsCarded = connection.refusedStreams
        }
        if connection.streamsAfterGoAway > afterGoAwayCarded {
            instrument.card.afterGoAway(
                connection.streamsAfterGoAway - afterGoAwayCarded,
                connection: record.id,
                now: now
            )
            afterGoAwayCarded = connection.streamsAfterGoAway
        }
    }

    /// Adds the connection's counts (and captured lines) to the shared statistics.
    private mutating func flushCounts(now: NIODeadline) {
        handled += counts.requests
        if instrument != nil { record.note(streams: streamUse, refused: refusalsCarded) }
        statistics.add(counts, to: record)
        counts.clear()
        if let capture = configuration.capture { captured.flush(to: capture) }
        lastFlush = now
    }

    /// Sends GOAWAY with APNs' `{"reason":"Shutdown"}`: open streams finish, no new ones start.
    mutating func shutdown(_ connection: inout HTTP2Connection) {
        goAway(&connection, reason: .shutdown)
    }

    private func goAway(_ connection: inout HTTP2Connection, reason: APNsReason) {
        guard connection.sentGoAway == nil else { return }
        // APNs' GOAWAY carries the same JSON as its error responses.
        var body = ByteBuffer()
        APNsErrorBody.write(reason, into: &body)
        connection.goAway(code: .noError, debugData: Array(body.readableBytesView))
    }

    private mutating func answer(_ request: HTTP2Message, _ connection: inout HTTP2Connection) {
        // Requests behind the one that closed the connection, in the same read, are not seen.
        guard !connection.isAborted else { return }
        counts.requests += 1
        counts.bodyBytes += request.bodyLength
        counts.peakStreams = max(counts.peakStreams, connection.openStreams)
        let faults = configuration.scenario.faults
        unregisteredSince = 0
        if let limit = faults.closeAfterRequests, counts.requests + handled >= limit {
            connection.abort()
            return
        }
        let unanswered = faults.unansweredShare > 0 && random.unit() < faults.unansweredShare
        let now = NIODeadline.now().uptimeNanoseconds
        if instrument != nil { streamUse.note(connection.openStreams, at: now) }
        // Received when its read burst began: the time spent on the requests before it in the
        // burst is the sink's, and shows as lateness, not as a shorter injected latency.
        let received = connection.readStartedAt == 0 ? now : min(now, connection.readStartedAt)
        let fields = APNsRequestCheck.fields(of: request.headers)
        var digestHash: UInt64 = 0
        /// When the client sent it, if its apns-id says (`TimedAPNsID`, this host's clock).
        var sentAt: UInt64 = 0
        /// With the instrument: the token's hash (0: no token read).
        var tokenHash: UInt64 = 0
        let rejection: APNsReason? = request.headers.withUnsafeBytes { bytes in
            var echoedID = false
            if fields.apnsID.count == 36 {
                let id = APNsRequestCheck.view(fields.apnsID, bytes)
                if APNsRequestCheck.isCanonicalUUID(id) {
                    apnsID.copyMemory(from: id)
                    echoedID = true
                    if let time = TimedAPNsID.sendTime(in: id) {
                        if Self.isBelievable(sentAt: time, now: now) { sentAt = time } else { counts.untimedIDs += 1 }
                    }
                }
            }
            if !echoedID { ids.write(into: apnsID) }
            if state.isDraining { return .shutdown }
            let token: APNsRequestCheck.Slice
            switch APNsRequestCheck.checkRequestLine(fields, in: bytes, tokenFormat: configuration.tokenFormat) {
            case .failure(let rejection): return rejection.reason
            case .success(let slice): token = slice
            }
            if let instrument {
                let tokenBytes = APNsRequestCheck.view(token, bytes)
                tokenHash = TokenList.hash(tokenBytes)
                digestHash = card(
                    request,
                    token: tokenBytes,
                    hash: tokenHash,
                    fields: fields,
                    bytes: bytes,
                    echoedID: echoedID,
                    instrument,
                    connection,
                    now: now
                )
            }
            let issuedBefore = authentication.tokenIssuedAt
            if let reason = authenticate(fields, in: bytes) {
                if reason == .expiredProviderToken || reason == .tooManyProviderTokenUpdates {
                    instrument?.card.providerToken(refused: reason, connection: record.id, now: now)
                }
                return reason
            }
            if let instrument, authentication.tokenIssuedAt != issuedBefore {
                instrument.card.providerToken(issuedAt: authentication.tokenIssuedAt, connection: record.id, now: now)
            }
            return defaultTopic.withUnsafeBytes { defaultTopic in
                if let rejection = APNsRequestCheck.checkNotification(
                    fields,
                    in: bytes,
                    body: request.body,
                    bodyLength: request.bodyLength,
                    allowedBundles: allowedTopics,
                    defaultTopic: hasDefaultTopic ? defaultTopic : nil
                ) {
                    return rejection.reason
                }
                let tokenBytes = APNsRequestCheck.view(token, bytes)
                var reason = scenarioError(for: tokenBytes, hash: tokenHash, now: now)
                if reason == nil, !unanswered, let fleet = state.fleet {
                    if tokenHash == 0 { tokenHash = TokenList.hash(tokenBytes) }
                    reason = offer(to: fleet, token: tokenHash, fields: fields, bytes: bytes, now: received)
                }
                if reason == nil && digestHash == 0 {
                    digestHash = NotificationDigest.hash(token: tokenBytes, payload: request.body)
                }
                if !unanswered, configuration.capture?.claim(&random) == true {
                    captured.append(
                        connection: record.id,
                        stream: request.stream,
                        token: tokenBytes,
                        topic: fields.topic.isPresent ? APNsRequestCheck.view(fields.topic, bytes) : defaultTopic,
                        pushType: APNsRequestCheck.view(fields.pushType, bytes),
                        apnsID: UnsafeRawBufferPointer(apnsID),
                        rejection: reason,
                        payload: request.body
                    )
                }
                return reason
            }
        }
        if let instrument {
            let mark = instrument.mark(forRequestAt: received)
            let accepted = rejection == nil && !unanswered
            recorder.arrived(after: received - min(received, mark), accepted: accepted)
            if tokenHash != 0 {
                if let rejection { instrument.card.rejected(hash: tokenHash, rejection, now: now) }
                if accepted { instrument.expected?.accepted(hash: tokenHash) }
            }
        }
        if unanswered {
            if instrument != nil { instrumentTurnEnded(now: now, &connection) }
            return
        }
        var (due, drawn) = responseTime(after: received)
        if drawn && due > received {
            // A drawn hold moves to its window's nearest instant, so that answers drawn close
            // together go out together (`AnswerCoalescing`); a floor (fixed, a stall's end, the
            // pacing) is kept to the nanosecond.
            let shift = configuration.coalescing.shift(forHold: due - received)
            due = AnswerCoalescing.nearest(due, shift: shift)
        }
        if due > received { recorder.held(due - received) }
        // What lay between the send and this read: the client's and the kernel's queues, this
        // sink's read backlog (`SinkLoopRecorder.fromSend`).
        let transit: UInt64 =
            sentAt == 0 ? 0 : max(1, min(received - min(received, sentAt + wireOneWay), Self.longestTransit))
        if due > now {
            var entry = PendingResponses.Entry(
                due: due,
                stream: request.stream,
                transit: UInt32(transit == 0 ? 0 : max(1, transit / 1000)),
                digestHash: digestHash,
                reason: rejection.map { Int16($0.index) } ?? -1
            )
            withUnsafeMutableBytes(of: &entry.id) { $0.copyMemory(from: UnsafeRawBufferPointer(apnsID)) }
            pending.push(entry)
        } else {
            respond(
                to: request.stream,
                rejection,
                digestHash: digestHash,
                due: due,
                transit: transit,
                held: due - min(due, received) + wireOneWay,
                unregisteredSince: unregisteredSince,
                &connection
            )
        }
        if let limit = faults.goAwayAfterRequests, counts.requests + handled >= limit {
            goAway(&connection, reason: faults.goAwayReason)
        }
        if counts.requests >= SinkCounts.flushInterval || captured.bytes.readableBytes >= CaptureBuffer.limit {
            flushCounts(now: .uptimeNanoseconds(now))
        }
        if rejection == .shutdown { shutdown(&connection) }
        if instrument != nil { instrumentTurnEnded(now: now, &connection) }
    }

    /// The card's checks of one request whose token was read: a retry it should not be, streams
    /// past the initial limit, its apns-id, its payload's size. Returns the notification's
    /// digest hash when it worked it out for the apns-id (0 otherwise), so that it is not
    /// worked out twice.
    private mutating func card(
        _ request: HTTP2Message,
        token: UnsafeRawBufferPointer,
        hash: UInt64,
        fields: APNsRequestCheck.Fields,
        bytes: UnsafeRawBufferPointer,
        echoedID: Bool,
        _ instrument: ProviderInstrument,
        _ connection: borrowing HTTP2Connection,
        now: UInt64
    ) -> UInt64 {
        let card = instrument.card
        card.arrived(token: token, hash: hash, connection: record.id, now: now)
        // Apple's one stream until a valid provider token applies to token connections, and
        // only once the provider knew it: it had acknowledged the SETTINGS that said 1 (before
        // that it may open streams against RFC 9113's default of no limit: §5.1.2, §6.5.3).
        if !streamsRaised, !certificateAuthenticated, let acknowledged = connection.acknowledgedMaxConcurrentStreams,
            connection.openStreams > Int(acknowledged)
        {
            card.beforeFirstAcceptance(
                open: connection.openStreams,
                limit: Int(acknowledged),
                token: token,
                connection: record.id,
                now: now
            )
        }
        var digestHash: UInt64 = 0
        if echoedID {
            let id = APNsRequestCheck.view(fields.apnsID, bytes)
            digestHash = NotificationDigest.hash(token: token, payload: request.body)
            card.identified(
                idHash: TokenList.hash(id),
                digestHash: digestHash,
                token: token,
                connection: record.id,
                now: now
            )
        }
        // Every limit is at least the standard one: a body well under it needs no push type.
        if ProviderRule.isNearLimit(request.bodyLength, limit: APNsPayloadLimit.standard) {
            let pushType =
                fields.pushType.isPresent ? APNsPushType(bytes: APNsRequestCheck.view(fields.pushType, bytes)) : nil
            card.payload(
                length: request.bodyLength,
                limit: pushType?.payloadSizeLimit ?? APNsPayloadLimit.standard,
                token: token,
                connection: record.id,
                now: now
            )
        }
        return digestHash
    }

    /// Rule 4 of `APNsRequestCheck`: the client's certificate, else its provider token.
    private mutating func authenticate(
        _ fields: APNsRequestCheck.Fields,
        in bytes: UnsafeRawBufferPointer
    ) -> APNsReason? {
        if let certificateTopics { return certificateTopics.isEmpty ? .badCertificate : nil }
        if let authentication = configuration.tokenAuthentication {
            let field = fields.authorization.isPresent ? APNsRequestCheck.view(fields.authorization, bytes) : nil
            return authentication.check(field, state: &self.authentication)
        }
        return configuration.certificateAuthentication ? .missingProviderToken : nil
    }

    /// The scenario's error for a request that passed every rule: the token lists first, then
    /// the per-token rate limit, then the mix (permanent errors from the seed and the token,
    /// transient ones per request).
    /// The token's `TokenList.hash` is worked out once, when first needed (`known`: already
    /// worked out, 0 when not).
    private mutating func scenarioError(
        for token: UnsafeRawBufferPointer,
        hash known: UInt64,
        now: UInt64
    ) -> APNsReason? {
        let scenario = configuration.scenario
        var hash = known
        func tokenHash() -> UInt64 {
            if hash == 0 { hash = TokenList.hash(token) }
            return hash
        }
        if !scenario.unregisteredTokens.isEmpty && scenario.unregisteredTokens.contains(hash: tokenHash()) {
            return .unregistered
        }
        if !scenario.badTokens.isEmpty && scenario.badTokens.contains(hash: tokenHash()) { return .badDeviceToken }
        if let limiter = state.tokenLimiter, !limiter.admit(hash: tokenHash(), now: now) { return .tooManyRequests }
        guard !scenario.errors.isEmpty else { return nil }
        let tokenDraw = Double(SeededRandom.mix(tokenHash() ^ scenario.seed) >> 11) * 0x1p-53
        let requestDraw = random.unit()
        var permanent = 0.0
        var transient = 0.0
        for (reason, probability) in scenario.errors {
            if reason.isRetryable {
                transient += probability
                if requestDraw < transient { return reason }
            } else {
                permanent += probability
                if tokenDraw < permanent { return reason }
            }
        }
        return nil
    }

    /// Hands an accepted notification to the device fleet: `nil` when APNs takes it, 410
    /// Unregistered (its time in `unregisteredSince`) when an earlier delivery found the app
    /// gone. `apns-expiration` was checked to be decimal (`APNsRequestCheck`, rule 9).
    private mutating func offer(
        to fleet: DeviceFleetShards,
        token: UInt64,
        fields: APNsRequestCheck.Fields,
        bytes: UnsafeRawBufferPointer,
        now: UInt64
    ) -> APNsReason? {
        var notification = DeviceNotification(token: token)
        if fields.priority.isPresent,
            let priority = HTTP2HeaderList.decimal(APNsRequestCheck.view(fields.priority, bytes))
        {
            notification.priority = Int(priority)
        }
        if fields.expiration.isPresent,
            let seconds = HTTP2HeaderList.decimal(APNsRequestCheck.view(fields.expiration, bytes))
        {
            if seconds == 0 {
                notification.expiration = .immediately
            } else {
                let (wall, overflow) = Int64(clamping: seconds).multipliedReportingOverflow(by: 1_000_000_000)
                let uptime = overflow ? Int64.max : wall - wallOffset
                notification.expiration = .at(uptime <= 0 ? 1 : UInt64(uptime))
            }
        }
        if fields.collapseID.count > 0 {
            notification.collapse = UInt32(
                truncatingIfNeeded: TokenList.hash(APNsRequestCheck.view(fields.collapseID, bytes))
            )
        }
        notification.isBackground =
            fields.pushType.isPresent
            && APNsPushType(bytes: APNsRequestCheck.view(fields.pushType, bytes)) == .background
        // The apns-id answered (echoed or made): its history is kept under it.
        notification.id = UnsafeRawBufferPointer(apnsID)
        switch fleet.accept(notification, now: now) {
        case .accepted: return nil
        case .unregistered(let since):
            unregisteredSince = since
            return .unregistered
        }
    }

    /// When the answer to a request received at `now` goes out: after the injected latency,
    /// no sooner than the connection's throughput ceiling allows, and not inside a stall
    /// window (windows of `length` every `every`, from `every` after start). `drawn`: the time
    /// is a draw from a distribution with a spread, which neither the pacing nor a stall moved.
    private mutating func responseTime(after now: UInt64) -> (due: UInt64, drawn: Bool) {
        let drawnAt = now + (configuration.scenario.latency?.sample(&random) ?? 0)
        var due = drawnAt
        if let rate = configuration.scenario.connectionRate {
            due = max(due, nextPacedAnswer)
            nextPacedAnswer = due + rate.window.wholeNanoseconds / UInt64(rate.limit)
        }
        if let stall = configuration.scenario.stall {
            due = Self.outsideStalls(
                due,
                startedAt: state.startedAt,
                every: stall.every.wholeNanoseconds,
                length: stall.length.wholeNanoseconds
            )
        }
        return (due, latencyHasSpread && due == drawnAt)
    }

    /// `due`, or the end of the stall window it falls in (windows of `length` every `every`
    /// nanoseconds, the first `every` after `startedAt`).
    static func outsideStalls(_ due: UInt64, startedAt: UInt64, every: UInt64, length: UInt64) -> UInt64 {
        let elapsed = due - min(due, startedAt)
        guard every > 0, elapsed >= every, elapsed % every < length else { return due }
        return due + length - elapsed % every
    }

    /// A send time further back than this is taken as this long ago (µs in a held entry's 32 bits).
    static let longestTransit: UInt64 = 3_600_000_000_000

    /// How far before its read a timed apns-id's send time may lie to be believed: 10 s. A
    /// request waits in at most the sender's and the sink's socket buffers (a few MB each: tens
    /// of thousands of requests, well under a second at the sink's rate) and the sink's read
    /// backlog; an id older than this is not a send time of this host's clock but a client's
    /// invention (the host tag is derived from the world-readable boot id), and would make the
    /// sink's own "lateness from the send" read whatever the client chose. One from after its
    /// read (the same clock: honest ids cannot be) is not believed either.
    static let timedIDBound: UInt64 = 10_000_000_000
    static let timedIDBoundText = "10 s"

    /// Whether a timed apns-id's send time (`TimedAPNsID`, uptime nanoseconds) fits the sink's
    /// own clock at `now`, the time its request is handled.
    @inline(__always)
    static func isBelievable(sentAt: UInt64, now: UInt64) -> Bool {
        sentAt <= now && now - sentAt <= timedIDBound
    }

    /// Writes the answer to a request on `stream`; its lateness is timed from `due` (and from
    /// its send, `transit` before its read, when known).
    private mutating func respond(
        to stream: UInt32,
        _ rejection: APNsReason?,
        digestHash: UInt64,
        due: UInt64,
        transit: UInt64 = 0,
        held: UInt64 = 0,
        unregisteredSince: UInt64 = 0,
        _ connection: inout HTTP2Connection
    ) {
        let id = UnsafeRawBufferPointer(apnsID)
        // A timed request learns when its answer was written and what the scenario held it.
        var uniqueID: UnsafeRawBufferPointer?
        if transit > 0 {
            // Written when the wire will hand the answer on; held the wire's two ways too.
            let bits = TimedAPNsID.answerBits(
                writtenAt: NIODeadline.now().uptimeNanoseconds + wireOneWay,
                held: held + wireOneWay
            )
            UUIDText.write(bits, into: uniqueIDStorage.bytes)
            uniqueID = UnsafeRawBufferPointer(uniqueIDStorage.bytes)
        }
        guard let rejection else {
            let fields = SinkResponseFields(status: 200, apnsID: id, isError: false, uniqueID: uniqueID)
            guard connection.respond(stream: stream, fields, body: nil) else { return }
            answersWritten &+= 1
            unwritten.append(due: due, transit: transit)
            counts.accepted += 1
            counts.digest.add(hash: digestHash)
            if !streamsRaised {
                streamsRaised = true
                connection.setMaxConcurrentStreams(configuration.maxConcurrentStreams)
            }
            return
        }
        counts.reject(rejection)
        answersWritten &+= 1
        unwritten.append(due: due, transit: transit)
        let fields = SinkResponseFields(status: rejection.status, apnsID: id, isError: true, uniqueID: uniqueID)
        if rejection.status == 410 {
            // The fleet's uninstalled device: when APNs learnt it; else now.
            let milliseconds =
                unregisteredSince == 0
                ? Int64(Date().timeIntervalSince1970 * 1000) : (Int64(unregisteredSince) + wallOffset) / 1_000_000
            timestampedBody.clear()
            APNsErrorBody.write(rejection, timestamp: milliseconds, into: &timestampedBody)
            connection.respond(stream: stream, fields, body: timestampedBody)
        } else {
            connection.respond(stream: stream, fields, body: SinkErrorBody.bodies[rejection])
        }
        if configuration.throttleAfterRejection && streamsRaised {
            streamsRaised = false
            connection.setMaxConcurrentStreams(configuration.initialMaxConcurrentStreams)
        }
    }
}

extension SinkConnection {
    /// Whether a connection ended broken rather than closed: reset by the peer (ECONNRESET, a
    /// close with unread bytes), a write to a closed socket (EPIPE), or timed out.
    static func isBroken(_ error: any Error) -> Bool {
        guard let error = error as? IOError else { return false }
        return [ECONNRESET, EPIPE, ETIMEDOUT].contains(error.errnoCode)
    }
}
