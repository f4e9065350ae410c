import Atomics
import FanoutAPNs
import FanoutNotation
import FanoutPush
import Foundation
import NIOConcurrencyHelpers

/// The conformance card: each of `ProviderRule`'s checks counted across every connection of a
/// sink, with the first few examples of each (token, connection, when).
///
/// Memory is fixed when the card is made, whatever the fan-out's size: it remembers rejected
/// tokens (never accepted ones) and recent apns-ids in `KeyTable`s, and counts what a full
/// table could not hold (`forgotten`) so that a card never claims more than it checked.
///
/// ```
///   per request (its loop)                 shared, lock-free                 rare, under a lock
///   token ─► permanentlyRejected? ──────► KeyTable 2^21 (tag | reason)
///         ─► retryable answered < 1 s? ─► KeyTable 2^18 (tag | ms clock)
///   apns-id ─► other digest? ───────────► KeyTable 2^20 (tag | digest)      examples, token iats
/// ```
public final class ProviderCard: Sendable {
    /// One case of a violation.
    public struct Example: Sendable, Hashable {
        /// The device token, or empty when the rule is about a connection or the example is the
        /// device fleet's (the fleet knows a device by its token's hash; `apnsID` names it).
        public var token: String
        /// The sink's connection id (1 for the first; 0 for the fleet's examples).
        public var connection: Int
        /// Uptime nanoseconds when it was seen.
        public var at: UInt64
        /// What was seen, e.g. `after 410 Unregistered`.
        public var detail: String
        /// The apns-id the sink answered, on the device fleet's examples (its history at
        /// `/deliveries/ID` while it is among the recent ones).
        public var apnsID: String? = nil

        package init(token: String, connection: Int, at: UInt64, detail: String, apnsID: String? = nil) {
            self.token = token
            self.connection = connection
            self.at = at
            self.detail = detail
            self.apnsID = apnsID
        }
    }

    /// Examples kept per rule.
    public static let examplesPerRule = 5

    private let counts: [ManagedAtomic<Int>]
    private let examples = NIOLockedValueBox<[ProviderRule: [Example]]>([:])
    /// Tokens answered with a permanent rejection: value = the reason's index + 1.
    @usableFromInline
    let permanent = KeyTable(log2Capacity: 21)
    /// Tokens answered 429 or 5xx: value = the millisecond clock (24 bits) of the answer.
    @usableFromInline
    let retryable = KeyTable(log2Capacity: 18)
    /// apns-ids seen: value = the low 24 bits of their notification's digest hash.
    @usableFromInline
    let ids = KeyTable(log2Capacity: 20)
    @usableFromInline
    let forgottenRejections = ManagedAtomic(0)
    /// Distinct provider tokens' iat (seconds since 1970), the first `tokenMemory` of them.
    private let issuedAt = NIOLockedValueBox<Set<Int64>>([])
    private static let tokenMemory = 1024
    /// Short connections the provider closed that no new connection has followed yet; the id
    /// of the newest connection opened, and the latest time one opened.
    private let shortClosed = ManagedAtomic(0)
    private let newestConnection = ManagedAtomic(0)
    private let latestOpening = ManagedAtomic<UInt64>(0)
    /// An FCM sink's: the longest wait (ms) it has told a token, which bounds a wait still to come.
    @usableFromInline
    let longestFCMWait = ManagedAtomic<UInt32>(0)
    /// Examples offered per rule, for the rules counted when the card is read (`example`):
    /// past `examplesPerRule` an offer costs one atomic, not the lock.
    private let offered: [ManagedAtomic<Int>]

    /// An empty card.
    public init() {
        counts = ProviderRule.allCases.map { _ in ManagedAtomic(0) }
        offered = ProviderRule.allCases.map { _ in ManagedAtomic(0) }
    }

    // MARK: Reading

    /// Violations of `rule` so far.
    public func count(_ rule: ProviderRule) -> Int { counts[rule.index].load(ordering: .relaxed) }

    /// The first examples of `rule` (`examplesPerRule` at most), in the order seen.
    public func examples(_ rule: ProviderRule) -> [Example] { examples.withLockedValue { $0[rule] ?? [] } }

    /// Permanent rejections the card could not remember (its table was full): retries of those
    /// tokens went unseen.
    public var forgotten: Int { forgottenRejections.load(ordering: .relaxed) }

    // MARK: Checks, per request

