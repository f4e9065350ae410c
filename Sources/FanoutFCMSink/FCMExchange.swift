import FanoutAPNs
import FanoutDevices
import FanoutFCM
import FanoutFCMAuth
import FanoutRandom
import FanoutScenarioTerms
import Foundation
import NIOCore

/// One request as either transport read it: views valid while it is answered.
struct FCMRequest {
    var method: UnsafeRawBufferPointer
    /// The path with any query.
    var path: UnsafeRawBufferPointer
    /// `authorization`'s value, when given.
    var authorization: UnsafeRawBufferPointer?
    var body: UnsafeRawBufferPointer
    /// The body's whole length, even past what was kept.
    var bodyLength: Int
}

/// An answer's head: its body is in `FCMExchange.body`.
struct FCMAnswer: Equatable {
    var status: Int
    /// Seconds for `retry-after` (429).
    var retryAfter: Int?

    /// How long the answer is held before it goes out (nanoseconds): the sink's latency for a
    /// send, 0 for a token request or without one.
    var hold: UInt64 = 0

    /// A 401: `www-authenticate` goes with it.
    var unauthenticated: Bool { status == 401 }
}

/// One connection's side of the FCM sink: a request in, an answer out, whichever transport
/// carried it (`FCMHTTP2Connection`, `FCMHTTP1Handler`). The order of the checks:
///
/// ```
///   route ──► /token ──► the jwt-bearer grant (FCMTokenGrant) ──► 200 access token · 400
///     │ /v1/projects/P/messages:send, POST (else 404)
///     ▼
///   bearer (401) ─► project (403) ─► quota (429) ─► body (FCMSendCheck, 400) ─► token's fate ─► device's rate ─► 200
///                                      └ counts: 200, 400, 403, 404 ─┘          (404, 403)       (429; held)
/// ```
///
/// A success's body is written in place (`{"name":"projects/P/messages/0:N%SUFFIX"}`); the
/// refusals that do not change are written once and copied. Nothing is allocated for a send
/// with the bearer of the one before it.
///
/// With the sink as the provider's instrument (`watch`), each refusal and success also goes on
/// the card with its token and message (`FCMExchange+Card`), and each send's arrival to the
/// connection's watch; without it those steps are one `nil` check each.
struct FCMExchange {
    let service: FCMService
    let transport: FCMSinkStatistics.Transport
    let peer: String
    /// The answer's body, reused.
    var body: ByteBuffer
    /// The last bearer accepted, and when it expires (uptime ns).
    private var bearer: [UInt8] = []
    private var bearerExpiry: UInt64 = 0
    /// Message ids: a sequence and the connection's suffix.
    private var sequence: UInt64 = 0
    private let suffix: UInt64
    private let prepared: FCMPreparedBodies
    /// The project's 429 bodies by their Retry-After, each written once (at most a window's
    /// seconds of them): past the quota every send is refused, and none allocates.
    private var quotaBodies: [Int: ByteBuffer] = [:]
    /// With the sink as the provider's instrument: this connection's part in it.
    let watch: FCMConnectionWatch?
    /// Draws which sends fail (`internalShare`, `unavailableShare`).
    private var faults: SeededRandom
    /// The tokens listed unregistered (`FCMSinkConfiguration.unregisteredTokens`), read once:
    /// a configuration's set retained and released on every send otherwise.
    private let listedUnregistered: Set<UInt64>
    /// Told once, at the connection's first proven request (a send whose bearer is good, or
    /// a token granted): the sink's admission no longer takes it for an idle connection.
    var proved: (@Sendable () -> Void)?
    private var hasProved = false
    /// The sink's latency (`FCMSinkConfiguration.latency`), and its draws.
    private let latency: LatencyDistribution?
    private var latencyDraws: SinkRandom

    init(
        service: FCMService,
        transport: FCMSinkStatistics.Transport,
        peer: String,
        seed: UInt64,
        now: UInt64 = NIODeadline.now().uptimeNanoseconds
    ) {
        self.service = service
        self.transport = transport
        self.peer = peer
        watch = service.instrument.map {
            FCMConnectionWatch(
                instrument: $0,
                rows: service.connectionRows,
                tokens: service.tokens,
                peer: peer,
                transport: transport,
                now: now
            )
        }
        suffix = seed
        faults = SeededRandom(seed: seed)
        latency = service.configuration.latency
        listedUnregistered = service.configuration.unregisteredTokens
        latencyDraws = SinkRandom(seed: seed ^ 0x1A7E_0C1E)
        body = ByteBufferAllocator().buffer(capacity: 512)
        bearer.reserveCapacity(256)
        prepared = FCMPreparedBodies.shared
    }

