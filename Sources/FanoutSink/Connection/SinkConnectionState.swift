import FanoutAPNs

/// A sink connection's life apart from what its answers say: the faults a scenario injects
/// (GOAWAY after N requests or after a time, a close without a word after N requests), the idle
/// timeout, streams whose requests never arrive whole, and the stream limit APNs raises after a
/// connection's first accepted request (lowered again after a rejection with
/// `--throttle-after-rejection`). Told each event with the time, it returns what the
/// connection should do; it reads no clock and touches no socket, so a test drives it with
/// made-up times (SinkConnectionStateTests).
///
/// ```
///   request ──► total ≥ close-after-requests ──────────► abort (no GOAWAY)
///   answered ─► total ≥ goaway-after-requests ─────────► GOAWAY reason   (once)
///   accepted ─► streams not raised ────────────────────► SETTINGS MAX_CONCURRENT_STREAMS 1000
///   rejected ─► throttling and raised ─────────────────► SETTINGS MAX_CONCURRENT_STREAMS 1
///               (no flip while 8 SETTINGS wait unacknowledged: the list cannot grow)
///   certificate verified ──────────────────────────────► SETTINGS 1000 (no wait for a token)
///   time(now) ─► requests open past their timeout ─────► reset them (slots back)
///            ─► no request, stream or held answer
///               for a whole idle timeout ───────────────► GOAWAY IdleTimeout
///            ─► goaway-after-time since opening ────────► GOAWAY reason   (once)
///            ─► flips held back 10 s, none acknowledged ─► GOAWAY SETTINGS_TIMEOUT
/// ```
struct SinkConnectionState {
    /// What a connection should do now.
    enum Action: Equatable {
        /// Close at once, without GOAWAY (`close-after-requests`).
        case abort
        /// GOAWAY NO_ERROR with APNs' JSON for `reason`.
        case goAway(APNsReason)
        /// GOAWAY SETTINGS_TIMEOUT: the peer left a SETTINGS unacknowledged too long
        /// (RFC 9113 §6.5.3).
        case goAwaySettingsTimeout
        /// SETTINGS with this MAX_CONCURRENT_STREAMS.
        case setMaxConcurrentStreams(UInt32)
        /// Reset the streams whose HEADERS came at or before this time and whose request has
        /// not arrived whole; then tell `incompleteRequestsReset(oldestLeft:now:)`.
        case resetIncompleteRequests(openedBy: UInt64)
    }

    /// The limits and faults that drive it, in nanoseconds where they are times.
    struct Settings: Equatable {
        var faults = ConnectionFaults()
        var idleTimeout: UInt64?
        var requestTimeout: UInt64?
        var throttleAfterRejection = false
        var initialMaxConcurrentStreams: UInt32 = 1
        var maxConcurrentStreams: UInt32 = 1000

        init() {}

        init(_ configuration: SinkConfiguration) {
            faults = configuration.scenario.faults
            idleTimeout = configuration.idleTimeout?.wholeNanoseconds
            requestTimeout = configuration.requestTimeout?.wholeNanoseconds
            throttleAfterRejection = configuration.throttleAfterRejection
            initialMaxConcurrentStreams = configuration.initialMaxConcurrentStreams
            maxConcurrentStreams = configuration.maxConcurrentStreams
        }
    }

    /// SETTINGS this side sent and the peer has not acknowledged, past which the stream limit
    /// no longer flips: a peer that withholds its ACKs cannot make the list of values waiting
    /// for them (`HTTP2Connection`'s) grow with every rejection.
    static let unacknowledgedSettingsLimit = 8
    /// How long flips may be held back by unacknowledged SETTINGS, none acknowledged meanwhile,
    /// before the connection is closed: 10 s. RFC 9113 §6.5.3 asks a peer to acknowledge
    /// "immediately" and leaves the wait to the sender (SETTINGS_TIMEOUT); 10 s covers three
    /// TCP retransmissions (1 + 2 + 4 s), as the request timeout does.
    static let settingsTimeout: UInt64 = 10_000_000_000

    let settings: Settings
    let openedAt: UInt64
    /// Whether the stream limit is the raised one (after a first acceptance, or a certificate).
    private(set) var streamsRaised = false
    /// Whether the provider authenticated with a TLS client certificate (not tokens).
    private(set) var certificateAuthenticated = false
    /// Requests seen: a connection whose count has not moved over a whole idle timeout, with
    /// nothing open or held, is idle. Only requests count: idle means no progress, not no
    /// frames (PINGs, SETTINGS or a stream that never ends keep nothing alive).
    private var activity = 0
    /// When idleness is checked next, and the activity seen at the last check.
    private var idleCheck: (at: UInt64, activity: Int)?
    /// When streams whose requests are still arriving are looked at next.
    private var requestCheck: UInt64?
    private var timedGoAwayDone = false
    private var countedGoAwayDone = false
    private var settingsTimeoutDone = false
    /// SETTINGS this state machine had sent (every `.setMaxConcurrentStreams`), the
    /// acknowledgements seen at the last look, and since when a flip has been held back by
    /// `unacknowledgedSettingsLimit` with no acknowledgement since (`nil`: none is).
    private var settingsSent = 0
    private var acknowledgementsSeen = 0
    private var flipsBlockedSince: UInt64?

    init(_ settings: Settings, openedAt: UInt64) {
        self.settings = settings
        self.openedAt = openedAt
        idleCheck = settings.idleTimeout.map { (openedAt + $0, -1) }
        requestCheck = settings.requestTimeout.map { openedAt + $0 }
    }