    /// `token` arrived at `now` on `connection`: was it answered before in a way that forbids
    /// sending it again, or sooner than a pause allows?
    @inlinable
    package func arrived(token: UnsafeRawBufferPointer, hash: UInt64, connection: Int, now: UInt64) {
        if permanent.count > 0, let value = permanent.value(of: hash) {
            let reason = APNsReason.all[Int(value) - 1]
            violated(.permanentRetried, token: token, connection: connection, at: now) {
                "sent again after \(reason.status) \(reason.rawValue)"
            }
        }
        if retryable.count > 0, let stamp = retryable.value(of: hash) {
            let since = (Self.clock(now) &- stamp) & 0xFF_FFFF
            if since < UInt32(ProviderRule.FastRetry.pause.wholeNanoseconds / 1_000_000) {
                violated(.fastRetry, token: token, connection: connection, at: now) {
                    "sent again \(since) ms after its 429 or 5xx"
                }
            }
        }
    }

    /// `token` is answered with `reason` at `now`.
    @inlinable
    package func rejected(hash: UInt64, _ reason: APNsReason, now: UInt64) {
        switch ProviderRule.advice(after: reason) {
        case .never:
            if permanent.insert(hash, value: UInt32(reason.index + 1)) == .full {
                forgottenRejections.wrappingIncrement(ordering: .relaxed)
            }
        case .afterPause:
            retryable.replace(hash, value: Self.clock(now))
        case .any:
            break
        }
    }

    /// A request named apns-id `idHash` for the notification `digestHash` (token and payload).
    @inlinable
    package func identified(
        idHash: UInt64,
        digestHash: UInt64,
        token: UnsafeRawBufferPointer,
        connection: Int,
        now: UInt64
    ) {
        let digest = UInt32(truncatingIfNeeded: digestHash) & 0xFF_FFFF
        if let seen = ids.value(of: idHash), seen != digest {
            violated(.apnsIDReused, token: token, connection: connection, at: now) {
                "an apns-id already used for another notification"
            }
        }
        ids.replace(idHash, value: digest)
    }

    /// A payload of `length` bytes against a limit of `limit`.
    @inlinable
    package func payload(length: Int, limit: Int, token: UnsafeRawBufferPointer, connection: Int, now: UInt64) {
        guard ProviderRule.isNearLimit(length, limit: limit) else { return }
        violated(.payloadNearLimit, token: token, connection: connection, at: now) {
            "\(length) of \(limit) bytes"
        }
    }

    // MARK: Checks, per connection

    /// A request arrived with `open` streams open before the connection's first accepted
    /// request, past the `limit` announced.
    package func beforeFirstAcceptance(
        open: Int,
        limit: Int,
        token: UnsafeRawBufferPointer,
        connection: Int,
        now: UInt64
    ) {
        violated(.streamLimit, token: token, connection: connection, at: now) {
            "\(open) streams open before the first accepted request (limit \(limit))"
        }
    }

    /// A connection refused `count` streams past its limit.
    package func refused(_ count: Int, limit: Int, connection: Int, now: UInt64) {
        violated(.streamLimit, count: count, token: nil, connection: connection, at: now) {
            "\(count) streams refused past the limit of \(limit)"
        }
    }

    /// A connection saw `count` streams opened after its GOAWAY.
    package func afterGoAway(_ count: Int, connection: Int, now: UInt64) {
        violated(.afterGoAway, count: count, token: nil, connection: connection, at: now) {
            "\(count) streams after GOAWAY"
        }
    }

    /// A connection opened: the short ones closed before it were churn.
    package func connectionOpened(_ connection: Int, now: UInt64) {
        var newest = newestConnection.load(ordering: .relaxed)
        while connection > newest {
            (_, newest) = newestConnection.compareExchange(expected: newest, desired: connection, ordering: .relaxed)
        }
        var latest = latestOpening.load(ordering: .relaxed)
        while now > latest {
            (_, latest) = latestOpening.compareExchange(expected: latest, desired: now, ordering: .relaxed)
        }
        settleShortClosed(followedBy: connection, now: now)
    }

    /// Counts the short connections waiting for a successor as churn: `connection` followed them.
    private func settleShortClosed(followedBy connection: Int, now: UInt64) {
        let churned = shortClosed.exchange(0, ordering: .relaxed)
        guard churned > 0 else { return }
        violated(.churn, count: churned, token: nil, connection: connection, at: now) {
            "opened after \(churned) short connection\(churned == 1 ? "" : "s") closed"
        }
    }

