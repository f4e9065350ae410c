import FanoutEndpoint
import FanoutNotation
import FanoutRandom

/// The load engine's connections as slots, a plain state machine that returns actions for
/// `RunDriver` to carry out: which slot to (re)open and when, and when to give up.
///
/// ```
///            start ──► connecting ──► (connection ends) ──┬─ no work left ──────────► idle
///                          ▲                              │
///                          │                              ├─ made progress ─────────► waiting
///                          │                              │   (jitter ≤ 50 ms, so a GOAWAY to
///                          │                              │    every connection does not bring
///                          │                              │    them back in one instant)
///                          │                              │
///                          │                              ├─ no progress, n in a row ► waiting
///                          │                              │   (full jitter ≤ 50 ms × 2^n, ≤ 5 s)
///                          │                              │
///                          │                              └─ no progress, limit ────► gave up
///                          └────────────── waiting ◄─┘
///   a connection answered while others wait after failures ──► those try again now, and
///   or gave up                                                   those that gave up come back
///                                                              (jitter ≤ 50 ms): the endpoint is back
///   work handed back while every slot is idle ──► one idle slot connects again at once
///   a slot gives up while no other is connecting or waiting ──► an idle one connects again,
///   or, with none idle, the pool gives up
/// ```
///
/// Failures are counted per slot: one slot's unlucky attempts do not end a run whose other
/// connections make progress, and a slot keeps reconnecting while its own attempts remain.
///
/// With a `connectTimeout`, the pool first has to reach the endpoint: until a connection is
/// answered (or makes progress), the rules above wait, and the endpoint's failures decide:
///
/// ```
///   not reached ──► a failure retrying cannot heal (EndpointFailure.isHealable) ──► unreachable
///        │      ──► a healable one (refused, timed out) ──► again after the backoff, until
///        │                                                  connectTimeout since start ──► unreachable
///        │      ──► a first answer refusing the credentials (403; FCM's 401 for good): the slot
///        │          is forbidden, its connection sends nothing more; every slot still in play
///        │          forbidden (the rest idle or given up) ──► unreachable
///        └─ an accepted answer, or progress on a slot not forbidden ──► reached: the rules above
/// ```
struct ConnectionPool {
    enum SlotState: Equatable {
        /// A connection is being opened or is open.
        case connecting
        /// Waiting for its reconnect delay to pass.
        case waiting
        /// Done: nothing was left to send when its connection ended.
        case idle
        /// Ended `maxFailuresInARow` times in a row without progress.
        case gaveUp
    }

    enum Action: Equatable {
        /// Open a connection for `slot` once `delay` nanoseconds have passed.
        case open(slot: Int, delay: UInt64)
        /// Open `slot` after `delay` instead of when its current wait ends, if that wait has not
        /// ended yet (the engine cannot take back a timer that already fired).
        case hurry(slot: Int, delay: UInt64)
        /// Every slot gave up while work remains, or the endpoint could not be reached: fail
        /// what is left.
        case giveUp(GiveUp.Why)
        case none
    }

    private(set) var slots: [SlotState]
    private var failuresInARow: [Int]
    let maxFailuresInARow: Int
    /// The reconnect delay ceiling after progress, and the first after a failure (ns).
    let baseDelay: UInt64
    let maxDelay: UInt64
    private var random: SeededRandom
    private var cancelled = false
    /// How long the endpoint may take to be reached (ns); `nil`: no such phase.
    let connectTimeout: UInt64?
    /// When `connectTimeout` runs out (uptime ns), set by `start(now:)`.
    private var connectDeadline: UInt64?
    /// Whether a connection has been answered or made progress.
    private(set) var reached = false
    /// The latest reason a connection did not get as far as an answer.
    private(set) var lastFailure: EndpointFailure?
    /// Slots whose connection's first answer refused its credentials (before `reached`), and
    /// that refusal: their connections send nothing more until the run decides.
    private var forbidden: Set<Int> = []
    private var refusal: EndpointFailure?

    init(
        slots count: Int,
        maxFailuresInARow: Int = 8,
        baseDelay: Duration = .milliseconds(50),
        maxDelay: Duration = .seconds(5),
        connectTimeout: Duration? = nil,
        seed: UInt64 = 0xFA_2007
    ) {
        slots = Array(repeating: .idle, count: max(1, count))
        failuresInARow = Array(repeating: 0, count: max(1, count))
        self.maxFailuresInARow = max(1, maxFailuresInARow)
        self.baseDelay = baseDelay.wholeNanoseconds
        self.maxDelay = maxDelay.wholeNanoseconds
        self.connectTimeout = connectTimeout.map { UInt64(max(0, $0.wholeNanoseconds)) }
        random = SeededRandom(seed: seed)
    }

    /// Slots with a connection open or on its way.
    var active: Int { slots.count { $0 == .connecting || $0 == .waiting } }

    /// Opens every slot at once; `now` (uptime ns) starts the connect timeout.
    mutating func start(now: UInt64 = 0) -> [Action] {
        connectDeadline = connectTimeout.map { now &+ $0 }
        return slots.indices.map { slot in
            slots[slot] = .connecting
            return .open(slot: slot, delay: 0)
        }
    }

