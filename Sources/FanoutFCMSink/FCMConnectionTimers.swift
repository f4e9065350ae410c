import FanoutNotation

/// When an FCM connection's own limits fall due (`--idle-timeout`, `--request-timeout`), as
/// a state machine: told what the connection received, asked at its check times, it says
/// what to do. Both connections' kinds use it: HTTP/2 from its delegate's wake-ups, HTTP/1.1
/// from a timer on its loop.
///
/// ```
///   idle check, from the open and then every idle timeout:
///     nothing received since the last check, nothing open or held ─► close it (idle)
///     else ─► next check one idle timeout on      (so a connection is closed 1–2× idle after use)
///   request check, from the open and then at the oldest incomplete request's time:
///     requests begun at or before now − timeout and not arrived whole ─► reset them
///     next check: the oldest still incomplete + timeout, or one timeout on
/// ```
///
/// Checks are per timeout, not per request: a connection costs a timer's wake every few
/// minutes and every few seconds at most.
struct FCMConnectionTimers {
    /// Nanoseconds; `nil`: never.
    private let idleTimeout: UInt64?
    private let requestTimeout: UInt64?
    private(set) var idleCheck: UInt64?
    private(set) var requestCheck: UInt64?
    /// Whether a request arrived since the last idle check.
    private var received = false

    init(idleTimeout: Duration?, requestTimeout: Duration?, openedAt: UInt64) {
        self.idleTimeout = idleTimeout.map { UInt64($0.wholeNanoseconds) }
        self.requestTimeout = requestTimeout.map { UInt64($0.wholeNanoseconds) }
        idleCheck = self.idleTimeout.map { openedAt &+ $0 }
        requestCheck = self.requestTimeout.map { openedAt &+ $0 }
    }

    /// The earliest check (uptime nanoseconds), `nil` with neither timeout.
    var nextCheck: UInt64? {
        switch (idleCheck, requestCheck) {
        case (let idle?, let request?): min(idle, request)
        case (let idle?, nil): idle
        case (nil, let request?): request
        case (nil, nil): nil
        }
    }

    /// A request arrived (its head: HTTP/2's whole message, HTTP/1.1's request line).
    mutating func requestArrived() { received = true }

    /// At `now`: whether the connection has been idle a whole idle timeout, `busy` saying
    /// whether anything is open or held on it now. Said once: the connection is ending, and no
    /// idle check follows (a check left in the past would wake its loop at every turn while
    /// the connection lingers). Not idle: the next check is set.
    mutating func isIdle(now: UInt64, busy: Bool) -> Bool {
        guard let check = idleCheck, let timeout = idleTimeout, now >= check else { return false }
        if !received && !busy {
            idleCheck = nil
            return true
        }
        received = false
        idleCheck = now &+ timeout
        return false
    }

    /// At `now`: the cutoff before which requests not arrived whole are to be reset (uptime
    /// nanoseconds, as they were begun), when the request check is due; then tell
    /// `requestsChecked`.
    func requestCutoff(now: UInt64) -> UInt64? {
        guard let check = requestCheck, let timeout = requestTimeout, now >= check else { return nil }
        return now - min(now, timeout)
    }

    /// The requests were checked at `now`; the oldest still incomplete was begun at `oldestLeft`.
    mutating func requestsChecked(now: UInt64, oldestLeft: UInt64?) {
        guard let timeout = requestTimeout else { return }
        requestCheck = max(now &+ 1, (oldestLeft ?? now) &+ timeout)
    }

    /// A timeout as the log writes it (`10s`, `10m`).
    static func format(_ timeout: Duration?) -> String {
        timeout.map(DurationNotation.format) ?? "ever"
    }
}
