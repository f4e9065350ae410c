import FanoutAPNs
import FanoutDevices
import FanoutHTTP2
import FanoutMeasure
import FanoutScenarioTerms
import NIOCore

/// One request's way through the connection: decided (`decide`: APNs's rules, the scenario, the
/// fleet), its reply chosen by the connection's state machine (`SinkConnectionState.reply`:
/// none, now, or held until its time by `AnswerScheduler`), then written (`respond`, by
/// `AnswerWriter`), and the state machine told (`requestHandled`: GOAWAY after N, Shutdown).
extension SinkConnection {
    typealias Answer = AnswerWriter.Answer

    /// The connection's streams when a request was read, as the card looks at them: a value,
    /// so that `decide` need not borrow the connection (which copies it, 865 bytes a request).
    struct StreamsSeen {
        var open: Int
        /// The MAX_CONCURRENT_STREAMS the peer last acknowledged (`nil`: none yet).
        var acknowledgedLimit: UInt32?
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

    mutating func answer(_ request: HTTP2Message, _ connection: inout HTTP2Writer) {
        // Requests behind the one that closed the connection, in the same read, are not seen.
        guard !connection.isAborted else { return }
        counts.requests += 1
        counts.bodyBytes += request.bodyLength
        let openStreams = connection.openStreams
        counts.peakStreams = max(counts.peakStreams, openStreams)
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
        observer?.requestRead(openStreams: openStreams, now: now)
        // Received when its read burst began: the time spent on the requests before it in the
        // burst is the sink's, and shows as lateness, not as a shorter injected latency.
        let received = connection.readStartedAt == 0 ? now : min(now, connection.readStartedAt)
        let streams = StreamsSeen(open: openStreams, acknowledgedLimit: connection.acknowledgedMaxConcurrentStreams)
        let decision = decide(request, fields, unanswered: unanswered, received: received, now: now, streams)
        observer?.decided(
            received: received,
            rejection: decision.rejection,
            accepted: decision.rejection == nil && !unanswered,
            tokenHash: decision.tokenHash,
            recorder: recorder,
            now: now
        )
        let due = unanswered ? received : scheduler.due(received: received, &random)
        let decided = SinkConnectionState.DecidedRequest(
            stream: request.stream,
            rejection: decision.rejection,
            digestHash: decision.digestHash,
            unanswered: unanswered,
            received: received,
            due: due,
            sentAt: decision.sentAt,
            unregisteredSince: unregisteredSince
        )
        // What the scenario held an answered one (a later one's `due` is always past `received`).
        if !unanswered && due > received { recorder.held(due - received) }
        switch lifecycle.reply(to: decided, now: now) {
        case .none:
            return turnEnded(now: now, &connection)
        case .now(let answer):
            respond(answer, now: now, &connection)
        case .later(var entry):
            writer.hold(into: &entry)
            scheduler.hold(entry)
        }
        if let action = lifecycle.requestHandled(total: counts.requests + handled, rejection: decision.rejection) {
            perform(action, now: now, &connection)
        }
        if counts.requests >= SinkCounts.flushInterval || captured.bytes.readableBytes >= CaptureBuffer.limit {
            flushCounts(now: now)
        }
        turnEnded(now: now, &connection)
    }

    /// Tells the sink's admission (`ConnectionAdmission`) that this connection is no longer idle,
    /// at its first request whose provider proved who it is (rule 4: its certificate or token;
    /// with auth off, its first request that reaches the rule): a peer that cannot stays idle
    /// however many requests it sends — refused for its authentication, a request line, a
    /// method — so its connections still make room for clients that can. An error the scenario
    /// answers a proven provider with does not keep it idle. Called at every authenticated
    /// request; tells the admission once.
    @inline(__always)
    mutating func providerAuthenticated() {
        guard !isActive else { return }
        isActive = true
        firstRequest?()
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
        _ streams: StreamsSeen
    ) -> Decision {
        request.headers.withUnsafeBytes { bytes in
            var decision = Decision()
            let echoedID = writer.takeID(
                fields,
                in: bytes,
                now: now,
                sentAt: &decision.sentAt,
                untimed: &counts.untimedIDs
            )
            let verdict = checks.verdict(
                fields,
                in: bytes,
                body: request.body,
                bodyLength: request.bodyLength,
                draining: state.isDraining
            )
            if verdict.authenticated { providerAuthenticated() }
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
                    streams,
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
                var notification = DeviceNotification(
                    token: decision.tokenHash,
                    fields,
                    in: bytes,
                    id: writer.apnsID,
                    wallOffset: wallOffset
                )
                // What a device that engages sends back names its token; its payload's actions.
                notification.tokenText = tokenBytes
                notification.body = request.body
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
                capture(request, token: tokenBytes, fields: fields, bytes: bytes, rejection: reason)
            }
            return decision
        }
    }

    /// Writes a notification that passed APNs's rules to `--capture`'s lines (its scenario
    /// verdict with it).
    private mutating func capture(
        _ request: HTTP2Message,
        token: UnsafeRawBufferPointer,
        fields: APNsRequestCheck.Fields,
        bytes: UnsafeRawBufferPointer,
        rejection: APNsReason?
    ) {
        let pushType = APNsRequestCheck.view(fields.pushType, bytes)
        let id = writer.apnsID
        let connection = record.id
        checks.topic(fields, in: bytes) { topic in
            captured.append(
                connection: connection,
                stream: request.stream,
                token: token,
                topic: topic,
                pushType: pushType,
                apnsID: id,
                rejection: rejection,
                payload: request.body
            )
        }
    }

    /// Writes an answer (its apns-id the one `writer` took last) and counts it; the stream limit
    /// follows its verdict (`SinkConnectionState.answered`).
    mutating func respond(_ answer: Answer, now: UInt64, _ connection: inout HTTP2Writer) {
        guard writer.write(answer, &connection) else { return }
        observer?.answerWritten()
        unwritten.append(due: answer.due, transit: answer.transit)
        if let rejection = answer.rejection {
            counts.reject(rejection)
        } else {
            counts.accepted += 1
            counts.digest.add(hash: answer.digestHash)
        }
        // Read only when the limit may change: a getter of the connection, called from here,
        // copies the whole connection first (the cost gate's sink stage saw 112 instructions).
        let accepted = answer.rejection == nil
        guard lifecycle.mayChangeStreams(accepted: accepted) else { return }
        let unacknowledged = connection.unacknowledgedSettings
        if let action = lifecycle.answered(accepted: accepted, unacknowledged: unacknowledged, now: now) {
            perform(action, now: now, &connection)
        }
    }
}
