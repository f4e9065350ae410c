import Atomics
import FanoutTokens

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

extension ArrivalTickets {
    /// The tokens ran out before the schedule did: every token was sent, and the run ended with
    /// arrivals left unclaimed. They are counted, not served late or silently dropped. `nil`
    /// when every arrival had a token (or the schedule has no end).
    var ranOut: LoadEngine.Report.TokensRanOut? {
        guard cut == nil, let planned = schedule.total, claimed < planned else { return nil }
        return LoadEngine.Report.TokensRanOut(
            arrivals: planned - claimed,
            at: .nanoseconds(Int64(schedule.offset(of: claimed) ?? 0)),
            planned: planned
        )
    }
}

extension ArrivalTickets {
    /// The queue passed `--max-backlog` and the schedule was cut: the arrivals after the
    /// ticket that cut it were not sent. `nil` when it was not cut.
    var backlogCut: LoadEngine.Report.BacklogCut? {
        guard let cut else { return nil }
        return LoadEngine.Report.BacklogCut(
            after: .nanoseconds(Int64(min(cut.at, UInt64(Int64.max)))),
            wait: .nanoseconds(Int64(min(cut.wait, UInt64(Int64.max)))),
            limit: .nanoseconds(Int64(min(backlogLimit, UInt64(Int64.max)))),
            arrivals: schedule.total.map { $0 - min($0, claimed) },
            planned: schedule.total
        )
    }
}