    /// A request arrived; `total` requests have on this connection, it included.
    mutating func requestArrived(total: Int) -> Action? {
        activity &+= 1
        if let limit = settings.faults.closeAfterRequests, total >= limit { return .abort }
        return nil
    }

    /// A request was answered or held (`total` on this connection).
    mutating func requestHandled(total: Int) -> Action? {
        guard !countedGoAwayDone, let limit = settings.faults.goAwayAfterRequests, total >= limit else { return nil }
        countedGoAwayDone = true
        return .goAway(settings.faults.goAwayReason)
    }

    /// Whether an answer with this verdict may change the stream limit (`answered` has nothing
    /// to say otherwise): the first acceptance, or a verdict that flips a throttled limit.
    func mayChangeStreams(accepted: Bool) -> Bool {
        accepted ? !streamsRaised : settings.throttleAfterRejection && streamsRaised
    }

    /// An answer went out: accepted (200) or rejected. `unacknowledged`: the SETTINGS this
    /// side has sent that the peer has not acknowledged.
    mutating func answered(accepted: Bool, unacknowledged: Int, now: UInt64) -> Action? {
        observe(unacknowledged: unacknowledged, now: now)
        if accepted {
            guard !streamsRaised else { return nil }
            return flip(raise: true, unacknowledged: unacknowledged, now: now)
        }
        guard settings.throttleAfterRejection, streamsRaised else { return nil }
        return flip(raise: false, unacknowledged: unacknowledged, now: now)
    }

    /// The provider authenticated with its certificate: Apple's one stream until a valid token
    /// is a token connection's rule, so its streams are raised now, not at the first acceptance.
    mutating func certificateVerified(now: UInt64) -> Action? {
        certificateAuthenticated = true
        guard !streamsRaised else { return nil }
        streamsRaised = true
        settingsSent += 1
        return .setMaxConcurrentStreams(settings.maxConcurrentStreams)
    }

    private mutating func flip(raise: Bool, unacknowledged: Int, now: UInt64) -> Action? {
        guard unacknowledged < Self.unacknowledgedSettingsLimit else {
            if flipsBlockedSince == nil { flipsBlockedSince = now }
            return nil
        }
        streamsRaised = raise
        settingsSent += 1
        return .setMaxConcurrentStreams(raise ? settings.maxConcurrentStreams : settings.initialMaxConcurrentStreams)
    }

    /// The connection's state at a wake-up, for the checks that need it.
    struct Load {
        /// Streams open, answers held, SETTINGS unacknowledged.
        var openStreams = 0
        var heldAnswers = 0
        var unacknowledgedSettings = 0
    }

    /// What is due at `now`: one action a call, `nil` when nothing more is. Call until `nil`.
    mutating func timeAction(now: UInt64, _ load: Load) -> Action? {
        if let check = requestCheck, now >= check, let timeout = settings.requestTimeout {
            requestCheck = nil
            return .resetIncompleteRequests(openedBy: now - min(now, timeout))
        }
        if let check = idleCheck, now >= check.at, let timeout = settings.idleTimeout {
            if check.activity == activity && load.openStreams == 0 && load.heldAnswers == 0 {
                // APNs closes idle connections too; a shared sink must not keep them forever.
                idleCheck = nil
                return .goAway(.idleTimeout)
            }
            idleCheck = (now + timeout, activity)
        }
        if !timedGoAwayDone, let after = settings.faults.goAwayAfter, now >= openedAt + after.wholeNanoseconds {
            timedGoAwayDone = true
            return .goAway(settings.faults.goAwayReason)
        }
        observe(unacknowledged: load.unacknowledgedSettings, now: now)
        if !settingsTimeoutDone, let since = flipsBlockedSince, now >= since + Self.settingsTimeout {
            settingsTimeoutDone = true
            return .goAwaySettingsTimeout
        }
        return nil
    }

    /// Follows the peer's acknowledgements (the connection's initial SETTINGS and each one sent
    /// here are all it can acknowledge): under the limit, flips are no longer held back; an
    /// acknowledgement while they still are starts the wait again.
    private mutating func observe(unacknowledged: Int, now: UInt64) {
        let acknowledged = 1 + settingsSent - unacknowledged
        if unacknowledged < Self.unacknowledgedSettingsLimit {
            flipsBlockedSince = nil
        } else if acknowledged != acknowledgementsSeen, flipsBlockedSince != nil {
            flipsBlockedSince = now
        }
        acknowledgementsSeen = acknowledged
    }

    /// After `.resetIncompleteRequests`: the oldest request still arriving (its HEADERS'
    /// time; `nil`: none) sets when to look again.
    mutating func incompleteRequestsReset(oldestLeft: UInt64?, now: UInt64) {
        guard let timeout = settings.requestTimeout else { return }
        requestCheck = (oldestLeft ?? now) + timeout
    }

    /// When `timeAction` has something to look at next (`nil`: nothing timed).
    var nextDeadline: UInt64? {
        var earliest: UInt64?
        func consider(_ time: UInt64?) {
            guard let time else { return }
            earliest = earliest.map { min($0, time) } ?? time
        }
        if !timedGoAwayDone, let after = settings.faults.goAwayAfter { consider(openedAt + after.wholeNanoseconds) }
        consider(idleCheck?.at)
        consider(requestCheck)
        if !settingsTimeoutDone, let since = flipsBlockedSince { consider(since + Self.settingsTimeout) }
        return earliest
    }
}