    static let sendPrefix = Array("/v1/projects/".utf8)
    static let sendSuffix = Array("/messages:send".utf8)
    static let tokenPath = Array("/token".utf8)

    /// Answers `request` at `now` (uptime nanoseconds) with `openStreams` in flight on the
    /// connection; the body is left in `body`. With the instrument, a send's arrival and
    /// outcome go to the connection's watch.
    mutating func answer(_ request: FCMRequest, now: UInt64, openStreams: Int = 1) -> FCMAnswer {
        service.statistics.busy(until: now)
        var answer = decide(request, now: now)
        service.statistics.answered(status: answer.status)
        guard watch != nil || latency != nil, !isTokenRequest(request) else { return answer }
        watch?.answered(received: now, accepted: answer.status == 200, open: openStreams, now: now)
        if let latency {
            answer.hold = latency.sample(&latencyDraws)
            service.statistics.busy(until: now &+ answer.hold)
        }
        return answer
    }

    /// The connection closed at `now`: with the instrument, its watch ends it.
    func closed(now: UInt64) {
        watch?.closed(now: now, bearer: bearer)
    }

    private func isTokenRequest(_ request: FCMRequest) -> Bool {
        Self.withoutQuery(request.path).elementsEqual(Self.tokenPath)
    }

    private mutating func decide(_ request: FCMRequest, now: UInt64) -> FCMAnswer {
        body.clear()
        let path = Self.withoutQuery(request.path)
        let isPost = request.method.elementsEqual("POST".utf8)
        if path.elementsEqual(Self.tokenPath) {
            // A token request not POSTed: refused at the token endpoint, no send.
            guard isPost else {
                let method = String(decoding: request.method, as: UTF8.self)
                return refuse(.tokenRefused, 404, prepared.notFound, "\(method) /token: the token endpoint takes POST")
            }
            let answer = grant(request, now: now)
            if answer.status == 200 { provedItself() }
            return answer
        }
        guard isPost, path.starts(with: Self.sendPrefix), path.count > Self.sendPrefix.count + Self.sendSuffix.count,
            UnsafeRawBufferPointer(rebasing: path[(path.count - Self.sendSuffix.count)...]).elementsEqual(
                Self.sendSuffix
            )
        else { return notFound(request, now: now) }
        let project = UnsafeRawBufferPointer(
            rebasing: path[(path.startIndex + Self.sendPrefix.count)..<(path.count - Self.sendSuffix.count)]
        )
        // Google's pattern for the parent is `^projects/[^/]+$`: a slash in it is no method.
        guard !project.contains(UInt8(ascii: "/")) else { return notFound(request, now: now) }
        if let refusal = authenticate(request.authorization, now: now) { return refusal }
        provedItself()
        guard project.elementsEqual(service.project) else {
            let named = String(decoding: project, as: UTF8.self)
            service.note(
                .wrongProject,
                over: transport,
                peer: peer,
                "a send to project \(named); the sink serves \(service.configuration.project)"
            )
            FCMError.wrongProject(named).write(into: &body)
            if let watch {
                watch.card.fcmClientError(token: nil, connection: watch.id, now: now) {
                    "403 PERMISSION_DENIED: project \(named)"
                }
            }
            return FCMAnswer(status: 403)
        }
        let messageHash =
            watch == nil
            ? 0 : NotificationDigest.hash(token: UnsafeRawBufferPointer(start: nil, count: 0), payload: request.body)
        if let failure = fault(request.body, messageHash, now: now) { return failure }
        if let quota = service.quota, let refusal = quota.admit(now: now) {
            let retryAfter = refusal.retryAfter
            if let watch { cardQuotaRefusal(request.body, messageHash, refusal, watch, now: now) }
            service.note(
                .quotaExceeded,
                over: transport,
                peer: peer,
                "\(quota.quota.messages) messages a window spent; refilled in \(retryAfter) s"
            )
            if quotaBodies[retryAfter] == nil {
                var written = ByteBuffer()
                FCMError.quotaExceeded(.project(service.configuration.project), retryAfter: retryAfter).write(
                    into: &written
                )
                quotaBodies[retryAfter] = written
            }
            body.writeImmutableBuffer(quotaBodies[retryAfter]!)
            return FCMAnswer(status: 429, retryAfter: retryAfter)
        }
        guard request.bodyLength == request.body.count else {
            if let watch { cardInvalid(messageHash, "a body of \(request.bodyLength) bytes", watch, now: now) }
            return refuse(
                .invalidArgument,
                400,
                prepared.tooLarge,
                "a body of \(request.bodyLength) bytes, over the \(FCMHTTP2Connection.maxBodySize) the sink reads"
            )
        }
        let send: FCMSend
        switch FCMSendCheck.check(request.body) {
        case .failure(let error):
            if let watch { cardInvalid(messageHash, error.description, watch, now: now) }
            service.note(.invalidArgument, over: transport, peer: peer, error.description)
            error.write(into: &body)
            return FCMAnswer(status: error.httpStatus)
        case .success(let checked):
            send = checked
        }
        // A token target's hash, worked out once: its fate, its device's rates and fleet, the card.
        let token = send.targetKind == .token ? UnsafeRawBufferPointer(rebasing: request.body[send.target]) : nil
        let tokenHash = token.map(FCMTokenFate.hash) ?? 0
        if let watch, let token {
            watch.card.fcmArrived(
                token: token,
                tokenHash: tokenHash,
                messageHash: messageHash,
                connection: watch.id,
                now: now
            )
        }
        if let token {
            switch FCMTokenFate.of(
                hash: tokenHash,
                unregistered: service.configuration.unregisteredShare,
                otherSender: service.configuration.otherSenderShare,
                listed: listedUnregistered
            ) {
            case .registered: break
            case .unregistered:
                return refuseToken(token, messageHash, .unregistered, now: now, "is held unregistered")
            case .otherSender:
                return refuseToken(token, messageHash, .senderIDMismatch, now: now, "is held as another sender's")
            }
        }
        // An app the fleet found gone: before the device's rates, which its sends no longer
        // reach, and for a validate_only send too, as a token held unregistered is.
        if let token, let fleet = service.fleet, let since = fleet.unregisteredSince(tokenHash, now: now) {
            return refuseToken(
                token,
                messageHash,
                .unregistered,
                now: now,
                "is unregistered: the app was found uninstalled "
                    + String(format: "%.1f s ago", Double(now - since) / 1e9)
            )
        }
        var outcome = send.validateOnly ? FCMSinkStatistics.Outcome.validated : .delivered
        if let token, !send.validateOnly, let devices = service.devices {
            // A notification message is always collapsible (docs/fcm.md, "Devices behind the sink").
            switch devices.admit(tokenHash, collapsible: send.collapseKey != nil || send.hasNotification, now: now) {
            case .delivered: break
            case .held: outcome = .held
            case .refused(let retryAfter):
                // A 429 does not count against the project.
                service.quota?.release(now: now)
                watch?.card.fcmRefused(
                    tokenHash: tokenHash,
                    messageHash: messageHash,
                    .quotaExceeded,
                    retryAfter: retryAfter,
                    now: now
                )
                // Its body names the token: written for each (a device's refusals are rare next
                // to the project's; those are written once).
                service.note(
                    .quotaExceeded,
                    over: transport,
                    peer: peer,
                    "token \(Self.start(of: token))… past its device's rate; \(retryAfter) s to go"
                )
                FCMError.quotaExceeded(.device(String(decoding: token, as: UTF8.self)), retryAfter: retryAfter).write(
                    into: &body
                )
                return FCMAnswer(status: 429, retryAfter: retryAfter)
            }
        }
        if let token, !send.validateOnly, let fleet = service.fleet {
            // Its unregistered answer was asked above, at this same time: it takes the message.
            var notification = Self.deviceNotification(send, tokenHash: tokenHash, body: request.body, now: now)
            // What a device that engages sends back names its token; its message's image.
            notification.tokenText = token
            notification.body = request.body
            _ = fleet.accept(notification, now: now)
        }
        service.note(outcome, over: transport, peer: peer, nil)
        if let token {
            service.statistics.digest(token: token, body: request.body)
            // `--expect-tokens`: the acceptance that completes the set wakes the job watching.
            if outcome.isAccepted, let expected = service.instrument?.expected, expected.accepted(hash: tokenHash) {
                service.statistics.changes.signal()
            }
            if let watch, !send.validateOnly {
                watch.card.fcmDelivered(token: token, messageHash: messageHash, connection: watch.id, now: now)
            }
        }
        writeName()
        return FCMAnswer(status: 200)
    }