    /// The provider closed `connection` after `lifetime` nanoseconds and `requests` requests,
    /// the last at `lastRequest`. A short one is churn once a connection replaced it: at once
    /// if one opened after its last request (the provider's close and its next connect reach
    /// the sink in either order), else when the next one opens. A connection opened before its
    /// last request is a sibling, not a replacement: a pool of four opened together, of which
    /// two carried one request each of a small send, closed at its end, is no churn.
    package func providerClosed(
        _ connection: Int,
        lifetime: UInt64,
        requests: Int,
        lastRequest: UInt64,
        now: UInt64
    ) {
        // A connection that sent nothing (a port probe, a health check) is not a provider's.
        guard lifetime < ProviderRule.Churn.lifetime.wholeNanoseconds, requests < ProviderRule.Churn.requests,
            requests > 0
        else { return }
        let newest = newestConnection.load(ordering: .relaxed)
        guard newest > connection, latestOpening.load(ordering: .relaxed) > lastRequest else {
            shortClosed.wrappingIncrement(ordering: .relaxed)
            // A connection that opened between the load and the increment saw nothing waiting.
            let newer = newestConnection.load(ordering: .relaxed)
            if newer > connection, latestOpening.load(ordering: .relaxed) > lastRequest {
                settleShortClosed(followedBy: newer, now: now)
            }
            return
        }
        violated(.churn, token: nil, connection: connection, at: now) {
            "closed after \(requests) request\(requests == 1 ? "" : "s") in \(lifetime / 1_000_000) ms; connection \(newest) had opened"
        }
    }

    /// A connection's new provider token, issued at `issuedAt` (seconds since 1970), was accepted.
    package func providerToken(issuedAt: Int64, connection: Int, now: UInt64) {
        let nearest: Int64? = self.issuedAt.withLockedValue { seen in
            guard !seen.contains(issuedAt) else { return nil }
            let nearest = seen.min { abs($0 - issuedAt) < abs($1 - issuedAt) }
            if seen.count < Self.tokenMemory { seen.insert(issuedAt) }
            return nearest.flatMap { abs($0 - issuedAt) < ProviderRule.ProviderTokens.shortestRenewal ? $0 : nil }
        }
        guard let nearest else { return }
        violated(.providerToken, token: nil, connection: connection, at: now) {
            "a token issued \(abs(issuedAt - nearest)) s after another (at least \(ProviderRule.ProviderTokens.shortestRenewal) s)"
        }
    }

    /// A provider token was refused: kept too long, or renewed too soon on one connection.
    package func providerToken(refused reason: APNsReason, connection: Int, now: UInt64) {
        violated(.providerToken, token: nil, connection: connection, at: now) {
            "\(reason.status) \(reason.rawValue)"
        }
    }

    /// A broadcast channels' rule broken (`BroadcastFindings` decides; the card counts and keeps
    /// the first examples).
    func broadcastViolated(_ rule: ProviderRule, connection: Int, at now: UInt64, _ detail: () -> String) {
        violated(rule, token: nil, connection: connection, at: now, detail)
    }

    // MARK: Counting

    @usableFromInline
    func violated(
        _ rule: ProviderRule,
        count: Int = 1,
        token: UnsafeRawBufferPointer?,
        connection: Int,
        at now: UInt64,
        _ detail: () -> String
    ) {
        let before = counts[rule.index].loadThenWrappingIncrement(by: count, ordering: .relaxed)
        guard before < Self.examplesPerRule else { return }
        remember(rule, token: token, connection: connection, at: now, detail)
    }

    /// Keeps an example of `rule` without counting it, while it has fewer than `examplesPerRule`
    /// (a rule whose count is worked out when the card is read).
    func example(
        _ rule: ProviderRule,
        token: UnsafeRawBufferPointer?,
        connection: Int,
        at now: UInt64,
        _ detail: () -> String
    ) {
        guard offered[rule.index].loadThenWrappingIncrement(ordering: .relaxed) < Self.examplesPerRule else { return }
        remember(rule, token: token, connection: connection, at: now, detail)
    }

    private func remember(
        _ rule: ProviderRule,
        token: UnsafeRawBufferPointer?,
        connection: Int,
        at now: UInt64,
        _ detail: () -> String
    ) {
        let text = token.map { String(decoding: $0, as: UTF8.self) } ?? ""
        let example = Example(token: text, connection: connection, at: now, detail: detail())
        examples.withLockedValue { examples in
            if examples[rule, default: []].count < Self.examplesPerRule { examples[rule, default: []].append(example) }
        }
    }

    /// Milliseconds on the uptime clock, 24 bits (wraps every 4.6 hours; a pause is 1 s).
    @inlinable
    static func clock(_ nanoseconds: UInt64) -> UInt32 {
        UInt32(truncatingIfNeeded: nanoseconds / 1_000_000) & 0xFF_FFFF
    }
}
