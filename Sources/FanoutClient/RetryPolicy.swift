import FanoutAPNs
import FanoutNotation
import FanoutPush
import FanoutRandom

/// What becomes of a notification after one try, written once: a plain state machine that
/// returns an action, which `LoadConnection` carries out.
///
/// ```
///   try ends ──► answered 200 ─────────────────────────────────────► accept
///            ├─► answered 4xx with APNs' reason ────────────────────► reject (final)
///            ├─► answered 429/5xx with APNs' reason ─┐
///            ├─► answered 429/5xx, no known reason ──┤ tries left? ─► retry after backoff
///            ├─► reset by the server ────────────────┤           no ─► fail (cause)
///            ├─► no answer in time ──────────────────┘
///            ├─► its connection ended ─────────────── tries left? ─► retry at once (another
///            │                                                        connection takes it once
///            │                                                        its peer answered a PING
///            │                                                        since: NotificationFeed)
///            │                                                    no ─► fail (ConnectionLost)
///            ├─► answered another 4xx, no known reason ─────────────► fail (UnexpectedResponse)
///            ├─► REFUSED_STREAM, or past a GOAWAY ──────────────────► resend (no try used:
///            │                                                        the server never saw it)
///            └─► FCM: 401 without a code (the bearer refused) ─ tries left? ─► retry after the
///                                                                     token's renewal
/// ```
///
/// A 429/5xx whose tries are used up is a rejection when it carries the service's reason (the
/// server answered) and a failure when it does not. A `Retry-After` (FCM's QUOTA_EXCEEDED and
/// UNAVAILABLE carry one; a gateway's 429 or 5xx may) is waited out before the jittered
/// backoff: a sender that comes back sooner only meets the quota again. Without one, FCM's own
/// least wait is (`PushReason.minimumRetryWait`: a minute after QUOTA_EXCEEDED, a second after
/// UNAVAILABLE and INTERNAL).
struct RetryPolicy {
    /// How a try ended.
    enum Result: Equatable {
        /// `retryAfter`: the answer's `Retry-After`, in nanoseconds (0: none).
        case answered(status: Int, reason: PushReason?, retryAfter: UInt64 = 0)
        /// FCM's 401 without an error code: the bearer was refused (expired, revoked), and
        /// the sender has asked for a new one.
        case unauthenticated
        /// REFUSED_STREAM, or a stream a GOAWAY turned away.
        case refused
        /// The server reset the stream with another code.
        case reset
        /// No answer within the stream timeout (the stream was reset by us).
        case timedOut
        /// The connection ended while the try was in flight.
        case connectionLost
    }

    /// What to do with the notification.
    enum Action: Equatable {
        case accept
        /// A final answer from the server: counted as a rejection with its reason.
        case reject(PushReason)
        /// No usable answer and no tries left.
        case fail(FailureCause)
        /// Try again once `delay` nanoseconds have passed (0: at once), counting a try.
        case retry(delay: UInt64)
        /// Send again at once without counting a try.
        case resend
    }

    /// Tries per notification, at least 1.
    let maxAttempts: Int
    /// The first retry's delay ceiling, doubling with each further try, capped.
    let backoff: UInt64
    let maxBackoff: UInt64
    private var random: SeededRandom

    init(maxAttempts: Int, backoff: Duration, maxBackoff: Duration, seed: UInt64) {
        self.maxAttempts = max(1, maxAttempts)
        self.backoff = backoff.wholeNanoseconds
        self.maxBackoff = maxBackoff.wholeNanoseconds
        random = SeededRandom(seed: seed)
    }

    init(_ shape: LoadShape, seed: UInt64) {
        self.init(
            maxAttempts: shape.maxAttempts,
            backoff: shape.retryBackoff,
            maxBackoff: shape.maxRetryBackoff,
            seed: seed
        )
    }

    /// The action for a notification whose try ended with `result`, after `attempts` earlier
    /// tries that did not count as done. On `.retry` the caller adds one to its attempts.
    mutating func next(after result: Result, attempts: Int) -> Action {
        switch result {
        case .answered(200, _, _):
            return .accept
        case .answered(let status, let reason?, let retryAfter) where reason.status == status:
            guard reason.isRetryable, attempts + 1 < maxAttempts else { return .reject(reason) }
            let wait = retryAfter > 0 ? retryAfter : reason.minimumRetryWait
            return .retry(delay: wait &+ delay(forAttempt: attempts + 1))
        case .answered(let status, _, let retryAfter) where status == 429 || status >= 500:
            guard attempts + 1 < maxAttempts else { return .fail(.unexpectedResponse) }
            return .retry(delay: retryAfter &+ delay(forAttempt: attempts + 1))
        case .unauthenticated:
            guard attempts + 1 < maxAttempts else { return .fail(.unexpectedResponse) }
            return .retry(delay: Self.renewalWait &+ delay(forAttempt: attempts + 1))
        case .answered:
            return .fail(.unexpectedResponse)
        case .refused:
            return .resend
        case .reset:
            return tryAgain(attempts: attempts, otherwise: .streamReset)
        case .timedOut:
            return tryAgain(attempts: attempts, otherwise: .timeout)
        case .connectionLost:
            return attempts + 1 < maxAttempts ? .retry(delay: 0) : .fail(.connectionLost)
        }
    }

    private mutating func tryAgain(attempts: Int, otherwise cause: FailureCause) -> Action {
        attempts + 1 < maxAttempts ? .retry(delay: delay(forAttempt: attempts + 1)) : .fail(cause)
    }

    /// How long a notification refused with the bearer waits before its next try: time for the
    /// token endpoint to answer (Google's answers in well under a second) and for the
    /// connection to take the new token (`AuthorizationWatch`).
    static let renewalWait: UInt64 = 1_000_000_000

    /// Full jitter: uniform below `backoff × 2^(attempt-1)`, capped at `maxBackoff`.
    private mutating func delay(forAttempt attempt: Int) -> UInt64 {
        let ceiling = Self.ceiling(forAttempt: attempt, backoff: backoff, maxBackoff: maxBackoff)
        return ceiling == 0 ? 0 : random.next() % ceiling
    }

    /// The jitter's upper bound for retry number `attempt` (1 for the first retry).
    static func ceiling(forAttempt attempt: Int, backoff: UInt64, maxBackoff: UInt64) -> UInt64 {
        let shift = UInt64(min(max(attempt - 1, 0), 20))
        let doubled = backoff > (UInt64.max >> shift) ? UInt64.max : backoff << shift
        return min(maxBackoff, doubled)
    }
}
