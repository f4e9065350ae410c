import FanoutAPNs
import FanoutEndpoint
import FanoutFCM
import FanoutFiles
import FanoutHTTP2
import FanoutPayload
import FanoutPush
import FanoutRandom
import FanoutTokens
import Histogram
import NIOCore

/// One connection of the load engine: the NIO glue around `LoadConnectionState`, which decides
/// everything (slots, tickets, retries, liveness, draining). This carries its steps out on the
/// `HTTP2Connection` — encoding each notification's payload and headers into reused buffers,
/// opening its stream, resetting, pinging, saying GOAWAY — and records what the run measures
/// (latency, the generator's lag, answer read delays, timed answers, the counts).
///
/// ```
///        feed.take() ─┐      ┌─ retry (429, 5xx, reset, timeout) after backoff ─┐
///                     ▼      ▼                                                   │
///   next ──► send ──► in flight (slot = stream tag) ──► 200 ──► accepted          │
///                     │                        └─► 4xx ──► rejected (reason)     │
///                     ├─ REFUSED_STREAM / past GOAWAY ──► sent again at once      │
///                     └─ no answer in time ──► RST_STREAM CANCEL ─────────────────┘
///   connection ends ──► what is in flight or waiting goes back to the feed
///   work lost elsewhere waits ──► PING ──► ACK: the peer is alive since the loss ──► take it
/// ```
///
/// One notification's way through the sender, and the file each step is in:
///
/// ```
///   NotificationFeed.take (a token) ─► LoadConnectionState.next: .send ─► send(): payload,
///   :path, digest ─► HTTP2Writer.sendRequest (FanoutHTTP2) ─► … the answer ─► handle(.message)
///   ─► LoadConnectionState.release, settle (RetryPolicy: accept, reject, retry) ─► its Ledger
///   (LoadCounts, +Parts.swift) ─► flush ─► LoadStatistics.add ─► LoadEngine.Report at the end
/// ```
package struct LoadConnection: HTTP2ConnectionDelegate {
    private var state: LoadConnectionState
    private let configuration: LoadConfiguration
    private let statistics: LoadStatistics
    private let recorder: LoopRecorder
    /// Until the first request goes out, which the run records (`LoadStatistics.firstSendClock`).
    private var isFirstSend = true
    /// Called once, when the connection has ended: whether it made progress, and what kept it
    /// from any answer when something did (`EndpointFailure`).
    private let ended: @Sendable (_ madeProgress: Bool, _ failure: EndpointFailure?) -> Void
    /// Called at the first answer: the endpoint is up (slots waiting to reconnect need not wait
    /// out their backoff), unless that answer refused the credentials (given); and once more,
    /// without a refusal, at the first 200 after such a refusal.
    private let answered: @Sendable (_ refusal: EndpointFailure?) -> Void
    /// Whether the run has reached the endpoint (an accepted answer on any connection): read
    /// while this one's first answer withholds its sends (`LoadConnectionState.isWithheld`).
    private let endpointReached: @Sendable () -> Bool
    private var hasAnswered = false
    /// A GOAWAY that came before any answer: why the connection got nowhere.
    private var goAwayFirst: EndpointFailure?

    private var fields: APNsRequestFields
    /// The payload's bytes, encoded in place for each notification.
    private var body: PayloadBuffer
    private var random: SeededRandom
    /// `configuration.endpoint.headers`' apns-id policy, kept apart: reading it through the headers
    /// retained and released their strings on every request (4% of the sender's instructions
    /// per notification, scripts/cost.sh).
    private let generatesAPNsID: Bool
    private let timedAPNsIDs: Int
    /// FCM HTTP v1 sends (`APNsEndpoint.fcm`): answers carry FCM's error bodies.
    private let sendsFCM: Bool
    /// Whether a refused bearer is replaced by its source (`AuthorizationSource.renews`).
    private let renewsAuthorization: Bool
    /// Requests until the next one whose apns-id carries its send time (`timedAPNsIDs`).
    private var untilTimedID = 0
    /// Answers until the next whose read delay is recorded (the first is).
    private var untilReadDelaySample = 0
    /// Whether answers' ids are sampled (`LoadConfiguration.samplesAnswerIDs`), and the answers
    /// until the next one whose ids `statistics.answerIDs` may keep.
    private let samplesAnswerIDs: Bool
    private var untilAnswerIDSample = 0

    package init(
        configuration: LoadConfiguration,
        feed: NotificationFeed,
        statistics: LoadStatistics,
        recorder: LoopRecorder,
        tickets: ArrivalTickets?,
        slot: Int = 0,
        notBefore: UInt64 = 0,
        seed: UInt64,
        answered: @escaping @Sendable (_ refusal: EndpointFailure?) -> Void = { _ in },
        endpointReached: @escaping @Sendable () -> Bool = { true },
        ended: @escaping @Sendable (_ madeProgress: Bool, _ failure: EndpointFailure?) -> Void
    ) {
        self.configuration = configuration
        self.statistics = statistics
        self.recorder = recorder
        self.ended = ended
        self.answered = answered
        self.endpointReached = endpointReached
        random = SeededRandom(seed: seed)
        let authorization = configuration.endpoint.authorizations?.authorization()
        state = LoadConnectionState(
            feed: feed,
            tickets: tickets,
            slot: slot,
            shape: configuration.shape,
            retrySeed: SeededRandom.mix(seed),
            collectsGone: configuration.goneTokens != nil,
            goneLabel: configuration.goneTokens?.label,
            authorizations: configuration.endpoint.authorizations,
            authorizationGeneration: authorization?.generation ?? 0,
            notBefore: notBefore,
            now: NIODeadline.now().uptimeNanoseconds
        )
        let shared = configuration.endpoint.sharedFields(authorization: authorization?.value)
        if let fcm = configuration.endpoint.fcm {
            fields = APNsRequestFields(shared: shared, fixedPath: fcm.path)
            generatesAPNsID = false
            timedAPNsIDs = 0
        } else {
            fields = APNsRequestFields(
                shared: shared,
                generatesID: configuration.endpoint.headers.generatesAPNsID
                    || configuration.endpoint.headers.timedAPNsIDs > 0,
                broadcastApp: configuration.endpoint.broadcastApp
            )
            generatesAPNsID = configuration.endpoint.headers.generatesAPNsID
            timedAPNsIDs = configuration.endpoint.headers.timedAPNsIDs
        }
        sendsFCM = configuration.endpoint.fcm != nil
        renewsAuthorization = configuration.endpoint.authorizations?.renews ?? false
        samplesAnswerIDs = configuration.samplesAnswerIDs
        body = PayloadBuffer(byteCount: configuration.encoder.template.sizeLimit + 64)
    }

    // MARK: Events

    package mutating func connectionStarted(_ connection: inout HTTP2Writer) {
        let now = NIODeadline.now().uptimeNanoseconds
        state.started(now: now)
        turn(now: now, &connection)
    }

    package mutating func handle(_ event: HTTP2Event, connection: inout HTTP2Writer) {
        let now = NIODeadline.now().uptimeNanoseconds
        switch event {
        case .message(let response):
            guard let entry = state.release(tag: response.tag) else { break }
            // One answer in `readDelaySampling`: a histogram record on every answer was 2% of the
            // sender's instructions per notification (scripts/cost.sh).
            untilReadDelaySample &-= 1
            if untilReadDelaySample <= 0 {
                untilReadDelaySample = Self.readDelaySampling
                recorder.answerRead(startedAt: connection.readStartedAt, now: now)
            }
            if entry.timed { timeAnswer(response, entry, now: now) }
            if samplesAnswerIDs { sampleIDs(of: response) }
            if !hasAnswered {
                hasAnswered = true
                // A refused bearer that its source replaces is tried again (`result(of:)`), not
                // the endpoint's refusal of the run's credentials.
                let refusal = EndpointFailure.forbidden(
                    status: response.status,
                    reason: reason(of: response),
                    fcm: sendsFCM
                )
                let forbidden = refusal?.isBearerRefused == true && renewsAuthorization ? nil : refusal
                // Refused, it sends nothing more until the run decides (`turn`): on a busy machine
                // it could otherwise spend the whole run on refusals before another connection's
                // first answer said whether they were the endpoint's.
                if forbidden != nil { state.withholdCredentials() }
                answered(forbidden)
            } else if state.isWithheld, response.status == 200 {
                // Its credentials were taken after all (a later request of its first flight):
                // the endpoint is reached.
                state.releaseCredentials()
                answered(nil)
            }
            settle(entry, after: result(of: response, entry, now: now), now: now)
        case .streamReset(_, let tag, let code, _):
            guard let entry = state.release(tag: tag) else { break }
            settle(entry, after: code == .refusedStream ? .refused : .reset, now: now)
        case .pingAcknowledged(let opaque):
            state.pingAcknowledged(opaque)
        case .goAway(_, let code, let debugData) where !hasAnswered && goAwayFirst == nil:
            goAwayFirst = .goAway(code: code, debugData: debugData)
        default:
            break
        }
        turn(now: now, &connection)
    }

    package mutating func writabilityChanged(_ isWritable: Bool, connection: inout HTTP2Writer) {
        state.writabilityChanged(isWritable)
        if isWritable { turn(now: NIODeadline.now().uptimeNanoseconds, &connection) }
    }

    package var nextWakeUp: NIODeadline? { state.nextWakeUp.map { .uptimeNanoseconds($0) } }

    package mutating func wake(now: NIODeadline, connection: inout HTTP2Writer) {
        turn(now: now.uptimeNanoseconds, &connection)
    }

    package mutating func connectionEnded(_ connection: borrowing HTTP2Connection, error: (any Error)?) {
        let now = NIODeadline.now().uptimeNanoseconds
        let recorder = recorder
        let madeProgress = state.connectionEnded(now: now) { recorder.complete(startedAt: $0, now: now) }
        flush(now: now)
        if error != nil { statistics.connectionFailures.wrappingIncrement(ordering: .relaxed) }
        let refused =
            state.allowsNoStream
            ? EndpointFailure(.noStreamsAllowed, "SETTINGS_MAX_CONCURRENT_STREAMS 0 for the stream timeout")
            : goAwayFirst
        ended(madeProgress, EndpointFailure.ended(answered: hasAnswered, goAway: refused, error: error, connection))
    }

    // MARK: Carrying out the state's steps

    /// Does what the state says until it waits, then flushes the counts if they are due.
    private mutating func turn(now: UInt64, _ connection: inout HTTP2Writer) {
        // The run reached the endpoint elsewhere (it wakes every connection when it does).
        if state.isWithheld, endpointReached() { state.releaseCredentials() }
        if let authorization = state.renewedAfterRefusal(now: now) {
            fields.shared = configuration.endpoint.sharedFields(authorization: authorization)
        }
        var continuing = false
        steps: while true {
            defer { continuing = true }
            switch state.next(
                now: now,
                continuing: continuing,
                hasPeerSettings: connection.hasPeerSettings,
                availableStreams: connection.availableStreams
            ) {
            case .ping(let epoch):
                connection.ping(opaque: epoch)
            case .reset(let stream, let started):
                connection.resetStream(stream, code: .cancel)
                if let started { recorder.complete(startedAt: started, now: now) }
            case .send(let send):
                if let lag = send.lag { recorder.lagged(lag, now: now) }
                if let waited = send.waited {
                    recorder.waitedForStream(
                        waited.nanoseconds,
                        streams: waited.streams,
                        dueAt: send.notification.firstSentAt
                    )
                }
                guard self.send(send, now: now, &connection) else { break steps }
            case .goAway:
                connection.goAway()
                break steps
            case .wait:
                break steps
            }
        }
        if state.flushDue(now: now) { flush(now: now) }
    }

    /// Encodes and sends `send`'s notification on a stream tagged with its slot; `false` when
    /// the connection could not open the stream (it goes back to the state to be sent again).
    private mutating func send(
        _ send: consuming LoadConnectionState.Send,
        now: UInt64,
        _ connection: inout HTTP2Writer
    ) -> Bool {
        let record = send.notification.token
        let input = NotificationInput(
            token: record.token,
            sequence: record.sequence,
            fields: record.fields,
            tokenIsValidatedHex: true
        )
        let payload: UnsafeRawBufferPointer
        do {
            payload = try configuration.encoder.encode(input, into: &body)
        } catch {
            let cause: SkipCause = if case .tooLarge = error { .payloadTooLarge } else { .badFields }
            state.skipped(send, cause: cause)
            return true
        }
        fields.select(token: record.token)
        if send.notification.firstSentAt == 0 { send.notification.firstSentAt = now }
        var timed = false
        if timedAPNsIDs > 0 {
            fields.sendsID = untilTimedID == 0
            if fields.sendsID {
                untilTimedID = timedAPNsIDs
                fields.select(uuid: TimedAPNsID.bits(sentAt: now, random: random.next()))
                timed = true
            }
            untilTimedID -= 1
        } else if generatesAPNsID {
            if send.notification.id == (0, 0) { send.notification.id = (random.next(), random.next()) }
            fields.select(id: send.notification.id)
        }
        let digestHash = NotificationDigest.hash(token: record.token, payload: payload)
        let stream: UInt32
        do {
            stream = try connection.sendRequest(fields, bodyBytes: payload, tag: UInt64(send.tag))
        } catch {
            state.notSent(send)
            return false
        }
        state.sent(send, stream: stream, digestHash: digestHash, timed: timed, now: now)
        if isFirstSend {
            isFirstSend = false
            statistics.noteFirstSend(now)
        }
        return true
    }

    private mutating func settle(
        _ entry: LoadConnectionState.InFlight,
        after result: RetryPolicy.Result,
        now: UInt64
    ) {
        if let started = state.settle(entry, after: result, now: now) {
            recorder.complete(startedAt: started, now: now)
        }
    }

    /// Why the service refused `response`, in its words; `nil` for a 200 and for an answer
    /// without a known reason.
    private func reason(of response: HTTP2Message) -> PushReason? {
        guard response.status != 200 else { return nil }
        // Google's answers without an FcmError detail (a body too large, a data value not a
        // string) are classified by their status, as firebase-admin does.
        if sendsFCM {
            let code = FCMAnswerBody.errorCode(in: response.body) ?? FCMAnswerBody.status(in: response.body)?.errorCode
            return code.map(PushReason.fcm)
        }
        return APNsErrorBody.reason(in: response.body).map(PushReason.apns)
    }

    /// How the try ended, for the retry policy: an FCM 401 without a code refused the bearer
    /// (a source that renews it is asked for a new one), and a `Retry-After` is kept.
    private mutating func result(
        of response: HTTP2Message,
        _ entry: LoadConnectionState.InFlight,
        now: UInt64
    ) -> RetryPolicy.Result {
        guard response.status != 200 else { return .answered(status: 200, reason: nil) }
        let reason = reason(of: response)
        // A bearer nothing renews (`--fcm-bearer`) is refused for good: an answer without a
        // reason, final (RetryPolicy).
        if sendsFCM && response.status == 401 && reason == nil && renewsAuthorization {
            state.authorizationRefused(entry)
            return .unauthenticated
        }
        let retryAfter = response.status == 429 || response.status >= 500 ? Self.retryAfter(in: response) : 0
        // The project's quota binds every connection: none sends until it refills.
        if reason == .fcm(.quotaExceeded), retryAfter > 0, FCMAnswerBody.isProjectQuota(in: response.body) {
            state.feed.holdSends(until: now + retryAfter)
        }
        return .answered(status: response.status, reason: reason, retryAfter: retryAfter)
    }

    /// `Retry-After` in nanoseconds when it is delay-seconds (RFC 9110 §10.2.3), capped at an
    /// hour; 0 when absent or an HTTP date (which no push service sends).
    static func retryAfter(in response: HTTP2Message) -> UInt64 {
        retryAfter(value: response.headers.first("retry-after"))
    }

    /// A `Retry-After` field's value (`nil`: none) in nanoseconds, as `retryAfter(in:)` reads
    /// it: 1 to 10 ASCII digits, capped at an hour; anything else is 0.
    static func retryAfter(value text: UnsafeRawBufferPointer?) -> UInt64 {
        guard let text, !text.isEmpty, text.count <= 10 else { return 0 }
        var seconds: UInt64 = 0
        for byte in text {
            guard byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") else { return 0 }
            seconds = seconds * 10 + UInt64(byte - UInt8(ascii: "0"))
        }
        return min(seconds, 3600) * 1_000_000_000
    }

    /// Offers one answer in `AnswerIDSample.every` to the sample of the answers' ids.
    private mutating func sampleIDs(of response: HTTP2Message) {
        untilAnswerIDSample &-= 1
        guard untilAnswerIDSample <= 0 else { return }
        untilAnswerIDSample = AnswerIDSample.every
        if let uniqueID = response.headers.first(TimedAPNsID.answerHeader) {
            statistics.answerIDs.offer(uniqueID: uniqueID, apnsID: response.headers.first("apns-id"))
        }
    }

    /// A timed request's answer from a Fanout sink says when it was written and what the
    /// scenario held it (`TimedAPNsID`): the way back is the sender's, and the latency less the
    /// hold is the harness's whole share of this answer (first requests only: a retry's latency,
    /// or that of a request sent again after a refused stream, holds earlier requests too). That share splits, on one clock, where the sink wrote:
    ///
    /// ```
    ///   due ──► sent ──► sink reads ─ held ─► written ──► handled (now)
    ///   └ late ┘└─ the sink's (from the send) ─┘└ the way back ┘
    ///   └──────────────── own = now − due − held − wait ──────────┘
    ///   the sender's share = late − wait + the way back; the sink measures its own on the same answer
    /// ```
    ///
    /// `wait`: the part of `late` spent waiting for a stream the server had not allowed yet
    /// (`StreamWait`: APNs' one stream until a connection's first answer, or every stream busy),
    /// the endpoint's limit and not the harness's delay.
    private mutating func timeAnswer(_ response: HTTP2Message, _ entry: LoadConnectionState.InFlight, now: UInt64) {
        guard let value = response.headers.first(TimedAPNsID.answerHeader),
            let answer = TimedAPNsID.answer(in: value)
        else { return }
        let returnPath = now - min(now, answer.writtenAt)
        let notification = entry.notification
        let streamWait = UInt64(entry.streamWait) * 1000
        let firstTry =
            entry.isFirstRequest
            ? (
                own: now - min(now, notification.firstSentAt + streamWait + answer.held),
                senderShare: entry.sentAt - min(entry.sentAt, notification.firstSentAt + streamWait) + returnPath
            ) : nil
        recorder.timedAnswer(returnPath: returnPath, firstTry: firstTry, now: now)
    }

    /// The counts go to the run's statistics; a renewed provider token goes into the fields;
    /// tokens answered 410 go to `--gone-tokens`.
    private mutating func flush(now: UInt64) {
        let statistics = statistics
        statistics.notePacingWindow(state.largestPacingWindow)
        if let authorization = state.flush(now: now, counts: { statistics.add($0) }) {
            fields.shared = configuration.endpoint.sharedFields(authorization: authorization)
        }
        if state.ledger.gone.readableBytes > 0, let writer = configuration.goneTokens {
            writer.write(&state.ledger.gone)
        }
    }

    /// One answer in this many has its read delay recorded.
    static let readDelaySampling = 8
}