    /// A send the sink fails (500 INTERNAL) or turns away (503 UNAVAILABLE), by its shares;
    /// `nil` for most.
    private mutating func fault(_ body: UnsafeRawBufferPointer, _ messageHash: UInt64, now: UInt64) -> FCMAnswer? {
        // Read field by field: a copy of the configuration would retain its strings on every send.
        let internalShare = service.configuration.internalShare
        let unavailableShare = service.configuration.unavailableShare
        guard internalShare > 0 || unavailableShare > 0 else { return nil }
        let draw = faults.unit()
        if draw < internalShare {
            if let watch { cardServiceRefusal(body, messageHash, .internal, retryAfter: 0, watch, now: now) }
            return refuse(.internalError, 500, prepared.internalError, "one of the --fcm-internal share")
        }
        guard draw < internalShare + unavailableShare else { return nil }
        let retryAfter = service.configuration.unavailableRetryAfter
        if let watch { cardServiceRefusal(body, messageHash, .unavailable, retryAfter: retryAfter, watch, now: now) }
        service.note(.unavailable, over: transport, peer: peer, "one of the --fcm-unavailable share")
        FCMError.unavailable(retryAfter: retryAfter).write(into: &self.body)
        return FCMAnswer(status: 503, retryAfter: retryAfter)
    }

