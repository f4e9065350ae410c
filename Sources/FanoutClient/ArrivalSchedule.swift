import Atomics
import FanoutAPNs
import FanoutFiles
import FanoutNotation
import FanoutTokens

/// The open model's arrivals: when each notification is meant to be sent, whatever the server
/// does. A run is a list of stages, each moving the rate linearly from where the last one ended
/// to its target over its duration (k6's ramping arrival rate); a constant rate is one stage
/// that starts and ends at the same rate.
///
/// ```
///   rate ▲        ┌──────────┐
///        │       ╱            ╲          arrivals up to t: N(t) = ∫ rate
///        │      ╱              ╲         notification k is due at N⁻¹(k)
///        │─────╱                ╲
///        └──────────────────────────► t
///         stage 1 │ 2 │    3     │ 4 │
/// ```
public struct ArrivalSchedule: Sendable, Hashable, CustomStringConvertible {
    /// One stage: the rate moves from the previous stage's target (or the start rate) to
    /// `target` per second over `duration`.
    public struct Stage: Sendable, Hashable {
        public var duration: Duration
        public var target: Double

        public init(duration: Duration, target: Double) {
            self.duration = duration
            self.target = target
        }
    }

    public let startRate: Double
    public let stages: [Stage]
    /// Notifications the schedule holds: `nil` for a constant rate with no end (it lasts as
    /// long as the tokens do).
    public let total: UInt64?

    /// Precomputed per stage: where it starts in time (ns) and in arrivals, its rates.
    private let segments: [Segment]
    /// The part of the whole schedule this one is (`sharded(_:)`): its arrival k is arrival
    /// `shard.index − 1 + shard.count · k` of the whole.
    public let shard: TokenShard

    private struct Segment: Hashable {
        var start: Double
        var length: Double
        var arrivalsBefore: Double
        var from: Double
        var to: Double
    }

    /// The highest rate a schedule takes, per second: far beyond any machine (Fanout's sender
    /// does about 2·10⁵ a core), and low enough that a year of it counts exactly.
    public static let highestRate: Double = 1e9

    /// A constant `rate` per second, for `duration` (or until the tokens run out).
    public init(rate: Double, duration: Duration?) throws(ScheduleError) {
        guard rate > 0, rate <= Self.highestRate else {
            throw ScheduleError("a rate must be above 0 and at most \(Int(Self.highestRate)) per second, not \(rate)")
        }
        if let duration {
            try self.init(startRate: rate, stages: [Stage(duration: duration, target: rate)])
        } else {
            self.init(
                startRate: rate,
                stages: [],
                segments: [Segment(start: 0, length: .infinity, arrivalsBefore: 0, from: rate, to: rate)],
                total: nil
            )
        }
    }

    private init(
        startRate: Double,
        stages: [Stage],
        segments: [Segment],
        total: UInt64?,
        shard: TokenShard = .all
    ) {
        self.startRate = startRate
        self.stages = stages
        self.segments = segments
        self.total = total
        self.shard = shard
    }

    /// Shard i of N of this schedule: the arrivals k ≡ i − 1 (mod N), at the times the whole
    /// schedule gives them. N machines running shards 1…N from one start send exactly the
    /// whole schedule between them, each arrival once, so their merged latencies mean what a
    /// single generator's mean.
    ///
    /// ```
    ///  whole   0  1  2  3  4  5  6  7  8 …      (N = 3)
    ///  2/3        0        1        2    …      its arrival k is arrival 1 + 3k of the whole
    /// ```
    public func sharded(_ part: TokenShard) -> ArrivalSchedule {
        precondition(shard == .all, "a schedule is sharded once")
        guard part != .all else { return self }
        let phase = UInt64(part.index - 1)
        let stride = UInt64(part.count)
        return ArrivalSchedule(
            startRate: startRate,
            stages: stages,
            segments: segments,
            total: total.map { $0 > phase ? ($0 - phase + stride - 1) / stride : 0 },
            shard: part
        )
    }

