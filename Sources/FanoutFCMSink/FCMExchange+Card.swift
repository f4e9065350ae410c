import FanoutAPNs
import FanoutFCM
import FanoutInstrument

/// What a connection's exchange puts on the card (`ProviderCard+FCM`) when the sink is the
/// provider's instrument: the refusals, each with the token and message it was about.
extension FCMExchange {
    /// The project's quota refused a send: its token (when the body names one) is told to wait
    /// the Retry-After, and a refusal past the back-off's grace is the provider not slowing down.
    func cardQuotaRefusal(
        _ body: UnsafeRawBufferPointer,
        _ messageHash: UInt64,
        _ refusal: FCMQuotaWindow.Refusal,
        _ watch: FCMConnectionWatch,
        now: UInt64
    ) {
        // The quota answers before the body is read: it is read for its token, on the
        // instrument's refusal path only.
        let token = cardServiceRefusal(
            body,
            messageHash,
            .quotaExceeded,
            retryAfter: refusal.retryAfter,
            watch,
            now: now
        )
        watch.card.fcmQuotaRefused(
            intoBackOff: refusal.intoBackOff,
            roundTrip: service.wireRoundTrip,
            token: token,
            connection: watch.id,
            now: now
        )
    }

    /// A send the service refused before reading its body (the quota's 429, a 500 or a 503):
    /// its token, when the body names one, is checked as a retry and told to wait the
    /// Retry-After (a pause without one). Returns the token it read.
    @discardableResult
    func cardServiceRefusal(
        _ body: UnsafeRawBufferPointer,
        _ messageHash: UInt64,
        _ code: FCMErrorCode,
        retryAfter: Int,
        _ watch: FCMConnectionWatch,
        now: UInt64
    ) -> UnsafeRawBufferPointer? {
        guard let token = Self.token(in: body) else { return nil }
        let tokenHash = FCMTokenFate.hash(token)
        watch.card.fcmArrived(
            token: token,
            tokenHash: tokenHash,
            messageHash: messageHash,
            connection: watch.id,
            now: now
        )
        watch.card.fcmRefused(tokenHash: tokenHash, messageHash: messageHash, code, retryAfter: retryAfter, now: now)
        return token
    }

    /// The token a send's body names, read on the instrument's refusal paths that answer
    /// before the body is checked; `nil` for a body FCM would refuse or a send to a topic.
    static func token(in body: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer? {
        guard case .success(let send) = FCMSendCheck.check(body), send.targetKind == .token else { return nil }
        return UnsafeRawBufferPointer(rebasing: body[send.target])
    }

    /// A body FCM refuses (400 INVALID_ARGUMENT): the same message again is a permanent
    /// rejection retried; a client error.
    func cardInvalid(_ messageHash: UInt64, _ why: String, _ watch: FCMConnectionWatch, now: UInt64) {
        let empty = UnsafeRawBufferPointer(start: nil, count: 0)
        watch.card.fcmArrived(token: empty, tokenHash: 0, messageHash: messageHash, connection: watch.id, now: now)
        watch.card.fcmRefused(tokenHash: 0, messageHash: messageHash, .invalidArgument, retryAfter: 0, now: now)
        watch.card.fcmClientError(token: nil, connection: watch.id, now: now) { "400 INVALID_ARGUMENT: \(why)" }
    }

    /// A token FCM refuses for good (404 UNREGISTERED, 403 SENDER_ID_MISMATCH); a client error.
    func cardRefusedToken(
        _ token: UnsafeRawBufferPointer,
        _ messageHash: UInt64,
        _ code: FCMErrorCode,
        _ watch: FCMConnectionWatch,
        now: UInt64
    ) {
        watch.card.fcmRefused(
            tokenHash: FCMTokenFate.hash(token),
            messageHash: messageHash,
            code,
            retryAfter: 0,
            now: now
        )
        watch.card.fcmClientError(token: token, connection: watch.id, now: now) {
            "\(code.status?.httpStatus ?? 0) \(code.rawValue)"
        }
    }

    /// A send answered 401: `bearer` (`nil`: none) and why; a bearer refused before is named so.
    func cardBearer(_ bearer: UnsafeRawBufferPointer?, _ why: String, _ watch: FCMConnectionWatch, now: UInt64) {
        var detail = why
        if let bearer, service.bearerRefusedBefore(FCMTokenFate.hash(bearer)) {
            detail = "\(why), sent again after its 401"
        }
        watch.card.fcmBearerRefused(connection: watch.id, now: now) { detail }
        watch.card.fcmClientError(token: nil, connection: watch.id, now: now) { "401 UNAUTHENTICATED: \(detail)" }
    }
}