    /// The connection of `slot` ended (or could not be opened); `workRemains` says whether
    /// anything is left for a connection to send; `failure`, what kept it from an answer, if
    /// it is known; `now`, uptime ns.
    mutating func connectionEnded(
        slot: Int,
        madeProgress: Bool,
        workRemains: Bool,
        failure: EndpointFailure? = nil,
        now: UInt64 = 0
    ) -> Action {
        failuresInARow[slot] = madeProgress ? 0 : failuresInARow[slot] + 1
        // A connection whose credentials were refused sent requests, and got nowhere.
        if madeProgress && !forbidden.contains(slot) { reached = true }
        if let failure { lastFailure = failure }
        guard !cancelled, workRemains else {
            slots[slot] = .idle
            return refusedEverywhere.map { unreachable($0, ended: nil) } ?? .none
        }
        let failures = failuresInARow[slot]
        if !reached, let connectDeadline {
            if let failure, !failure.isHealable { return unreachable(failure, ended: slot) }
            guard now < connectDeadline else {
                let failure = lastFailure ?? EndpointFailure(.connectFailed, "no connection got as far as an answer")
                return unreachable(failure, ended: slot)
            }
            slots[slot] = .waiting
            let ceiling = min(maxDelay, baseDelay << UInt64(min(failures, 10)))
            return .open(slot: slot, delay: min(random.next() % (ceiling + 1), connectDeadline - now))
        }
        guard failures < maxFailuresInARow else {
            slots[slot] = .gaveUp
            if let refusal = refusedEverywhere { return unreachable(refusal, ended: nil) }
            guard active == 0 else { return .none }
            // The others finished earlier; work came back since: an idle slot takes it.
            if let idle = slots.firstIndex(of: .idle) {
                slots[idle] = .connecting
                return .open(slot: idle, delay: 0)
            }
            return .giveUp(.noProgress(slots: slots.count, times: maxFailuresInARow, last: lastFailure))
        }
        slots[slot] = .waiting
        let ceiling = failures == 0 ? baseDelay : min(maxDelay, baseDelay << UInt64(min(failures, 10)))
        return .open(slot: slot, delay: random.next() % (ceiling + 1))
    }

    /// A connection of `slot` received its first answer: the endpoint is up. Slots waiting out
    /// a backoff after failures try again within `baseDelay`, so an outage costs its length
    /// and not the backoff that grew during it; slots that gave up during it (their jittered
    /// delays can add up to less than the outage) come back too.
    ///
    /// `forbidden`: the answer refused the connection's credentials. Before the endpoint is
    /// reached, that answer on every slot's connection gives up.
    mutating func connectionAnswered(slot: Int, forbidden refusal: EndpointFailure? = nil) -> [Action] {
        if let refusal, !reached, connectDeadline != nil {
            lastFailure = refusal
            self.refusal = refusal
            forbidden.insert(slot)
            return refusedEverywhere.map { [unreachable($0, ended: nil)] } ?? []
        }
        reached = true
        failuresInARow[slot] = 0
        guard !cancelled else { return [] }
        return slots.indices.compactMap { other in
            let delay = random.next() % (baseDelay + 1)
            switch slots[other] {
            case .waiting where failuresInARow[other] > 0:
                failuresInARow[other] = 0
                return .hurry(slot: other, delay: delay)
            case .gaveUp:
                failuresInARow[other] = 0
                slots[other] = .waiting
                return .open(slot: other, delay: delay)
            default:
                return nil
            }
        }
    }

    /// The delay of a `.open` action has passed and the connection is being opened.
    mutating func opening(slot: Int) {
        if slots[slot] == .waiting { slots[slot] = .connecting }
    }

    /// Work was handed back: when no slot is connecting or waiting, one idle slot connects
    /// again at once (a connection that found the feed empty may have just closed).
    mutating func workReturned() -> Action {
        guard !cancelled, active == 0, let slot = slots.firstIndex(of: .idle) else { return .none }
        slots[slot] = .connecting
        failuresInARow[slot] = 0
        return .open(slot: slot, delay: 0)
    }

    /// No more connections are opened: slots waiting to reconnect are done now (their timers,
    /// when they fire, open nothing).
    mutating func cancel() {
        cancelled = true
        for slot in slots.indices where slots[slot] == .waiting { slots[slot] = .idle }
    }

    /// The refusal, when before the endpoint is reached every slot still in play had its
    /// credentials refused (the rest went idle or gave up): nothing more can be learnt, and the
    /// refused connections wait for a decision.
    private var refusedEverywhere: EndpointFailure? {
        guard !reached, !cancelled, let refusal,
            slots.indices.allSatisfy({ forbidden.contains($0) || slots[$0] == .idle || slots[$0] == .gaveUp })
        else { return nil }
        return refusal
    }

    /// Gives up on an endpoint never reached: every slot is done (`ended`'s connection has
    /// ended; those still open end when the engine closes them).
    private mutating func unreachable(_ failure: EndpointFailure, ended: Int?) -> Action {
        if let ended { slots[ended] = .idle }
        cancel()
        return .giveUp(.unreachable(failure))
    }
}