    /// Ramps: from `startRate`, through each stage in turn.
    public init(startRate: Double, stages: [Stage]) throws(ScheduleError) {
        guard startRate >= 0, startRate <= Self.highestRate else {
            throw ScheduleError(
                "the start rate must be from 0 to \(Int(Self.highestRate)) per second, not \(startRate)"
            )
        }
        guard !stages.isEmpty else { throw ScheduleError("a ramp needs at least one stage") }
        var segments: [Segment] = []
        var time = 0.0
        var arrivals = 0.0
        var from = startRate
        for (index, stage) in stages.enumerated() {
            guard stage.target >= 0, stage.target <= Self.highestRate else {
                throw ScheduleError(
                    "stage \(index + 1): the target rate must be from 0 to \(Int(Self.highestRate)), not \(stage.target)"
                )
            }
            let length = Double(stage.duration.wholeNanoseconds)
            guard length > 0 else { throw ScheduleError("stage \(index + 1): the duration must be above 0") }
            guard time + length <= Double(DurationNotation.longest.wholeNanoseconds) else {
                throw ScheduleError("the stages last more than a year")
            }
            segments.append(
                Segment(start: time, length: length, arrivalsBefore: arrivals, from: from, to: stage.target)
            )
            time += length
            arrivals += (from + stage.target) / 2 * length / 1e9
            from = stage.target
        }
        guard arrivals >= 1 else { throw ScheduleError("the stages hold no arrival (every rate is 0)") }
        // An arrival lands at N(t) = k; a rounding error must not drop the last whole one.
        self.init(
            startRate: startRate,
            stages: stages,
            segments: segments,
            total: UInt64((arrivals + 1e-6).rounded(.down))
        )
    }

    /// How long the schedule lasts, if it ends.
    public var duration: Duration? {
        guard let last = segments.last, last.length.isFinite else { return nil }
        return .nanoseconds(Int64(last.start + last.length))
    }

    /// When notification `k` (from 0) is due, in nanoseconds from the start; `nil` past the end.
    public func offset(of k: UInt64) -> UInt64? {
        if let total, k >= total { return nil }
        let arrival = Double(UInt64(shard.index - 1) &+ UInt64(shard.count) &* k)
        var low = 0
        var high = segments.count - 1
        while low < high {
            let middle = (low + high + 1) / 2
            if segments[middle].arrivalsBefore <= arrival { low = middle } else { high = middle - 1 }
        }
        // The last stage starting at or before this arrival: one at rate 0 holds none, so the
        // search passes over it to the next.
        let segment = segments[low]
        let n = arrival - segment.arrivalsBefore
        // Arrivals into the stage after t ns: n(t) = from·t + (to − from)·t²/(2·length), per ns.
        let from = segment.from / 1e9
        let slope = (segment.to - segment.from) / 1e9 / segment.length
        let t: Double
        if abs(slope) < 1e-30 {
            t = from > 0 ? n / from : 0
        } else {
            let discriminant = max(0, from * from + 2 * slope * n)
            t = (discriminant.squareRoot() - from) / slope
        }
        return UInt64(max(0, (segment.start + min(t, segment.length)).rounded()))
    }

    public var description: String {
        shard == .all ? whole : "shard \(shard) of \(whole)"
    }

    /// The whole schedule's description.
    private var whole: String {
        if stages.isEmpty { return "\(Self.format(startRate))/s" }
        if stages.count == 1, stages[0].target == startRate {
            return "\(Self.format(startRate))/s for \(stages[0].duration)"
        }
        let steps = stages.map { "\($0.duration):\(Self.format($0.target))/s" }.joined(separator: ", ")
        return "from \(Self.format(startRate))/s: \(steps)"
    }

    static func format(_ rate: Double) -> String {
        rate == rate.rounded() ? String(Int(rate)) : String(rate)
    }
}

public struct ScheduleError: Error, Sendable, CustomStringConvertible {
    public var description: String
    init(_ description: String) { self.description = description }
}

