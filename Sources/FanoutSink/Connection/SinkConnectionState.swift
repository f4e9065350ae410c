import FanoutAPNs

/// A sink connection's life and each request's reply: the faults a scenario injects (GOAWAY
/// after N requests or after a time, a close without a word after N requests), the idle
/// timeout, streams whose requests never arrive whole, the stream limit APNs raises after a
/// connection's first accepted request (lowered again after a rejection with
/// `--throttle-after-rejection`), and whether a decided request is answered now, held until
/// its time, or never (`reply`). What each answer says is decided before it (`RequestChecks`,
/// the scenario, the fleet). Told each event with the time, it returns what the connection
/// should do; it reads no clock and touches no socket, so a test drives it with
/// made-up times (SinkConnectionStateTests).
///
/// ```
///   request ──► total ≥ close-after-requests ──────────► abort (no GOAWAY)
///   decided ──► reply: none · now(answer) · later(held entry)
///   answered ─► total ≥ goaway-after-requests ─────────► GOAWAY reason   (once)
///            ─► verdict Shutdown ──────────────────────► GOAWAY Shutdown (once)
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
        /// Half the wire's round trip (`SinkWire`, its median for a spread; 0 without a wire):
        /// the time a timed request spent on the wire before its read, and its answer will
        /// spend after its write. It is the endpoint's path, not a queue of the harness, so it is
        /// taken out of the transit and given to the sender with the hold (`TimedAPNsID`).
        var wireOneWay: UInt64 = 0

        init() {}

        init(_ configuration: SinkConfiguration) {
            faults = configuration.scenario.faults
            idleTimeout = configuration.idleTimeout?.wholeNanoseconds
            requestTimeout = configuration.requestTimeout?.wholeNanoseconds
            throttleAfterRejection = configuration.throttleAfterRejection
            initialMaxConcurrentStreams = configuration.initialMaxConcurrentStreams
            maxConcurrentStreams = configuration.maxConcurrentStreams
            wireOneWay = (configuration.scenario.wire?.roundTrip.median ?? 0) / 2
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

    /// Where the connection is, as far as this state machine has said.
    enum Phase: Equatable {
        /// Taking requests.
        case serving
        /// This state machine ended the connection: no GOAWAY of its own is due after it. The
        /// requests open when it was said still finish, their stream limit may still flip, and
        /// those that never arrive whole are still reset.
        case closing(Closing)
    }

    /// How this state machine ended the connection.
    enum Closing: Equatable {
        /// At once, without GOAWAY (`close-after-requests`).
        case aborted
        /// GOAWAY with this reason: the scenario's, IdleTimeout, or Shutdown after a Shutdown
        /// verdict.
        case goAway(APNsReason)
        /// GOAWAY SETTINGS_TIMEOUT.
        case settingsTimeout
    }

    /// The stream limit this side announces, and the SETTINGS that carry it: the limit flips
    /// only while the peer acknowledges them.
    struct StreamLimit {
        /// Whether the limit is the raised one (after a first acceptance, or a certificate).
        var raised = false
        /// Whether the provider authenticated with a TLS client certificate (not tokens).
        var certificateAuthenticated = false
        /// SETTINGS this state machine had sent (every `.setMaxConcurrentStreams`), the
        /// acknowledgements seen at the last look, and since when a flip has been held back by
        /// `unacknowledgedSettingsLimit` with no acknowledgement since (`nil`: none is).
        var settingsSent = 0
        var acknowledgementsSeen = 0
        var flipsBlockedSince: UInt64?

        /// Follows the peer's acknowledgements (the connection's initial SETTINGS and each one
        /// sent here are all it can acknowledge): under the limit, flips are no longer held back;
        /// an acknowledgement while they still are starts the wait again.
        mutating func observe(unacknowledged: Int, now: UInt64) {
            let acknowledged = 1 + settingsSent - unacknowledged
            if unacknowledged < SinkConnectionState.unacknowledgedSettingsLimit {
                flipsBlockedSince = nil
            } else if acknowledged != acknowledgementsSeen, flipsBlockedSince != nil {
                flipsBlockedSince = now
            }
            acknowledgementsSeen = acknowledged
        }

        /// Raises or lowers the limit, unless too many SETTINGS wait for their acknowledgement;
        /// whether it flipped.
        mutating func flip(raise: Bool, unacknowledged: Int, now: UInt64) -> Bool {
            guard unacknowledged < SinkConnectionState.unacknowledgedSettingsLimit else {
                if flipsBlockedSince == nil { flipsBlockedSince = now }
                return false
            }
            raised = raise
            settingsSent += 1
            return true
        }
    }

    let settings: Settings
    let openedAt: UInt64
    private(set) var phase = Phase.serving
    private(set) var streams = StreamLimit()
    /// Requests seen: a connection whose count has not moved over a whole idle timeout, with
    /// nothing open or held, is idle. Only requests count: idle means no progress, not no
    /// frames (PINGs, SETTINGS or a stream that never ends keep nothing alive).
    private var activity = 0
    /// When idleness is checked next, and the activity seen at the last check.
    private var idleCheck: (at: UInt64, activity: Int)?
    /// When streams whose requests are still arriving are looked at next.
    private var requestCheck: UInt64?

    init(_ settings: Settings, openedAt: UInt64) {
        self.settings = settings
        self.openedAt = openedAt
        idleCheck = settings.idleTimeout.map { (openedAt + $0, -1) }
        requestCheck = settings.requestTimeout.map { openedAt + $0 }
    }

    /// Whether the stream limit is the raised one.
    var streamsRaised: Bool { streams.raised }
    /// Whether the provider authenticated with its certificate.
    var certificateAuthenticated: Bool { streams.certificateAuthenticated }

    /// A request arrived; `total` requests have on this connection, it included.
    mutating func requestArrived(total: Int) -> Action? {
        activity &+= 1
        if let limit = settings.faults.closeAfterRequests, total >= limit { return close(.aborted) }
        return nil
    }

    /// A request whose verdict is known (APNs's rules, the scenario, the fleet), with its times
    /// in uptime nanoseconds.
    struct DecidedRequest {
        var stream: UInt32
        var rejection: APNsReason?
        /// The notification's digest hash, counted when it is accepted.
        var digestHash: UInt64
        /// The scenario's unanswered share drew it: it is never answered.
        var unanswered: Bool
        /// When its read burst began (the time spent on the requests before it in the burst is
        /// the sink's, and shows as lateness), and when its answer is due (`AnswerScheduler`;
        /// ignored for an unanswered one).
        var received: UInt64
        var due: UInt64
        /// When the client sent it, if its apns-id says (`TimedAPNsID`; 0: not timed).
        var sentAt: UInt64
        /// With the device fleet, a 410's: when APNs learnt the app was gone (0: now).
        var unregisteredSince: UInt64
    }

    /// What becomes of a decided request.
    ///
    /// ```
    ///   unanswered share drew it ──► .none
    ///   due ≤ now ─────────────────► .now(answer)     written in this turn
    ///   due > now ─────────────────► .later(entry)    held (AnswerScheduler) until wake(due)
    /// ```
    enum Reply {
        case none
        case now(AnswerWriter.Answer)
        case later(PendingResponse)
    }

    /// How a decided request is answered, and what its lateness is timed by: the transit, the
    /// time between its send and its read that the wire does not explain (the client's and the
    /// kernel's queues, this sink's read backlog: `SinkLoopRecorder.fromSend`), at least 1 ns
    /// when the request was timed and at most `AnswerWriter.longestTransit` (a held entry keeps
    /// it in 32 bits of µs); the hold, what the scenario added plus the wire's way back.
    @inline(__always)
    func reply(to request: DecidedRequest, now: UInt64) -> Reply {
        guard !request.unanswered else { return .none }
        let received = request.received
        let transit: UInt64 =
            request.sentAt == 0
            ? 0
            : max(1, min(received - min(received, request.sentAt + settings.wireOneWay), AnswerWriter.longestTransit))
        guard request.due <= now else {
            return .later(
                PendingResponse(
                    due: request.due,
                    stream: request.stream,
                    transit: UInt32(transit == 0 ? 0 : max(1, transit / 1000)),
                    digestHash: request.digestHash,
                    reason: request.rejection.map { Int16($0.index) } ?? -1
                )
            )
        }
        return .now(
            AnswerWriter.Answer(
                stream: request.stream,
                rejection: request.rejection,
                digestHash: request.digestHash,
                due: request.due,
                transit: transit,
                held: request.due - min(request.due, received) + settings.wireOneWay,
                unregisteredSince: request.unregisteredSince
            )
        )
    }

    /// A request was answered or held (`total` on this connection, `rejection` its verdict):
    /// GOAWAY with the scenario's reason at `goaway-after-requests`, else GOAWAY Shutdown when
    /// the verdict was Shutdown (the sink draining, or a scenario's `Shutdown` error), as APNs
    /// closes a connection it answered Shutdown.
    mutating func requestHandled(total: Int, rejection: APNsReason?) -> Action? {
        guard case .serving = phase else { return nil }
        if let limit = settings.faults.goAwayAfterRequests, total >= limit {
            return close(.goAway(settings.faults.goAwayReason))
        }
        return rejection == .shutdown ? close(.goAway(.shutdown)) : nil
    }

    /// Whether an answer with this verdict may change the stream limit (`answered` has nothing
    /// to say otherwise): the first acceptance, or a verdict that flips a throttled limit.
    func mayChangeStreams(accepted: Bool) -> Bool {
        accepted ? !streams.raised : settings.throttleAfterRejection && streams.raised
    }

    /// An answer went out: accepted (200) or rejected. `unacknowledged`: the SETTINGS this
    /// side has sent that the peer has not acknowledged.
    mutating func answered(accepted: Bool, unacknowledged: Int, now: UInt64) -> Action? {
        streams.observe(unacknowledged: unacknowledged, now: now)
        if accepted {
            guard !streams.raised else { return nil }
            return flip(raise: true, unacknowledged: unacknowledged, now: now)
        }
        guard settings.throttleAfterRejection, streams.raised else { return nil }
        return flip(raise: false, unacknowledged: unacknowledged, now: now)
    }

    /// The provider authenticated with its certificate: Apple's one stream until a valid token
    /// is a token connection's rule, so its streams are raised now, not at the first acceptance.
    mutating func certificateVerified(now: UInt64) -> Action? {
        streams.certificateAuthenticated = true
        guard !streams.raised else { return nil }
        streams.raised = true
        streams.settingsSent += 1
        return .setMaxConcurrentStreams(settings.maxConcurrentStreams)
    }

    private mutating func flip(raise: Bool, unacknowledged: Int, now: UInt64) -> Action? {
        guard streams.flip(raise: raise, unacknowledged: unacknowledged, now: now) else { return nil }
        return .setMaxConcurrentStreams(raise ? settings.maxConcurrentStreams : settings.initialMaxConcurrentStreams)
    }

    /// Ends the connection this way: the action that says so.
    private mutating func close(_ closing: Closing) -> Action {
        phase = .closing(closing)
        switch closing {
        case .aborted: return .abort
        case .goAway(let reason): return .goAway(reason)
        case .settingsTimeout: return .goAwaySettingsTimeout
        }
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
        guard case .serving = phase else { return nil }
        if let check = idleCheck, now >= check.at, let timeout = settings.idleTimeout {
            if check.activity == activity && load.openStreams == 0 && load.heldAnswers == 0 {
                // APNs closes idle connections too; a shared sink must not keep them forever.
                idleCheck = nil
                return close(.goAway(.idleTimeout))
            }
            idleCheck = (now + timeout, activity)
        }
        if let after = settings.faults.goAwayAfter, now >= openedAt + after.wholeNanoseconds {
            return close(.goAway(settings.faults.goAwayReason))
        }
        streams.observe(unacknowledged: load.unacknowledgedSettings, now: now)
        if let since = streams.flipsBlockedSince, now >= since + Self.settingsTimeout {
            return close(.settingsTimeout)
        }
        return nil
    }

    /// After `.resetIncompleteRequests`: the oldest request still arriving (its HEADERS'
    /// time; `nil`: none) sets when to look again.
    mutating func incompleteRequestsReset(oldestLeft: UInt64?, now: UInt64) {
        guard let timeout = settings.requestTimeout else { return }
        requestCheck = (oldestLeft ?? now) + timeout
    }

    /// When `timeAction` has something to look at next (`nil`: nothing timed).
    var nextDeadline: UInt64? {
        var earliest = requestCheck
        func consider(_ time: UInt64?) {
            guard let time else { return }
            earliest = earliest.map { min($0, time) } ?? time
        }
        guard case .serving = phase else { return earliest }
        if let after = settings.faults.goAwayAfter { consider(openedAt + after.wholeNanoseconds) }
        consider(idleCheck?.at)
        if let since = streams.flipsBlockedSince { consider(since + Self.settingsTimeout) }
        return earliest
    }
}
