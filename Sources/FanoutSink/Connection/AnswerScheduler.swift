import FanoutScenarioTerms

/// When each answer goes out, and the answers waiting for their time: the scenario's latency
/// (a draw when it has a spread), the connection's throughput ceiling (`--connection-rate`'s
/// pacing), the stall windows, and the coalescing of drawn holds (`AnswerCoalescing`). Told the
/// time a request was received; reads no clock.
///
/// ```
///   received ─► + latency draw ─► ≥ next paced slot ─► outside stall windows ─► due
///                    │ (drawn, not moved by a floor)
///                    └─────────────► nearest coalescing instant ────────────────┘
///   due > now: held (a min-heap on due) until `popDue(now:)`; else answered at once
/// ```
struct AnswerScheduler {
    private let latency: LatencyDistribution?
    /// Whether the latency is drawn from a spread (`LatencyDistribution.hasSpread`), asked
    /// once: an empirical one's answer builds a set.
    private let latencyHasSpread: Bool
    private let connectionRate: Rate?
    /// Stall windows of `length` every `every` nanoseconds, from `every` after `startedAt`.
    private let stall: (every: UInt64, length: UInt64)?
    private let startedAt: UInt64
    private let coalescing: AnswerCoalescing
    /// With a per-connection throughput ceiling: when the next answer may go out.
    private var nextPacedAnswer: UInt64 = 0
    /// Answers held back by injected latency or a stall.
    private var pending = PendingResponses()
    /// Streams reset while answers were held: some of the held answers may be for them.
    private var resetsWhileHolding = 0

    init(scenario: SinkScenario, coalescing: AnswerCoalescing, startedAt: UInt64) {
        latency = scenario.latency
        latencyHasSpread = scenario.latency?.hasSpread ?? false
        connectionRate = scenario.connectionRate
        stall = scenario.stall.map { ($0.every.wholeNanoseconds, $0.length.wholeNanoseconds) }
        self.startedAt = startedAt
        self.coalescing = coalescing
    }

    /// Answers held now.
    var held: Int { pending.count }
    /// When the earliest held answer is due.
    var earliest: UInt64? { pending.earliest }

    /// When the answer to a request received at `received` goes out: after the injected
    /// latency, no sooner than the connection's throughput ceiling allows, and not inside a
    /// stall window. A hold drawn from a spread (which neither the pacing nor a stall moved)
    /// moves to its coalescing window's nearest instant, so that answers drawn close together
    /// go out together; a floor (fixed, a stall's end, the pacing) is kept to the nanosecond.
    mutating func due(received: UInt64, _ random: inout SinkRandom) -> UInt64 {
        let drawnAt = received + (latency?.sample(&random) ?? 0)
        var due = drawnAt
        if let rate = connectionRate {
            due = max(due, nextPacedAnswer)
            nextPacedAnswer = due + rate.window.wholeNanoseconds / UInt64(rate.limit)
        }
        if let stall {
            due = Self.outsideStalls(due, startedAt: startedAt, every: stall.every, length: stall.length)
        }
        guard latencyHasSpread, due == drawnAt, due > received else { return due }
        return AnswerCoalescing.nearest(due, shift: coalescing.shift(forHold: due - received))
    }

    /// `due`, or the end of the stall window it falls in (windows of `length` every `every`
    /// nanoseconds, the first `every` after `startedAt`).
    static func outsideStalls(_ due: UInt64, startedAt: UInt64, every: UInt64, length: UInt64) -> UInt64 {
        let elapsed = due - min(due, startedAt)
        guard every > 0, elapsed >= every, elapsed % every < length else { return due }
        return due + length - elapsed % every
    }

    mutating func hold(_ entry: PendingResponse) {
        pending.push(entry)
    }

    /// Removes and returns the earliest held answer if it is due at `now`.
    mutating func popDue(now: UInt64) -> PendingResponse? {
        pending.popDue(now: now)
    }

    /// A stream was reset. A held answer for a reset stream would never be sent: once resets
    /// could account for half of what is held, the answers of streams no longer open
    /// (`isOpen`) are dropped, so a client that opens and resets streams (rapid reset) cannot
    /// make the heap grow past twice what is open.
    mutating func streamReset(isOpen: (UInt32) -> Bool) {
        guard pending.count > 0 else { return }
        resetsWhileHolding += 1
        guard resetsWhileHolding >= 64, 2 * resetsWhileHolding >= pending.count else { return }
        pending.removeAll { !isOpen($0.stream) }
        resetsWhileHolding = 0
    }
}
