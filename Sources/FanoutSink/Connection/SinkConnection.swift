import FanoutAPNs
import FanoutDevices
import FanoutFiles
import FanoutHTTP2
import FanoutListening
import FanoutMeasure
import FanoutNotation
import FanoutScenarioTerms
import NIOCore
import NIOSSL

/// One client connection to the sink, the glue between the HTTP/2 layer and the parts that
/// decide: `RequestChecks` (APNs's rules → a verdict), `ScenarioVerdict` and the device fleet
/// (what happens to a notification that passed them), `AnswerScheduler` (when each answer goes
/// out), `SinkConnectionState` (faults, idleness, the stream limit: events in, actions out) and,
/// with the sink as an instrument, `ProviderObserver`. It reads time only through
/// `SinkConfiguration.clock`, and counts everything.
///
/// ```
///   request ─► checks ─► scenario ─► fleet ─► scheduler ─┬─ due now ─► respond ─► state: streams
///                │ verdict     └── observer (card)       └─ later ─► held ─► wake(now) ─► respond
///   wake(now) ─► state.timeAction ─► GOAWAY · reset incomplete · SETTINGS_TIMEOUT
/// ```
package struct SinkConnection: HTTP2ConnectionDelegate {
    let configuration: SinkConfiguration
    let statistics: SinkStatistics
    let state: SinkState
    let clock: SinkClock
    /// The wall clock minus the uptime clock, in nanoseconds: turns `apns-expiration`'s UNIX
    /// seconds into the fleet's uptime clock, and the fleet's times into a 410's timestamp.
    let wallOffset: Int64
    var checks: RequestChecks
    var lifecycle: SinkConnectionState
    var scheduler: AnswerScheduler
    var observer: ProviderObserver?
    var counts = SinkCounts()
    /// Requests already added to the statistics, and when they last were (uptime ns).
    var handled = 0
    private var lastFlush: UInt64
    /// This connection's entry in the live statistics.
    let record: SinkConnectionRecord
    var random: SinkRandom
    /// The apns-id and the bytes of the answer being written.
    var writer: AnswerWriter
    var captured = CaptureBuffer()
    /// The sink's own delays on this connection's loop.
    let recorder: SinkLoopRecorder
    /// The answers queued since the connection's bytes last went to the socket: each answer's
    /// lateness is timed when it is really written (`outboundWritten`). Keeps its capacity: at
    /// most the answers of one read burst or one wake-up.
    let unwritten = UnwrittenAnswers(capacity: 256)
    /// Tells the sink's admission (`ConnectionAdmission`) that this connection is no longer
    /// idle, once `isActive` turns true (`providerAuthenticated()`).
    let firstRequest: (@Sendable () -> Void)?
    /// Whether the connection has sent a request whose provider proved who it is
    /// (`providerAuthenticated()`). A flag, not the optional closure: binding that would retain it every
    /// request.
    var isActive = false
    /// With the device fleet: when the request being answered found its token unregistered
    /// (uptime nanoseconds, 0: it did not), the time its 410's body gives.
    var unregisteredSince: UInt64 = 0

    /// The connection's token-auth state, answers held now, and when the next timed event is
    /// (for tests).
    var authenticationState: TokenAuthentication.ConnectionState { checks.authenticationState }
    var heldAnswers: Int { scheduler.held }
    var nextTimedEvent: NIODeadline? {
        let held = scheduler.earliest
        let timed = lifecycle.nextDeadline
        guard let earliest = held.map({ min($0, timed ?? $0) }) ?? timed else { return nil }
        return .uptimeNanoseconds(earliest)
    }

    package init(
        configuration: SinkConfiguration,
        statistics: SinkStatistics,
        state: SinkState,
        seed: UInt64,
        peer: String = "in-memory",
        recorder: SinkLoopRecorder = SinkLoopRecorder(),
        firstRequest: (@Sendable () -> Void)? = nil
    ) {
        self.configuration = configuration
        self.firstRequest = firstRequest
        self.statistics = statistics
        self.state = state
        self.recorder = recorder
        clock = configuration.clock
        let openedAt = clock.uptime()
        lastFlush = openedAt
        wallOffset = clock.wallOffset
        checks = RequestChecks(configuration)
        let settings = SinkConnectionState.Settings(configuration)
        lifecycle = SinkConnectionState(settings, openedAt: openedAt)
        scheduler = AnswerScheduler(
            scenario: configuration.scenario,
            coalescing: configuration.coalescing,
            startedAt: state.startedAt
        )
        writer = AnswerWriter(
            seed: seed,
            clock: clock,
            wallOffset: wallOffset,
            wireOneWay: settings.wireOneWay,
            everyUniqueID: state.fleet != nil
        )
        random = SinkRandom(seed: configuration.scenario.seed ^ seed)
        record = statistics.connectionOpened(peer: peer)
        observer = configuration.instrument.map { ProviderObserver($0, record: record, openedAt: openedAt) }
    }

    package var nextWakeUp: NIODeadline? {
        guard !counts.isEmpty || captured.lines > 0 else { return nextTimedEvent }
        var flush = lastFlush + UInt64(SinkCounts.flushDelay)
        if observer?.streamUse.level == 0 && scheduler.held == 0 {
            flush = lastFlush + SinkCounts.idleFlushDelay
        }
        return .uptimeNanoseconds(nextTimedEvent.map { min($0.uptimeNanoseconds, flush) } ?? flush)
    }

    package mutating func wake(now deadline: NIODeadline, connection: inout HTTP2Writer) {
        let now = deadline.uptimeNanoseconds
        if now >= lastFlush + UInt64(SinkCounts.flushDelay) { flushCounts(now: now) }
        if let due = lifecycle.nextDeadline, now >= due {
            // Read once: the connection's getters copy it whole (a held answer's every wake-up
            // would pay for them).
            let load = SinkConnectionState.Load(
                openStreams: connection.openStreams,
                heldAnswers: scheduler.held,
                unacknowledgedSettings: connection.unacknowledgedSettings
            )
            while let action = lifecycle.timeAction(now: now, load) { perform(action, now: now, &connection) }
        }
        while let entry = scheduler.popDue(now: now) {
            writer.restore(from: entry)
            let transit = UInt64(entry.transit) * 1000
            // A timed request's id holds its send time: it was received at sent + transit and held
            // from then until due. Only a timed request learns it (`AnswerWriter`); an untimed one
            // has no send time to hold from.
            let held =
                transit == 0 ? 0 : entry.due - min(entry.due, (TimedAPNsID.sendTime(in: writer.apnsID) ?? 0) + transit)
            let answer = Answer(
                stream: entry.stream,
                rejection: entry.reason < 0 ? nil : APNsReason.all[Int(entry.reason)],
                digestHash: entry.digestHash,
                due: entry.due,
                transit: transit,
                held: held
            )
            respond(answer, now: now, &connection)
        }
        turnEnded(now: now, &connection)
    }

    /// Does what the connection's state machine asked.
    mutating func perform(_ action: SinkConnectionState.Action, now: UInt64, _ connection: inout HTTP2Writer) {
        switch action {
        case .abort:
            connection.abort()
        case .goAway(let reason):
            goAway(&connection, reason: reason)
        case .goAwaySettingsTimeout:
            guard connection.sentGoAway == nil else { return }
            connection.goAway(code: .settingsTimeout, debugData: [])
            state.limits.note(.settingsTimeout, peer: record.peer, "no SETTINGS acknowledged for 10 s")
        case .setMaxConcurrentStreams(let value):
            connection.setMaxConcurrentStreams(value)
        case .resetIncompleteRequests(let cutoff):
            let (reset, oldest) = connection.resetIncompleteRequests(openedBy: cutoff)
            lifecycle.incompleteRequestsReset(oldestLeft: oldest, now: now)
            guard reset > 0, let timeout = configuration.requestTimeout else { return }
            state.limits.note(
                .requestTimeout,
                peer: record.peer,
                "reset \(reset) stream\(reset == 1 ? "" : "s") whose request did not arrive whole within \(DurationNotation.format(timeout))"
            )
        }
    }

    package mutating func outboundWritten(at now: UInt64) {
        unwritten.drain { due, transit in recorder.written(due: due, transit: transit, at: now) }
    }

    package mutating func connectionStarted(_ connection: inout HTTP2Writer) {
        if state.isDraining { shutdown(&connection) }
    }

    package mutating func handle(_ event: HTTP2Event, connection: inout HTTP2Writer) {
        switch event {
        case .message(let request):
            answer(request, &connection)
        case .streamReset:
            counts.resets += 1
            scheduler.streamReset { connection.isOpen($0) }
        case .pingAcknowledged(let opaque):
            observer?.pingAcknowledged(opaque: opaque)
        case .connectionError(let error):
            connectionFailed(error)
        default: break
        }
    }

    /// The connection broke a rule or a flood limit and is ending with GOAWAY: logged with the
    /// peer (a flood's GOAWAY is the one trace it leaves) and, for ENHANCE_YOUR_CALM, counted.
    @inline(never)
    private func connectionFailed(_ error: HTTP2FrameError) {
        if error.code == .enhanceYourCalm { statistics.connectionCalmed() }
        state.limits.note(.ended, peer: record.peer, "GOAWAY \(error.code): \(error.reason)")
    }

    package mutating func tlsEstablished(peerCertificate: NIOSSLCertificate?, connection: inout HTTP2Writer) {
        guard configuration.certificateAuthentication, let peerCertificate else { return }
        checks.certificateVerified(topics: SinkCertificates.topics(of: peerCertificate).map { Array($0.utf8) })
        let now = clock.uptime()
        // The SETTINGS goes out right behind the first, in the same flight.
        if let action = lifecycle.certificateVerified(now: now) { perform(action, now: now, &connection) }
    }

    package mutating func connectionEnded(_ connection: borrowing HTTP2Connection, error: (any Error)?) {
        let now = clock.uptime()
        observer?.ended(
            connection,
            error: error,
            byProvider: connection.sentGoAway == nil && !connection.isAborted && !state.isDraining,
            lifetime: now - lifecycle.openedAt,
            requests: handled + counts.requests,
            now: now
        )
        flushCounts(now: now)
        statistics.connectionClosed(record)
    }

    /// After a turn that read requests or wrote answers, with the sink as an instrument: the
    /// observer's look, and, once nothing is in flight, the counts handed over (at most every
    /// `SinkCounts.idleFlushDelay`: answered at once, a connection is idle after every
    /// request), so that `--expect` sees the last notifications without waiting a second.
    mutating func turnEnded(now: UInt64, _ connection: inout HTTP2Writer) {
        guard observer != nil else { return }
        observer?.turnEnded(now: now, &connection)
        if connection.openStreams == 0 && scheduler.held == 0 && !counts.isEmpty
            && now >= lastFlush + SinkCounts.idleFlushDelay
        {
            flushCounts(now: now)
        }
    }

    /// Adds the connection's counts (and captured lines) to the shared statistics.
    mutating func flushCounts(now: UInt64) {
        handled += counts.requests
        observer?.noteOnRecord()
        statistics.add(counts, to: record, at: now)
        counts.clear()
        if let capture = configuration.capture { captured.flush(to: capture) }
        lastFlush = now
    }

    /// Closes a connection evicted to make room for a new one (`ConnectionAdmission`): GOAWAY
    /// with APNs' `{"reason":"IdleTimeout"}` (it sent no authenticated request, as an idle connection) and the
    /// close right behind it, streams whose requests never arrived whole and all.
    mutating func evict(_ connection: inout HTTP2Writer) {
        goAway(&connection, reason: .idleTimeout)
        if connection.openStreams > 0 { connection.abort() }
    }

    /// Sends GOAWAY with APNs' `{"reason":"Shutdown"}`: open streams finish, no new ones start.
    mutating func shutdown(_ connection: inout HTTP2Writer) {
        goAway(&connection, reason: .shutdown)
    }

    private func goAway(_ connection: inout HTTP2Writer, reason: APNsReason) {
        guard connection.sentGoAway == nil else { return }
        // APNs' GOAWAY carries the same JSON as its error responses.
        var body = ByteBuffer()
        APNsErrorBody.write(reason, into: &body)
        connection.goAway(code: .noError, debugData: Array(body.readableBytesView))
    }
}

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
        let completedExpected = observer?.decided(
            received: received,
            rejection: decision.rejection,
            accepted: decision.rejection == nil && !unanswered,
            tokenHash: decision.tokenHash,
            recorder: recorder,
            now: now
        )
        if completedExpected == true { statistics.expectedTokensCompleted() }
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