    /// `{"name":"projects/P/messages/0:SEQUENCE%SUFFIX"}`, the shape of FCM's ids.
    private mutating func writeName() {
        sequence += 1
        body.writeStaticString(#"{"name":"projects/"#)
        body.writeBytes(service.project)
        body.writeStaticString("/messages/0:")
        Self.writeDecimal(sequence, into: &body)
        body.writeStaticString("%")
        Self.writeHex(suffix, into: &body)
        body.writeStaticString(#""}"#)
    }

    /// The connection's first proven request: told once.
    private mutating func provedItself() {
        guard !hasProved else { return }
        hasProved = true
        proved?()
    }

    /// `nil` when the request's bearer is good; else the 401.
    private mutating func authenticate(_ authorization: UnsafeRawBufferPointer?, now: UInt64) -> FCMAnswer? {
        guard let authorization, authorization.count > 7,
            authorization.prefix(7).elementsEqual("bearer ".utf8, by: { $0 | 0x20 == $1 | 0x20 })
        else {
            if let watch { cardBearer(nil, "no Authorization: Bearer header", watch, now: now) }
            return refuse(.unauthenticated, 401, prepared.missingCredential, "no Authorization: Bearer header")
        }
        let token = UnsafeRawBufferPointer(rebasing: authorization[(authorization.startIndex + 7)...])
        guard service.configuration.authentication == .serviceAccount else {
            // Any bearer is taken; with the instrument its use is still told, for the tokens
            // the endpoint handed out (`access-token`).
            if let watch {
                if token.elementsEqual(bearer) {
                    watch.bearerUsed(at: now)
                } else {
                    watch.bearerReplaced(bearer, at: now)
                    bearer.removeAll(keepingCapacity: true)
                    bearer.append(contentsOf: token)
                }
            }
            return nil
        }
        if now < bearerExpiry && token.elementsEqual(bearer) {
            watch?.bearerUsed(at: now)
            return nil
        }
        let issued = service.tokens.expiry(of: token)
        guard let expiry = issued, now < expiry else {
            if let watch {
                let why = issued == nil ? "a bearer the token endpoint did not issue" : "an expired access token"
                cardBearer(token, why, watch, now: now)
            }
            return refuse(
                .unauthenticated,
                401,
                prepared.invalidCredential,
                issued == nil ? "a bearer the token endpoint did not issue" : "an expired access token"
            )
        }
        watch?.bearerReplaced(bearer, at: now)
        bearer.removeAll(keepingCapacity: true)
        bearer.append(contentsOf: token)
        bearerExpiry = expiry
        return nil
    }

    /// The token endpoint.
    private mutating func grant(_ request: FCMRequest, now: UInt64) -> FCMAnswer {
        guard let account = service.account else {
            // With --no-auth any bearer is taken; still hand out one, for SDKs that ask.
            let token = service.tokens.issue(lifetime: lifetime, now: now, connection: watch?.id ?? 0)
            service.note(.tokenIssued, over: transport, peer: peer, nil)
            body.writeString(FCMTokenGrant.tokenBody(token, expiresIn: service.configuration.accessTokenLifetime))
            return FCMAnswer(status: 200)
        }
        let form = String(decoding: request.body, as: UTF8.self)
        let wall = Int(Date().timeIntervalSince1970)
        switch FCMTokenGrant.check(form: form, account: account, tokenURI: service.tokenURI, now: wall) {
        case .failure(let refusal):
            service.note(.tokenRefused, over: transport, peer: peer, refusal.description)
            body.writeString(refusal.body)
            return FCMAnswer(status: refusal.status)
        case .success:
            let token = service.tokens.issue(lifetime: lifetime, now: now, connection: watch?.id ?? 0)
            service.note(.tokenIssued, over: transport, peer: peer, nil)
            body.writeString(FCMTokenGrant.tokenBody(token, expiresIn: service.configuration.accessTokenLifetime))
            return FCMAnswer(status: 200)
        }
    }

    private var lifetime: UInt64 { UInt64(service.configuration.accessTokenLifetime) * 1_000_000_000 }

    private mutating func notFound(_ request: FCMRequest, now: UInt64) -> FCMAnswer {
        if let watch {
            let method = String(decoding: request.method, as: UTF8.self)
            let path = String(decoding: request.path.prefix(120), as: UTF8.self)
            watch.card.fcmClientError(token: nil, connection: watch.id, now: now) {
                "404 NOT_FOUND: \(method) \(path)"
            }
        }
        return refuse(
            .notFound,
            404,
            prepared.notFound,
            "\(String(decoding: request.method, as: UTF8.self)) \(String(decoding: request.path.prefix(120), as: UTF8.self)): no such method"
        )
    }

    /// What the device fleet is told of a message FCM took for `token` (`FCMSinkConfiguration
    /// .devices`):
    ///
    /// ```
    ///   android.priority (else FCM's default: high for a notification message, normal for data)
    ///       high ──► 10: delivered at once, Doze or not
    ///       normal ► 5: a dozing device takes it at its next maintenance window
    ///   android.ttl: 0s ──► delivered now or discarded; Ns ──► kept N s; absent ──► four weeks
    ///   android.collapse_key ──► a newer one with the key replaces the one kept; without one,
    ///       each message is kept
    ///   a notification message: always collapsible, under the app's key whatever collapse_key
    ///       says (Firebase: "Notification messages are always collapsible and will ignore the
    ///       collapse_key parameter"); an alert, stale on the card when delivered late
    /// ```
    static func deviceNotification(
        _ send: FCMSend,
        tokenHash: UInt64,
        body: UnsafeRawBufferPointer,
        now: UInt64
    ) -> DeviceNotification {
        let expiration: DeviceNotification.Expiration =
            switch send.ttlSeconds {
            case 0?: .immediately
            case let seconds?: .at(now &+ UInt64(seconds) &* 1_000_000_000)
            case nil: .at(now &+ FCMSinkConfiguration.defaultTTL)
            }
        return DeviceNotification(
            token: tokenHash,
            priority: send.effectivePriority == .high ? 10 : 5,
            expiration: expiration,
            collapse: send.hasNotification
                ? Self.notificationCollapseKey
                : send.collapseKey.map {
                    // 0 is "none": a key whose hash is 0 takes 1.
                    max(1, UInt32(truncatingIfNeeded: FCMTokenFate.hash(UnsafeRawBufferPointer(rebasing: body[$0]))))
                } ?? 0,
            isAlert: send.hasNotification
        )
    }

    /// The collapse key notification messages share: the app's package name, by default FCM's
    /// key, for which the sink needs no name (any number but 0, "none").
    static let notificationCollapseKey: UInt32 = 0xA11C_0DE5

    /// A refusal of the token itself (404 UNREGISTERED, 403 SENDER_ID_MISMATCH): on the card with
    /// the instrument, then counted and answered (`refuse`); `why` follows the token's start in
    /// the log, worded only for a line that is written.
    private mutating func refuseToken(
        _ token: UnsafeRawBufferPointer,
        _ messageHash: UInt64,
        _ code: FCMErrorCode,
        now: UInt64,
        _ why: @autoclosure () -> String
    ) -> FCMAnswer {
        if let watch { cardRefusedToken(token, messageHash, code, watch, now: now) }
        let (outcome, status, body) =
            code == .unregistered
            ? (FCMSinkStatistics.Outcome.unregistered, 404, prepared.unregistered)
            : (.senderIDMismatch, 403, prepared.senderIDMismatch)
        return refuse(outcome, status, body, "token \(Self.start(of: token))… \(why())")
    }

    /// Counts a refusal and answers it with a body written once (`FCMPreparedBodies`); its
    /// reason is worded only for a log line that is written (`FCMService.note`).
    private mutating func refuse(
        _ outcome: FCMSinkStatistics.Outcome,
        _ status: Int,
        _ prepared: ByteBuffer,
        _ reason: @autoclosure () -> String
    ) -> FCMAnswer {
        service.note(outcome, over: transport, peer: peer, reason())
        body.writeImmutableBuffer(prepared)
        return FCMAnswer(status: status)
    }

    /// A token's first 24 bytes, for the log.
    private static func start(of token: UnsafeRawBufferPointer) -> String {
        String(decoding: token.prefix(24), as: UTF8.self)
    }

    static func withoutQuery(_ path: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer {
        guard let mark = path.firstIndex(of: UInt8(ascii: "?")) else { return path }
        return UnsafeRawBufferPointer(rebasing: path[..<mark])
    }

    static func writeDecimal(_ value: UInt64, into buffer: inout ByteBuffer) {
        // UInt64.max has 20 digits: they are made right to left in a scratch of 24.
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)
        var count = 0
        var rest = value
        withUnsafeMutableBytes(of: &digits) { out in
            repeat {
                out[23 - count] = UInt8(ascii: "0") + UInt8(rest % 10)
                rest /= 10
                count += 1
            } while rest > 0
            buffer.writeBytes(UnsafeRawBufferPointer(rebasing: out[(24 - count)...]))
        }
    }

    static func writeHex(_ value: UInt64, into buffer: inout ByteBuffer) {
        let hex: StaticString = "0123456789abcdef"
        for shift in stride(from: 60, through: 0, by: -4) {
            buffer.writeInteger(hex.utf8Start[Int((value >> UInt64(shift)) & 0xF)])
        }
    }
}

/// The refusals that never change, written once.
struct FCMPreparedBodies: Sendable {
    let missingCredential: ByteBuffer
    let invalidCredential: ByteBuffer
    let unregistered: ByteBuffer
    let senderIDMismatch: ByteBuffer
    let notFound: ByteBuffer
    let tooLarge: ByteBuffer
    let internalError: ByteBuffer

    static let shared = FCMPreparedBodies()

    private init() {
        func written(_ error: FCMError) -> ByteBuffer {
            var buffer = ByteBuffer()
            error.write(into: &buffer)
            return buffer
        }
        missingCredential = written(.missingCredential)
        invalidCredential = written(.invalidCredential)
        unregistered = written(.unregistered)
        senderIDMismatch = written(.senderIDMismatch)
        notFound = written(.methodNotFound)
        tooLarge = written(.tooLarge)
        internalError = written(.internal)
    }
}

extension FCMError {
    /// A send to a project the credential does not reach: 403 PERMISSION_DENIED with no FCM
    /// detail (the words users report; docs/fcm.md).
    static func wrongProject(_ project: String) -> FCMError {
        FCMError(
            .permissionDenied,
            "Permission 'cloudmessaging.messages.create' denied on resource '//cloudresourcemanager.googleapis.com/projects/\(project)' (or it may not exist)."
        )
    }

    /// A path or method FCM has no method for (our assumption: Google's API envelope).
    static let methodNotFound = FCMError(.notFound, "Method not found.")
}