/// The arrivals of a run as tickets that connections claim when they are due: each ticket is
/// one notification's intended send time. The schedule is dealt out in turn: ticket j belongs
/// to connection slot j mod N, so each connection carries an even share of the rate (as wrk2
/// and h2load give each connection rate ÷ connections), and a server that limits what one
/// connection carries shows its limit at N times that, not at the share of whichever
/// connection woke first.
///
/// ```
///  ticket   0  1  2  3  4  5  6  7  8 …        (N = 3 slots)
///  slot     0  1  2  0  1  2  0  1  2
///  slot 1 claims 1, 4, 7 … as each falls due. A ticket still unclaimed `stealDelay` after
///  it fell due (its connection is reconnecting, its streams are full, it has no tokens) goes
///  to whichever connection asks next, oldest first: `sweep` walks the tickets in order
///  behind the claims, so finding the oldest unclaimed one costs O(1) amortised.
/// ```
///
/// A slot whose connection has taken its last token is retired (`retire(slot:)`): its
/// tickets go to the others as soon as they fall due, not `stealDelay` late. At the end of a
/// run the token batches run out unevenly, and without it every ticket of a connection with
/// nothing left to send went out 2 ms late (1% of a 5-second run at 5,000/s: its send
/// lateness p99 was 2.0 ms, measured).
///
/// A ticket sent late has its latency counted from its intended time all the same
/// (coordinated omission corrected, as wrk2 does). The schedule starts when the first
/// connection asks for a ticket, so that connecting is not counted as the server's latency,
/// or at a given time (`--start-at`), before which no connection asks.
///
/// Tickets are claimed only when a stream is free, so when the offered rate is above what the
/// endpoint (or Fanout) carries, the overdue ones are the queue. A ticket claimed more than
/// `backlogLimit` after it fell due (`--max-backlog`) cuts the schedule there: it is the last
/// one handed out, and the arrivals after it are counted, not sent (`cut`). Without the cut,
/// 100,000,000/s for 1 s at 400,000/s went on sending for four minutes.
package final class ArrivalTickets: Sendable {
    let schedule: ArrivalSchedule
    /// Connection slots the tickets are dealt to.
    let slots: Int
    /// When the schedule started (uptime nanoseconds), 0 before the first claim.
    private let start = ManagedAtomic<UInt64>(0)
    /// Tickets each slot has had, in order: slot s's next is ticket s + N × taken[s].
    private let taken: [ManagedAtomic<UInt64>]
    /// Every ticket below it has been claimed.
    private let sweep = ManagedAtomic<UInt64>(0)
    private let claimedCount = ManagedAtomic<UInt64>(0)
    private let ended = ManagedAtomic(false)
    /// Slots whose tickets wait for no steal delay (their connections have no tokens left).
    private let retired: [ManagedAtomic<Bool>]
    /// How late a ticket may be claimed before the schedule is cut (nanoseconds).
    let backlogLimit: UInt64
    /// When the schedule was cut, from its start (nanoseconds + 1; 0: it was not), and how
    /// late the ticket that cut it was claimed.
    private let cutAt = ManagedAtomic<UInt64>(0)
    private let cutWait = ManagedAtomic<UInt64>(0)
    /// When the last ticket was claimed, from the start (nanoseconds + 1; 0: not yet).
    private let lastClaimAt = ManagedAtomic<UInt64>(0)

    /// How long past its due time a slot's ticket waits for its own connection before another
    /// takes it.
    static let stealDelay: UInt64 = 2_000_000

    /// `start`: when the schedule starts (uptime nanoseconds; `--start-at`), or 0 for when the
    /// first connection asks.
    init(schedule: ArrivalSchedule, slots: Int = 1, start: UInt64 = 0, backlogLimit: Duration? = nil) {
        self.schedule = schedule
        self.slots = max(1, slots)
        self.backlogLimit = backlogLimit.map { UInt64(max(0, $0.wholeNanoseconds)) } ?? .max
        self.start.store(start, ordering: .relaxed)
        taken = (0..<max(1, slots)).map { _ in ManagedAtomic(0) }
        retired = (0..<max(1, slots)).map { _ in ManagedAtomic(false) }
    }

    /// When the schedule started (uptime nanoseconds), `nil` before the first claim.
    var startedAt: UInt64? {
        let start = start.load(ordering: .relaxed)
        return start == 0 ? nil : start
    }

    /// `slot`'s connection will ask for no more tickets of its own (it has no tokens left):
    /// its tickets go to whichever connection asks once they are due.
    func retire(slot: Int) {
        retired[slot % slots].store(true, ordering: .relaxed)
    }

    enum Claim: Equatable {
        /// Send one notification, meant for this time.
        case due(UInt64)
        /// Nothing is due for this slot before then.
        case notYet(UInt64)
        /// Every ticket has been handed out (or the run ended).
        case exhausted
    }

    /// A ticket for the connection of `slot`: its own once due (by `until`: the end of its
    /// pacing window, `now` without one), else the oldest unclaimed one once it is `stealDelay`
    /// overdue. A connection asks only when it has a token to send.
    func claim(now: UInt64, slot: Int = 0, until: UInt64? = nil) -> Claim {
        var start = start.load(ordering: .relaxed)
        if start == 0 {
            let (exchanged, original) = self.start.compareExchange(expected: 0, desired: now, ordering: .relaxed)
            start = exchanged ? now : original
        }
        if ended.load(ordering: .relaxed) { return .exhausted }
        let own = takeOwn(slot % slots, start: start, now: max(now, until ?? now))
        if case .taken(let due) = own { return handOut(due, now: now, start: start) }
        let oldest = takeOldest(start: start, now: now)
        if case .taken(let due) = oldest { return handOut(due, now: now, start: start) }
        switch (own, oldest) {
        case (.later(let a), .later(let b)): return .notYet(min(a, b))
        case (.later(let at), _), (_, .later(let at)): return .notYet(at)
        default: return isExhausted ? .exhausted : .notYet(now + Self.stealDelay)
        }
    }

    /// A claimed ticket, which cuts the schedule when it is more than `backlogLimit` overdue:
    /// it still goes out (it was claimed, and its latency says how late), no ticket after it.
    @inline(__always)
    private func handOut(_ due: UInt64, now: UInt64, start: UInt64) -> Claim {
        if now > due, now - due > backlogLimit,
            cutAt.compareExchange(expected: 0, desired: now - min(now, start) + 1, ordering: .relaxed).exchanged
        {
            cutWait.store(now - due, ordering: .relaxed)
            ended.store(true, ordering: .relaxed)
        }
        return .due(due)
    }

    /// Counts a claimed ticket; the last of the schedule's notes when it went (`sendsEnded`).
    @inline(__always)
    private func count(now: UInt64, start: UInt64) {
        let before = claimedCount.loadThenWrappingIncrement(ordering: .relaxed)
        if let total = schedule.total, before + 1 == total {
            lastClaimAt.store(now - min(now, start) + 1, ordering: .relaxed)
        }
    }

    /// From the schedule's start to the claim of its last ticket (or the one that cut it): how
    /// long the arrivals took to go out, against the schedule's own length. `nil` before then.
    var sendsEnded: UInt64? {
        let last = lastClaimAt.load(ordering: .relaxed)
        if last > 0 { return last - 1 }
        return cut?.at
    }

    /// The schedule was cut (`backlogLimit`): when, from its start, and how late the ticket
    /// that cut it was claimed; `nil` when it was not.
    var cut: (at: UInt64, wait: UInt64)? {
        let at = cutAt.load(ordering: .relaxed)
        return at == 0 ? nil : (at - 1, cutWait.load(ordering: .relaxed))
    }

    private enum Take {
        case taken(UInt64)
        case later(UInt64)
        /// No ticket is left to look at.
        case none
    }

    /// The slot's next ticket, if it is due.
    private func takeOwn(_ slot: Int, start: UInt64, now: UInt64) -> Take {
        while true {
            let k = taken[slot].load(ordering: .relaxed)
            guard let offset = schedule.offset(of: UInt64(slot) + UInt64(slots) * k) else { return .none }
            if start + offset > now { return .later(start + offset) }
            if taken[slot].compareExchange(expected: k, desired: k + 1, ordering: .relaxed).exchanged {
                count(now: now, start: start)
                return .taken(start + offset)
            }
        }
    }

    /// The oldest unclaimed ticket, if it is `stealDelay` overdue (or due, when its owner is
    /// retired). Owners claim their tickets in order, so an unclaimed ticket at `sweep` is its
    /// owner's next.
    private func takeOldest(start: UInt64, now: UInt64) -> Take {
        while true {
            let j = sweep.load(ordering: .relaxed)
            guard let offset = schedule.offset(of: j) else { return .none }
            let owner = Int(j % UInt64(slots))
            let k = j / UInt64(slots)
            if taken[owner].load(ordering: .relaxed) > k {
                _ = sweep.compareExchange(expected: j, desired: j + 1, ordering: .relaxed)
                continue
            }
            let due = start + offset
            let free = due + (retired[owner].load(ordering: .relaxed) ? 0 : Self.stealDelay)
            if free > now { return .later(free) }
            if taken[owner].compareExchange(expected: k, desired: k + 1, ordering: .relaxed).exchanged {
                count(now: now, start: start)
                _ = sweep.compareExchange(expected: j, desired: j + 1, ordering: .relaxed)
                return .taken(due)
            }
        }
    }

    /// How far apart `slot`'s next two tickets are due (nanoseconds): the schedule's spacing
    /// times the slots, at the rate of the moment; `nil` past the schedule's end.
    func spacing(slot: Int) -> UInt64? {
        let slot = slot % slots
        let k = taken[slot].load(ordering: .relaxed)
        let next = UInt64(slot) + UInt64(slots) * k
        guard let a = schedule.offset(of: next), let b = schedule.offset(of: next + UInt64(slots)) else { return nil }
        return b - min(b, a)
    }

    /// Ends the schedule early: no more tickets (used when the tokens run out).
    func end() { ended.store(true, ordering: .relaxed) }

    /// Tickets handed out.
    var claimed: UInt64 { claimedCount.load(ordering: .relaxed) }

    var isExhausted: Bool {
        if ended.load(ordering: .relaxed) { return true }
        guard let total = schedule.total else { return false }
        return claimed >= total
    }
}

