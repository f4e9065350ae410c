/// When a sender fetches its FCM access token, as a state machine over time that returns
/// actions (`FCMBearerTokens` carries them out): one token shared by every connection, fetched
/// before the first send, used until `refreshMargin` before it expires (google-auth's 3 min 45 s,
/// docs/fcm.md "OAuth2"), fetched again at once when FCM refuses it, once however many
/// requests it refused.
///
/// ```
///   none ──► fetch ──► fetched(T, expires in E) ──► T is generation g: used ──┐
///              │                                                             │
///              │       at E − 3m45s, or a 401 to generation g ◄──────────────┘
///              │         └─► fetch (T still used while it is valid)
///              └─► failed ──► fetch again after 1 s, 2 s, 4 s … 60 s
///   past E with no new token ──► no token: nothing is sent without a bearer
/// ```
///
/// Times are the monotonic clock's nanoseconds. A token's expiry is counted from when its
/// request was sent, not from its answer: never later than the endpoint meant.
package struct FCMTokenSchedule: Sendable {
    /// A token in use: the `authorization` value and its generation (a connection that holds
    /// an older generation takes the new one).
    package struct Token: Sendable, Equatable {
        package var authorization: String
        package var generation: Int
        package var expiresAt: UInt64
    }

    /// What to do now.
    package enum Action: Equatable, Sendable {
        /// Ask the token endpoint for a token, then report `fetched` or `failed`.
        case fetch
        /// Nothing until `at` (or an event).
        case wait(until: UInt64)
        /// A fetch is under way: nothing until it ends.
        case waitForFetch
    }

    /// How long before its expiry a token is replaced (google-auth's REFRESH_THRESHOLD).
    package static let refreshMargin: UInt64 = 225 * 1_000_000_000
    /// The longest wait between failed fetches.
    package static let longestBackoff: UInt64 = 60 * 1_000_000_000
    /// The shortest wait between fetches that succeed.
    package static let shortestWait: UInt64 = 1_000_000_000
    /// The longest life a token is taken to have, in seconds (Google's are an hour).
    package static let longestLifetime = 86_400

    package private(set) var token: Token?
    private var fetchStartedAt: UInt64?
    /// When the next fetch is due (0: now).
    private var due: UInt64 = 0
    /// Fetches failed in a row.
    package private(set) var failures = 0

    package init() {}

    /// The token to send at `now`, if one is valid: none past its expiry.
    package func valid(at now: UInt64) -> Token? {
        guard let token, now < token.expiresAt else { return nil }
        return token
    }

    /// The action at `now`. A `.fetch` starts a fetch: the caller reports how it ended.
    package mutating func next(now: UInt64) -> Action {
        if fetchStartedAt != nil { return .waitForFetch }
        guard now >= due else { return .wait(until: due) }
        fetchStartedAt = now
        return .fetch
    }

    /// The endpoint answered with `accessToken`, good for `expiresIn` seconds (at most
    /// `longestLifetime`: `FCMTokenRequest` refuses more). `false` when the token had expired
    /// by the time it came: that counts as a failed fetch.
    @discardableResult
    package mutating func fetched(accessToken: String, expiresIn: Int, now: UInt64) -> Bool {
        let started = fetchStartedAt ?? now
        let lifetime = UInt64(min(max(0, expiresIn), Self.longestLifetime)) * 1_000_000_000
        let expiresAt = started + lifetime
        guard expiresAt > now else {
            failed(now: now)
            return false
        }
        fetchStartedAt = nil
        failures = 0
        token = Token(
            authorization: "Bearer " + accessToken,
            generation: (token?.generation ?? 0) + 1,
            expiresAt: expiresAt
        )
        // A token shorter-lived than the margin is replaced at half its life, not at once; and
        // never sooner than a second from now (a fetch slower than half a short life would
        // otherwise ask again at once, and again).
        let refresh = lifetime > 2 * Self.refreshMargin ? expiresAt - Self.refreshMargin : started + lifetime / 2
        due = max(refresh, now + Self.shortestWait)
        return true
    }

    /// The fetch failed: the next is due after a backoff that doubles from 1 s to 60 s.
    package mutating func failed(now: UInt64) {
        fetchStartedAt = nil
        failures += 1
        due = now &+ Self.backoff(afterFailures: failures)
    }

    /// FCM refused the bearer of `generation` (401): a fetch is due now, unless a newer token
    /// is already in use or on its way (the refusals of one token ask once). `true` when that
    /// moved the next fetch.
    @discardableResult
    package mutating func refused(generation: Int, now: UInt64) -> Bool {
        guard let token, token.generation == generation, fetchStartedAt == nil, failures == 0, due > now else {
            return false
        }
        due = now
        return true
    }

    /// The wait after `failures` failed fetches in a row: 1 s, 2 s, 4 s … at most 60 s.
    package static func backoff(afterFailures failures: Int) -> UInt64 {
        let shift = UInt64(min(max(failures - 1, 0), 6))
        return min(longestBackoff, 1_000_000_000 << shift)
    }
}
