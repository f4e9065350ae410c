import NIOConcurrencyHelpers

/// The project's quota as it is spent (`FCMSinkConfiguration.Quota`), shared by every
/// connection: each counted answer asks `admit` first.
///
/// ```
///   first counted message ─► window [t, t + 60 s): count ≤ messages ─► later: 429, Retry-After
///   next counted message at or after t + 60 s ─► a new window from it
/// ```
final class FCMQuotaWindow: Sendable {
    let quota: FCMSinkConfiguration.Quota
    /// The window: when it began, what it counted, whether one is open, and when it first
    /// refused (0: not yet).
    private let state = NIOLockedValueBox((start: UInt64(0), count: 0, open: false, firstRefusal: UInt64(0)))

    init(_ quota: FCMSinkConfiguration.Quota) { self.quota = quota }

    /// A message the window had no room for.
    struct Refusal: Equatable {
        /// Seconds until the window ends (at least 1), for Retry-After.
        var retryAfter: Int
        /// Nanoseconds since the window's first refusal: how far into the back-off it asked for.
        var intoBackOff: UInt64
    }

    /// Counts one message at `now` (uptime nanoseconds) if the window has room; otherwise why not.
    func admit(now: UInt64) -> Refusal? {
        state.withLockedValue { window in
            if !window.open || now >= window.start + quota.window {
                window = (now, 0, true, 0)
            }
            guard window.count < quota.messages else {
                if window.firstRefusal == 0 { window.firstRefusal = now }
                let left = window.start + quota.window - now
                return Refusal(
                    retryAfter: max(1, Int((left + 999_999_999) / 1_000_000_000)),
                    intoBackOff: now - min(now, window.firstRefusal)
                )
            }
            window.count += 1
            return nil
        }
    }

    /// What the window open at `now` has counted, and the nanoseconds left of it (0 and 0 when
    /// none is open: the next counted message opens one).
    func spent(now: UInt64) -> (count: Int, left: UInt64) {
        state.withLockedValue { window in
            guard window.open, now < window.start + quota.window else { return (0, 0) }
            return (window.count, window.start + quota.window - now)
        }
    }

    /// Gives back a message `admit` counted at `now` that ended as a 429 after all (a device's
    /// rate): 429s do not count. Nothing when its window has ended since.
    func release(now: UInt64) {
        state.withLockedValue { window in
            if window.open && now < window.start + quota.window && window.count > 0 { window.count -= 1 }
        }
    }
}