extension ArrivalSchedule {
    /// The schedule the options ask for: `--rate R` alone runs at R until the tokens run out,
    /// with `--duration D` for D; `--stage D:R` (repeated) ramps from `--rate` (or 0) to each
    /// stage's R over its D. `nil` (no rate, no stage) is the closed model.
    public static func parse(
        rate: EventRate?,
        duration: Duration?,
        stages: [String]
    ) throws(ScheduleError) -> ArrivalSchedule? {
        var start: Double?
        if let rate {
            guard rate.count > 0 else {
                throw ScheduleError("--rate: \(rate) is not a rate above 0; \(EventRate.hint)")
            }
            start = try perSecond(rate, what: "--rate")
        }
        guard !stages.isEmpty else {
            guard let start else { return nil }
            if let duration, duration <= .zero {
                throw ScheduleError("--duration: \(DurationNotation.format(duration)) is not a duration above 0")
            }
            return try ArrivalSchedule(rate: start, duration: duration)
        }
        if duration != nil {
            throw ScheduleError("--duration and --stage do not go together: the stages' durations make the run's")
        }
        var parsed: [Stage] = []
        for (index, text) in stages.enumerated() {
            let parts = text.split(separator: ":", maxSplits: 1)
            guard parts.count == 2 else {
                throw ScheduleError("--stage \(text): a stage is DURATION:RATE, like 30s:5000/s")
            }
            let what = "--stage \(index + 1) (\(text))"
            parsed.append(
                Stage(
                    duration: try parseDuration(parts[0], what: what),
                    target: try perSecond(String(parts[1]), what: what, allowingZero: true)
                )
            )
        }
        return try ArrivalSchedule(startRate: start ?? 0, stages: parsed)
    }

    /// `N` or `N/WINDOW` (`5000`, `5000/s`, `300/1m`: `EventRate`) as events per second.
    public static func perSecond(
        _ text: String,
        what: String,
        allowingZero: Bool = false
    ) throws(ScheduleError) -> Double {
        guard let rate = EventRate(parsing: text), rate.count > 0 || allowingZero else {
            throw ScheduleError("\(what): \(text) is not a rate; \(EventRate.hint)")
        }
        return try perSecond(rate, what: what)
    }

    /// `rate` per second, checked against the highest rate.
    public static func perSecond(_ rate: EventRate, what: String) throws(ScheduleError) -> Double {
        guard rate.perSecond <= highestRate else {
            throw ScheduleError("\(what): \(rate) is above the highest rate, \(Int(highestRate)) per second")
        }
        return rate.perSecond
    }

    static func parseDuration(_ text: some StringProtocol, what: String) throws(ScheduleError) -> Duration {
        guard let duration = DurationNotation.parse(text), duration > .zero else {
            throw ScheduleError(
                "\(what): \(TextLines.quoted(text)) is not a duration above 0; \(DurationNotation.hint)"
            )
        }
        return duration
    }
}
