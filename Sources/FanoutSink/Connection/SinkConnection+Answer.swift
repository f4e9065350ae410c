import FanoutAPNs
import FanoutHTTP2
import FanoutMeasure
import NIOCore

/// One request's way through the connection: decided (`decide`), then answered at once or held
/// until its time (`AnswerScheduler`), then written (`respond`).
extension SinkConnection {
    /// An answer to write: its stream, what it says, and what its lateness is timed by.
    struct Answer {
        var stream: UInt32
        var rejection: APNsReason?
        /// The notification's digest hash, counted when it is accepted.
        var digestHash: UInt64
        /// When it was due, and how long before its read it was sent (0: unknown).
        var due: UInt64
        var transit: UInt64 = 0
        /// What the scenario held it (a timed request learns it in `apns-unique-id`).
        var held: UInt64 = 0
        /// With the device fleet, a 410's: when APNs learnt the app was gone (0: now).
        var unregisteredSince: UInt64 = 0
    }

    /// What the sink decided of one request, before its time.
    struct Decision {
        var rejection: APNsReason?
        var digestHash: UInt64 = 0
        /// When the client sent it, if its apns-id says (`TimedAPNsID`, this host's clock).
        var sentAt: UInt64 = 0
        /// The token's hash when it was worked out (0: not).
        var tokenHash: UInt64 = 0
    }

    mutating func answer(_ request: HTTP2Message, _ connection: inout HTTP2Connection) {
        // Requests behind the one that closed the connection, in the same read, are not seen.
        guard !connection.isAborted else { return }
        counts.requests += 1
        counts.bodyBytes += request.bodyLength
        counts.peakStreams = max(counts.peakStreams, connection.openStreams)
        unregisteredSince = 0
        if let action = lifecycle.requestArrived(total: counts.requests + handled) {
            return perform(action, now: clock.uptime(), &connection)
        }
        let fields = APNsRequestCheck.fields(of: request.headers)
        if !Self.hasDevicePath(request, fields), let route = Self.broadcastRoute(request, fields) {
            return answerBroadcast(request, fields, route, &connection)
        }
        let faults = configuration.scenario.faults
        let unanswered = faults.unansweredShare > 0 && random.unit() < faults.unansweredShare
        let now = clock.uptime()
        observer?.requestRead(openStreams: connection.openStreams, now: now)
        // Received when its read burst began: the time spent on the requests before it in the
        // burst is the sink's, and shows as lateness, not as a shorter injected latency.
        let received = connection.readStartedAt == 0 ? now : min(now, connection.readStartedAt)
        let decision = decide(request, fields, unanswered: unanswered, received: received, now: now, connection)
        observer?.decided(
            received: received,
            rejection: decision.rejection,
            accepted: decision.rejection == nil && !unanswered,
            tokenHash: decision.tokenHash,
            recorder: recorder,
            now: now
        )
        if unanswered { return turnEnded(now: now, &connection) }
        let due = scheduler.due(received: received, &random)
        if due > received { recorder.held(due - received) }
        // What lay between the send and this read: the client's and the kernel's queues, this
        // sink's read backlog (`SinkLoopRecorder.fromSend`).
        let sentAt = decision.sentAt
        let transit: UInt64 =
            sentAt == 0 ? 0 : max(1, min(received - min(received, sentAt + wireOneWay), Self.longestTransit))
        if due > now {
            var entry = PendingResponses.Entry(
                due: due,
                stream: request.stream,
                transit: UInt32(transit == 0 ? 0 : max(1, transit / 1000)),
                digestHash: decision.digestHash,
                reason: decision.rejection.map { Int16($0.index) } ?? -1
            )
            withUnsafeMutableBytes(of: &entry.id) { $0.copyMemory(from: UnsafeRawBufferPointer(apnsID)) }
            scheduler.hold(entry)
        } else {
            let answer = Answer(
                stream: request.stream,
                rejection: decision.rejection,
                digestHash: decision.digestHash,
                due: due,
                transit: transit,
                held: due - min(due, received) + wireOneWay,
                unregisteredSince: unregisteredSince
            )
            respond(answer, now: now, &connection)
        }
        if let action = lifecycle.requestHandled(total: counts.requests + handled) {
            perform(action, now: now, &connection)
        }
        if counts.requests >= SinkCounts.flushInterval || captured.bytes.readableBytes >= CaptureBuffer.limit {
            flushCounts(now: now)
        }
        if decision.rejection == .shutdown { shutdown(&connection) }
        turnEnded(now: now, &connection)
    }

