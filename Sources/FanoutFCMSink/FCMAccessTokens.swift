import FanoutFCMAuth
import NIOConcurrencyHelpers

/// The access tokens a sink's token endpoint issued, each with when it expires (uptime
/// nanoseconds), shared by every connection. A connection asks only when a request's bearer
/// differs from the last it accepted (`FCMExchange`): an SDK sends one token for an hour.
///
/// With the sink as the provider's instrument it keeps their history too: when each was issued
/// and last used (`used`), so the card can tell a token replaced long before its expiry from
/// two clients' tokens used side by side (`earlyReplacements`).
public final class FCMAccessTokens: Sendable {
    /// One issued token's history.
    public struct Record: Sendable, Hashable {
        public var issuedAt: UInt64
        public var expiry: UInt64
        /// The last send that carried it (uptime ns; 0: none yet).
        public var lastUse: UInt64
        /// The connection whose token request it answered.
        public var connection: Int
    }

    /// The tokens not yet forgotten, with their expiry, and issues since expired ones were last
    /// forgotten (every `sweepEvery` issues: a provider fetching a token a send costs no scan
    /// of them all each time).
    private let issued = NIOLockedValueBox((tokens: [String: UInt64](), sinceSweep: 0))
    static let sweepEvery = 1024
    /// In the order issued, the first `recordsKept`; a token's position by its text; the tokens
    /// issued past them (their replacements unjudged).
    private let history = NIOLockedValueBox((records: [Record](), positions: [String: Int](), unrecorded: 0))
    public static let recordsKept = 4096

    public init() {}

    /// A new token, good for `lifetime` nanoseconds from `now`: `ya29.` (Google's prefix for
    /// access tokens) and 32 random bytes in base64url. Expired tokens are forgotten here.
    public func issue(lifetime: UInt64, now: UInt64, connection: Int = 0) -> String {
        var bytes = [UInt8](repeating: 0, count: 32)
        var generator = SystemRandomNumberGenerator()
        for index in bytes.indices { bytes[index] = generator.next() }
        let token = "ya29.fanout-" + Base64URL.encode(bytes)
        issued.withLockedValue { issued in
            issued.sinceSweep += 1
            if issued.sinceSweep >= Self.sweepEvery {
                issued.tokens = issued.tokens.filter { $0.value > now }
                issued.sinceSweep = 0
            }
            issued.tokens[token] = now + lifetime
        }
        history.withLockedValue { history in
            guard history.records.count < Self.recordsKept else {
                history.unrecorded += 1
                return
            }
            history.positions[token] = history.records.count
            history.records.append(Record(issuedAt: now, expiry: now + lifetime, lastUse: 0, connection: connection))
        }
        return token
    }

    /// When `token` expires; `nil` for a token this sink never issued.
    public func expiry(of token: UnsafeRawBufferPointer) -> UInt64? {
        let text = String(decoding: token, as: UTF8.self)
        return issued.withLockedValue { $0.tokens[text] }
    }

    /// A send carried `token` as late as `now` (told when a connection changes bearer or ends:
    /// once per bearer and connection, not per send).
    func used(_ token: [UInt8], at now: UInt64) {
        let text = String(decoding: token, as: UTF8.self)
        history.withLockedValue { history in
            guard let position = history.positions[text] else { return }
            history.records[position].lastUse = max(history.records[position].lastUse, now)
        }
    }

    /// Tokens issued and not yet forgotten.
    public var count: Int { issued.withLockedValue { $0.tokens.count } }

    /// Tokens issued past the first `recordsKept`: whether they replaced others early was not
    /// judged.
    public var unrecorded: Int { history.withLockedValue { $0.unrecorded } }

    /// The tokens issued so far, in order, with their use.
    public var records: [Record] { history.withLockedValue { $0.records } }

    /// A token replaced early: the next token was issued while it had more than `early` to
    /// live, and no send carried it from then on.
    public struct Replacement: Sendable, Hashable {
        public var replaced: Record
        public var by: Record
        /// Nanoseconds the replaced one had left when the next was issued.
        public var left: UInt64
    }

    /// Every token the next one replaced with more than `early` nanoseconds left. Two clients
    /// of one account (an SDK's synchronous and asynchronous paths, two processes) each keep
    /// using their own: neither is replaced.
    public func earlyReplacements(early: UInt64) -> [Replacement] {
        let records = records
        return zip(records, records.dropFirst()).compactMap { old, next in
            guard old.expiry > next.issuedAt, old.expiry - next.issuedAt > early, old.lastUse < next.issuedAt else {
                return nil
            }
            return Replacement(replaced: old, by: next, left: old.expiry - next.issuedAt)
        }
    }
}
