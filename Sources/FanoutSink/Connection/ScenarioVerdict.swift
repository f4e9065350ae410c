import FanoutAPNs
import FanoutDevices
import FanoutHTTP2
import FanoutRandom
import FanoutScenarioTerms

/// What the scenario says of a request that passed every APNs rule: the token lists first, then
/// the per-token rate limit, then the error mix (permanent errors drawn from the seed and the
/// token, so a token fails the same way every time; transient ones drawn per request).
enum ScenarioVerdict {
    /// The token's `TokenList.hash` is worked out once, when first needed (`known`: already
    /// worked out, 0 when not).
    static func rejection(
        for token: UnsafeRawBufferPointer,
        hash known: UInt64,
        scenario: SinkScenario,
        limiter: TokenRateLimiter?,
        random: inout SinkRandom,
        now: UInt64
    ) -> APNsReason? {
        var hash = known
        func tokenHash() -> UInt64 {
            if hash == 0 { hash = TokenList.hash(token) }
            return hash
        }
        if !scenario.unregisteredTokens.isEmpty && scenario.unregisteredTokens.contains(hash: tokenHash()) {
            return .unregistered
        }
        if !scenario.badTokens.isEmpty && scenario.badTokens.contains(hash: tokenHash()) { return .badDeviceToken }
        if let limiter, !limiter.admit(hash: tokenHash(), now: now) { return .tooManyRequests }
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
}

extension DeviceNotification {
    /// An accepted request as the device fleet takes it: its priority, `apns-expiration` (UNIX
    /// seconds, turned into the fleet's uptime clock by `wallOffset`, the wall clock minus the
    /// uptime clock in nanoseconds; checked decimal by `APNsRequestCheck`, rule 9), collapse id,
    /// push type, and the apns-id answered (its history is kept under it).
    init(
        token: UInt64,
        _ fields: APNsRequestCheck.Fields,
        in bytes: UnsafeRawBufferPointer,
        id: UnsafeRawBufferPointer,
        wallOffset: Int64
    ) {
        self.init(token: token)
        if fields.priority.isPresent,
            let priority = HTTP2HeaderList.decimal(APNsRequestCheck.view(fields.priority, bytes))
        {
            self.priority = Int(priority)
        }
        expiration = Expiration(fields, in: bytes, wallOffset: wallOffset)
        if fields.collapseID.count > 0 {
            collapse = UInt32(truncatingIfNeeded: TokenList.hash(APNsRequestCheck.view(fields.collapseID, bytes)))
        }
        let pushType =
            fields.pushType.isPresent ? APNsPushType(bytes: APNsRequestCheck.view(fields.pushType, bytes)) : .alert
        isBackground = pushType == .background
        isAlert = pushType == .alert
        self.id = id
    }
}

extension DeviceNotification.Expiration {
    /// A request's `apns-expiration` (UNIX seconds, checked decimal by `APNsRequestCheck`) on
    /// the fleet's uptime clock: `wallOffset` is the wall clock minus the uptime clock (ns).
    init(_ fields: APNsRequestCheck.Fields, in bytes: UnsafeRawBufferPointer, wallOffset: Int64) {
        guard fields.expiration.isPresent,
            let seconds = HTTP2HeaderList.decimal(APNsRequestCheck.view(fields.expiration, bytes))
        else {
            self = .unset
            return
        }
        if seconds == 0 {
            self = .immediately
        } else {
            let (wall, overflow) = Int64(clamping: seconds).multipliedReportingOverflow(by: 1_000_000_000)
            let uptime = overflow ? Int64.max : wall - wallOffset
            self = .at(uptime <= 0 ? 1 : UInt64(uptime))
        }
    }
}
