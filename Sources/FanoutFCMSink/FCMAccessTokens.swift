import FanoutFCMAuth
import NIOConcurrencyHelpers

/// The access tokens a sink's token endpoint issued, each with when it expires (uptime
/// nanoseconds), shared by every connection. A connection asks only when a request's bearer
/// differs from the last it accepted (`FCMExchange`): an SDK sends one token for an hour.
public final class FCMAccessTokens: Sendable {
    private let issued = NIOLockedValueBox([String: UInt64]())

    public init() {}

    /// A new token, good for `lifetime` nanoseconds from `now`: `ya29.` (Google's prefix for
    /// access tokens) and 32 random bytes in base64url. Expired tokens are forgotten here.
    public func issue(lifetime: UInt64, now: UInt64) -> String {
        var bytes = [UInt8](repeating: 0, count: 32)
        var generator = SystemRandomNumberGenerator()
        for index in bytes.indices { bytes[index] = generator.next() }
        let token = "ya29.fanout-" + Base64URL.encode(bytes)
        issued.withLockedValue { tokens in
            tokens = tokens.filter { $0.value > now }
            tokens[token] = now + lifetime
        }
        return token
    }

    /// When `token` expires; `nil` for a token this sink never issued.
    public func expiry(of token: UnsafeRawBufferPointer) -> UInt64? {
        let text = String(decoding: token, as: UTF8.self)
        return issued.withLockedValue { $0[text] }
    }

    /// Tokens issued and not yet forgotten.
    public var count: Int { issued.withLockedValue { $0.count } }
}