    /// The verdict on one request: APNs's rules (`RequestChecks`), then the scenario's errors
    /// and the device fleet for one that passed them; the apns-id to answer with goes into
    /// `apnsID` (the request's, echoed, else a made one), and the card hears of its token.
    private mutating func decide(
        _ request: HTTP2Message,
        _ fields: APNsRequestCheck.Fields,
        unanswered: Bool,
        received: UInt64,
        now: UInt64,
        _ connection: borrowing HTTP2Connection
    ) -> Decision {
        request.headers.withUnsafeBytes { bytes in
            var decision = Decision()
            let echoedID = echoID(fields, in: bytes, now: now, sentAt: &decision.sentAt)
            let verdict = checks.verdict(
                fields,
                in: bytes,
                body: request.body,
                bodyLength: request.bodyLength,
                draining: state.isDraining
            )
            decision.rejection = verdict.rejection
            guard let token = verdict.token else { return decision }
            let tokenBytes = APNsRequestCheck.view(token, bytes)
            if let observer {
                decision.tokenHash = TokenList.hash(tokenBytes)
                decision.digestHash = observer.tokenRead(
                    request,
                    token: tokenBytes,
                    hash: decision.tokenHash,
                    fields: fields,
                    bytes: bytes,
                    echoedID: echoedID,
                    limited: !lifecycle.streamsRaised && !lifecycle.certificateAuthenticated,
                    connection,
                    now: now
                )
                observer.providerToken(verdict, issuedAt: checks.providerTokenIssuedAt, now: now)
            }
            guard verdict.rejection == nil else { return decision }
            var reason = ScenarioVerdict.rejection(
                for: tokenBytes,
                hash: decision.tokenHash,
                scenario: configuration.scenario,
                limiter: state.tokenLimiter,
                random: &random,
                now: now
            )
            if reason == nil, !unanswered, let fleet = state.fleet {
                if decision.tokenHash == 0 { decision.tokenHash = TokenList.hash(tokenBytes) }
                let notification = DeviceNotification(
                    token: decision.tokenHash,
                    fields,
                    in: bytes,
                    id: UnsafeRawBufferPointer(apnsID),
                    wallOffset: wallOffset
                )
                if case .unregistered(let since) = fleet.accept(notification, now: received) {
                    unregisteredSince = since
                    reason = .unregistered
                }
            }
            decision.rejection = reason
            if reason == nil && decision.digestHash == 0 {
                decision.digestHash = NotificationDigest.hash(token: tokenBytes, payload: request.body)
            }
            if !unanswered, configuration.capture?.claim(&random) == true {
                checks.topic(fields, in: bytes) { topic in
                    captured.append(
                        connection: record.id,
                        stream: request.stream,
                        token: tokenBytes,
                        topic: topic,
                        pushType: APNsRequestCheck.view(fields.pushType, bytes),
                        apnsID: UnsafeRawBufferPointer(apnsID),
                        rejection: reason,
                        payload: request.body
                    )
                }
            }
            return decision
        }
    }

    /// Copies the request's apns-id into `apnsID` when it is a canonical UUID (and its send
    /// time into `sentAt` when it is a believable timed one), else writes a made one. Returns
    /// whether it echoed the request's.
    private mutating func echoID(
        _ fields: APNsRequestCheck.Fields,
        in bytes: UnsafeRawBufferPointer,
        now: UInt64,
        sentAt: inout UInt64
    ) -> Bool {
        if fields.apnsID.count == 36 {
            let id = APNsRequestCheck.view(fields.apnsID, bytes)
            if APNsRequestCheck.isCanonicalUUID(id) {
                apnsID.copyMemory(from: id)
                if let time = TimedAPNsID.sendTime(in: id) {
                    if Self.isBelievable(sentAt: time, now: now) { sentAt = time } else { counts.untimedIDs += 1 }
                }
                return true
            }
        }
        ids.write(into: apnsID)
        return false
    }

    /// Writes an answer (its apns-id in `apnsID`); its lateness is timed from `due` (and from
    /// its send, `transit` before its read, when known).
    mutating func respond(_ answer: Answer, now: UInt64, _ connection: inout HTTP2Connection) {
        let id = UnsafeRawBufferPointer(apnsID)
        // A timed request learns when its answer was written and what the scenario held it.
        var uniqueID: UnsafeRawBufferPointer?
        if answer.transit > 0 {
            // Written when the wire will hand the answer on; held the wire's two ways too.
            let bits = TimedAPNsID.answerBits(writtenAt: clock.uptime() + wireOneWay, held: answer.held + wireOneWay)
            UUIDText.write(bits, into: uniqueIDStorage.bytes)
            uniqueID = UnsafeRawBufferPointer(uniqueIDStorage.bytes)
        }
        let unacknowledged = connection.unacknowledgedSettings
        guard let rejection = answer.rejection else {
            let fields = SinkResponseFields(status: 200, apnsID: id, isError: false, uniqueID: uniqueID)
            guard connection.respond(stream: answer.stream, fields, body: nil) else { return }
            observer?.answerWritten()
            unwritten.append(due: answer.due, transit: answer.transit)
            counts.accepted += 1
            counts.digest.add(hash: answer.digestHash)
            if let action = lifecycle.answered(accepted: true, unacknowledged: unacknowledged, now: now) {
                perform(action, now: now, &connection)
            }
            return
        }
        counts.reject(rejection)
        observer?.answerWritten()
        unwritten.append(due: answer.due, transit: answer.transit)
        let fields = SinkResponseFields(status: rejection.status, apnsID: id, isError: true, uniqueID: uniqueID)
        if rejection.status == 410 {
            // The fleet's uninstalled device: when APNs learnt it; else now.
            let nanoseconds =
                answer.unregisteredSince == 0 ? clock.wall() : Int64(answer.unregisteredSince) + wallOffset
            timestampedBody.clear()
            APNsErrorBody.write(rejection, timestamp: nanoseconds / 1_000_000, into: &timestampedBody)
            connection.respond(stream: answer.stream, fields, body: timestampedBody)
        } else {
            connection.respond(stream: answer.stream, fields, body: SinkErrorBody.bodies[rejection])
        }
        if let action = lifecycle.answered(accepted: false, unacknowledged: unacknowledged, now: now) {
            perform(action, now: now, &connection)
        }
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
}
