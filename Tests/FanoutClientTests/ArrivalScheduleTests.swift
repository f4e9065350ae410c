import FanoutNotation
import FanoutTestSupport
import FanoutTokens
import Foundation
import Testing

@testable import FanoutClient

/// A millisecond, and the made-up clock's reading when the slotted tickets below start.
private let ms: UInt64 = 1_000_000
private let t: UInt64 = 1_000 * ms

/// The open model's schedule: when each notification is due, against the arithmetic of rates.
struct ArrivalScheduleTests {
    /// Tickets for 1,000 a second over `milliseconds`, dealt to `slots`, started by slot 0's first
    /// claim at `t` (which must be due at once).
    static func started(lasting milliseconds: Int64, slots: Int) throws -> ArrivalTickets {
        let tickets = ArrivalTickets(
            schedule: try ArrivalSchedule(rate: 1000, duration: .milliseconds(milliseconds)),
            slots: slots
        )
        #expect(tickets.claim(now: t, slot: 0) == .due(t))
        return tickets
    }

    @Test func aConstantRateSpacesArrivalsEvenly() throws {
        let schedule = try ArrivalSchedule(rate: 4000, duration: .seconds(2))
        #expect(schedule.total == 8000)
        #expect(schedule.duration == .seconds(2))
        #expect(schedule.offset(of: 0) == 0)
        #expect(schedule.offset(of: 1) == 250_000)
        #expect(schedule.offset(of: 4000) == 1_000_000_000)
        #expect(schedule.offset(of: 7999) == 1_999_750_000)
        #expect(schedule.offset(of: 8000) == nil)
    }

    @Test func aRateWithoutDurationLastsAsLongAsTheTokens() throws {
        let schedule = try ArrivalSchedule(rate: 3, duration: nil)
        #expect(schedule.total == nil)
        #expect(schedule.duration == nil)
        #expect(schedule.offset(of: 3_000_000) == 1_000_000_000_000_000)
    }

    @Test func aRampPutsArrivalsWhereTheIntegralOfItsRateSays() throws {
        // 0 → 1000/s over 2 s: N(t) = 250 t², so arrival k is due at √(k / 250) s.
        let schedule = try ArrivalSchedule(startRate: 0, stages: [.init(duration: .seconds(2), target: 1000)])
        #expect(schedule.total == 1000)
        for k: UInt64 in [0, 1, 10, 250, 500, 999] {
            let expected = (Double(k) / 250).squareRoot() * 1e9
            let offset = Double(try #require(schedule.offset(of: k)))
            #expect(abs(offset - expected) < 1000, "arrival \(k): \(offset) ns, expected \(expected)")
        }
    }

    /// A campaign's parts (`run --fleet` with the open model): every rate times the part, so two
    /// parts that add up to one hold the whole's arrivals, second by second, each spread over
    /// the whole schedule; a part of nothing or of more than the whole is refused.
    @Test func partsOfAScheduleHoldTheWholesArrivalsBetweenThem() throws {
        let ramp = try ArrivalSchedule(
            startRate: 0,
            stages: [.init(duration: .seconds(2), target: 1000), .init(duration: .seconds(3), target: 1000)]
        )
        let constant = try ArrivalSchedule(rate: 4000, duration: .seconds(10))
        for whole in [ramp, constant] {
            let total = try #require(whole.total)
            let apns = try whole.scaled(by: 0.55)
            let fcm = try whole.scaled(by: 0.45)
            let (a, f) = (try #require(apns.total), try #require(fcm.total))
            #expect(a + f >= total - 1 && a + f <= total, "\(whole): \(a) + \(f) of \(total)")
            #expect(apns.duration == whole.duration && fcm.duration == whole.duration)
            // Up to any moment, the parts have had their shares of the whole's arrivals.
            for k in stride(from: UInt64(0), to: total, by: Int(total / 7)) {
                let t = try #require(whole.offset(of: k))
                // The part's arrivals due by t: the first one later, found by halving.
                let due = { (part: ArrivalSchedule, count: UInt64) -> Int in
                    var (low, high) = (UInt64(0), count)
                    while low < high {
                        let middle = (low + high) / 2
                        if (part.offset(of: middle) ?? .max) > t { high = middle } else { low = middle + 1 }
                    }
                    return Int(low)
                }
                let before = due(apns, a) + due(fcm, f)
                #expect(abs(before - Int(k)) <= 2, "\(whole): \(before) of the parts' arrivals by the whole's \(k)")
            }
        }
        // A half of one device: 49 × (1/49) is a rounding error short of one arrival in doubles.
        let one = try ArrivalSchedule(rate: 1, duration: .seconds(49)).scaled(by: 1.0 / 49)
        #expect(one.total == 1 && one.offset(of: 0) == 0)
        let endless = try ArrivalSchedule(rate: 1000, duration: nil)
        #expect(try endless.scaled(by: 0.25).offset(of: 250) == 1_000_000_000)
        #expect(try endless.scaled(by: 0.25).total == nil)
        for factor in [0, -0.5, 1.5] {
            #expect(throws: ScheduleError.self) { try constant.scaled(by: factor) }
        }
    }

    /// A scaled rehearsal's fan-out (`--sample`): the same rates over a share of the time, so the
    /// share of the arrivals, the k-th arrival at share × its time in the whole.
    @Test func aCompressedScheduleKeepsItsRatesOverAShareOfTheTime() throws {
        let ramp = try ArrivalSchedule(
            startRate: 0,
            stages: [.init(duration: .seconds(20), target: 1000), .init(duration: .seconds(30), target: 1000)]
        )
        let sample = try ramp.compressed(to: 0.1)
        #expect(sample.duration == .seconds(5) && sample.stages.map(\.target) == [1000, 1000])
        #expect(ramp.total == 40_000 && sample.total == 4_000)
        // The rate where the ramp ends: 1,000/s in both, at 20 s and at 2 s.
        let whole = try #require(ramp.offset(of: 10_000))
        let part = try #require(sample.offset(of: 1_000))
        #expect(whole == 20_000_000_000 && abs(Int64(part) - 2_000_000_000) <= 1_000)
        let endless = try ArrivalSchedule(rate: 500, duration: nil)
        #expect(try endless.compressed(to: 0.01) == endless)
        for share in [0, -0.5, 1.5] {
            #expect(throws: ScheduleError.self) { try ramp.compressed(to: share) }
        }
    }

    @Test func stagesFollowOneAnotherAndAPauseHoldsNoArrival() throws {
        // 10 s at 100/s (1000 arrivals), 5 s at 0 (a pause), then 100 → 300/s over 2 s (400).
        let schedule = try ArrivalSchedule(
            startRate: 100,
            stages: [
                .init(duration: .seconds(10), target: 100),
                .init(duration: .seconds(5), target: 0),
                .init(duration: .seconds(1), target: 0),
                .init(duration: .seconds(2), target: 300),
            ]
        )
        // The 100 → 0 ramp over 5 s holds 250 arrivals; 0 → 0 none; 0 → 300 over 2 s 300.
        #expect(schedule.total == 1000 + 250 + 300)
        #expect(schedule.offset(of: 999) == 9_990_000_000)
        // Arrivals in the 100 → 0 ramp: N(t) = 100 t − 10 t², so k = 1000 + 90 at t = 1 s.
        #expect(schedule.offset(of: 1090).map { abs(Int64($0) - 11_000_000_000) < 1000 } == true)
        // The first arrival after the pause is at its end, 16 s in.
        #expect(schedule.offset(of: 1250).map { abs(Int64($0) - 16_000_000_000) < 1000 } == true)
        #expect(schedule.duration == .seconds(18))
        // Due times never go backwards.
        var last: UInt64 = 0
        for k in 0..<schedule.total! {
            let offset = try #require(schedule.offset(of: k))
            #expect(offset >= last)
            last = offset
        }
    }

    /// `--shard i/N` splits the open model's schedule as it splits the tokens: shard i sends
    /// arrivals k ≡ i − 1 (mod N) at the whole schedule's times, so the shards together are
    /// exactly the whole, each arrival once.
    @Test(arguments: [1, 3, 4, 7])
    func theShardsOfAScheduleAreTheWholeScheduleEachArrivalOnce(count: Int) throws {
        let schedules = [
            try ArrivalSchedule(rate: 4000, duration: .milliseconds(2501)),
            try ArrivalSchedule(
                startRate: 100,
                stages: [.init(duration: .seconds(1), target: 3000), .init(duration: .milliseconds(700), target: 0)]
            ),
        ]
        for whole in schedules {
            let total = try #require(whole.total)
            var union: [UInt64] = []
            for index in 1...count {
                let shard = whole.sharded(try TokenShard(index, of: count))
                let size = try #require(shard.total)
                // Sizes differ by at most one, the first shards the larger.
                #expect(size == (total + UInt64(count - index)) / UInt64(count), "\(shard)")
                for k in 0..<size {
                    let offset = try #require(shard.offset(of: k))
                    #expect(offset == whole.offset(of: UInt64(index - 1) + UInt64(count) * k))
                    union.append(offset)
                }
                #expect(shard.offset(of: size) == nil)
            }
            #expect(union.count == Int(total))
            #expect(union.sorted() == (0..<total).map { whole.offset(of: $0)! })
        }
    }

    @Test func aShardSaysWhichPartOfTheScheduleItIs() throws {
        let whole = try ArrivalSchedule(rate: 20000, duration: .seconds(10))
        let shard = whole.sharded(try TokenShard(2, of: 4))
        #expect(shard.description == "shard 2/4 of \(whole)")
        #expect(shard.total == 50000)
        #expect(shard.duration == whole.duration)
        #expect(whole.sharded(.all) == whole)
        // An endless schedule shards endlessly.
        let endless = try ArrivalSchedule(rate: 10, duration: nil).sharded(try TokenShard(3, of: 5))
        #expect(endless.total == nil)
        #expect(endless.offset(of: 1) == 700_000_000)
    }

    @Test func theOptionsParseIntoSchedules() throws {
        #expect(try ArrivalSchedule.parse(rate: nil, duration: nil, stages: []) == nil)
        #expect(
            try ArrivalSchedule.parse(rate: EventRate(parsing: "5000/s"), duration: .seconds(10), stages: [])?.total
                == 50_000
        )
        #expect(
            try ArrivalSchedule.parse(rate: EventRate(parsing: "300/1m"), duration: .seconds(60), stages: [])?.total
                == 300
        )
        #expect(try ArrivalSchedule.parse(rate: EventRate(parsing: "100"), duration: nil, stages: [])?.total == nil)
        let ramp = try #require(
            try ArrivalSchedule.parse(rate: nil, duration: nil, stages: ["10s:1000/s", "10s:1000"])
        )
        #expect(ramp.total == 5000 + 10_000)
        #expect(ramp.description == "from 0/s: 10.0 seconds:1000/s, 10.0 seconds:1000/s")
    }

    @Test(
        arguments: [
            (nil, nil, ["10s"], "--stage 10s: a stage is DURATION:RATE, like 30s:5000/s"),
            ("0", nil, [], "--rate: 0 is not a rate above 0; write N or N/WINDOW, like 5000/s or 300/1m"),
            ("0/1m", nil, [], "--rate: 0/1m is not a rate above 0; write N or N/WINDOW, like 5000/s or 300/1m"),
            ("100", "0s", [], "--duration: 0s is not a duration above 0"),
            (
                "100", "10s", ["5s:100"],
                "--duration and --stage do not go together: the stages' durations make the run's"
            ),
            (
                nil, nil, ["0s:100"],
                "--stage 1 (0s:100): 0s is not a duration above 0; write it like 250us, 5ms, 1.5s, 2m or 1h, at most a year (8784h)"
            ),
            (nil, nil, ["5s:0"], "the stages hold no whole arrival (every rate 0, or too low for one)"),
            ("1e300", "10s", [], "--rate: 1e300 is above the highest rate, 1000000000 per second"),
            (
                nil, nil, ["4000h:100", "4000h:100", "4000h:100"],
                "the stages last more than a year"
            ),
        ] as [(String?, String?, [String], String)]
    )
    func badOptionsSayWhatIsWrong(rate: String?, duration: String?, stages: [String], message: String) throws {
        let rate = try rate.map { try #require(EventRate(parsing: $0)) }
        let duration = try duration.map { try #require(DurationNotation.parse($0)) }
        #expect {
            _ = try ArrivalSchedule.parse(rate: rate, duration: duration, stages: stages)
        } throws: { error in
            "\(error)" == message
        }
    }

    /// Rates in the one notation the sender's options and the sink's scenario files share.
    @Test func ratesAreWrittenOneWay() throws {
        for (text, perSecond) in [("5000", 5000.0), ("5000/s", 5000), ("300/1m", 5), ("10/500ms", 20), ("0.5/s", 0.5)] {
            #expect(EventRate(parsing: text)?.perSecond == perSecond, "\(text)")
        }
        for text in ["fast", "", "5000/", "5000/0s", "5000/soon", "-1/s", "1/2/3", "nan", "inf/s"] {
            #expect(EventRate(parsing: text) == nil, "\(text)")
        }
        #expect(EventRate(parsing: "300/1m")?.description == "300/1m")
        #expect(EventRate(parsing: " 5000/s ")?.description == "5000/s")
        #expect(EventRate(count: 300, window: .seconds(60)).description == "300/1m")
        #expect(EventRate(count: 2.5).description == "2.5")
    }

    @Test func ticketsAreHandedOutOnceEachWhenDue() throws {
        let tickets = ArrivalTickets(schedule: try ArrivalSchedule(rate: 1000, duration: .milliseconds(5)))
        // The schedule starts at the first claim.
        #expect(tickets.claim(now: 1_000_000_000) == .due(1_000_000_000))
        #expect(tickets.claim(now: 1_000_000_000) == .notYet(1_001_000_000))
        #expect(tickets.claim(now: 1_002_500_000) == .due(1_001_000_000))
        #expect(tickets.claim(now: 1_002_500_000) == .due(1_002_000_000))
        #expect(!tickets.isExhausted)
        #expect(tickets.claim(now: 1_009_000_000) == .due(1_003_000_000))
        #expect(tickets.claim(now: 1_009_000_000) == .due(1_004_000_000))
        #expect(tickets.claim(now: 1_009_000_000) == .exhausted)
        #expect(tickets.isExhausted)
    }

    /// The queue for streams is the overdue tickets: one claimed more than the backlog limit
    /// after it fell due cuts the schedule. It still goes out (claimed, its latency says how
    /// late); none after it does, the arrivals left are counted, and the sends end there.
    @Test func aTicketClaimedPastTheBacklogLimitCutsTheSchedule() throws {
        let tickets = ArrivalTickets(
            schedule: try ArrivalSchedule(rate: 1000, duration: .milliseconds(10)),
            backlogLimit: .milliseconds(3)
        )
        #expect(tickets.claim(now: t) == .due(t))
        // 3 ms late is at the limit, not past it.
        #expect(tickets.claim(now: t + 4 * ms) == .due(t + 1 * ms))
        #expect(tickets.cut == nil && tickets.sendsEnded == nil)
        #expect(tickets.claim(now: t + 6 * ms) == .due(t + 2 * ms))
        #expect(tickets.claim(now: t + 6 * ms) == .exhausted)
        let cut = try #require(tickets.backlogCut)
        #expect(cut.after == .milliseconds(6) && cut.wait == .milliseconds(4) && cut.limit == .milliseconds(3))
        #expect(cut.arrivals == 7 && cut.planned == 10)
        #expect(tickets.sendsEnded == 6 * ms)
        // Not also "the tokens ran out".
        #expect(tickets.ranOut == nil)
    }

    /// The last ticket's claim is when the sends ended: on time when the schedule was kept.
    @Test func theLastTicketsClaimIsWhenTheSendsEnded() throws {
        let tickets = ArrivalTickets(schedule: try ArrivalSchedule(rate: 1000, duration: .milliseconds(3)))
        #expect(tickets.claim(now: t) == .due(t))
        #expect(tickets.claim(now: t + 1 * ms) == .due(t + 1 * ms))
        #expect(tickets.sendsEnded == nil)
        #expect(tickets.claim(now: t + 7 * ms) == .due(t + 2 * ms))
        #expect(tickets.sendsEnded == 7 * ms)
        #expect(tickets.backlogCut == nil)
    }

    /// Ticket j is slot j mod 3's: each connection gets its share when it falls due; a ticket
    /// its owner leaves 2 ms overdue goes to the next connection that asks, oldest first.
    @Test func ticketsAreDealtToSlotsInTurnAndOverdueOnesTakenByNeighbours() throws {
        let tickets = try Self.started(lasting: 9, slots: 3)
        // Slot 0's next is ticket 3 (t + 3 ms); slot 1's ticket 1 is not 2 ms overdue before then.
        #expect(tickets.claim(now: t, slot: 0) == .notYet(t + 3 * ms))
        #expect(tickets.claim(now: t + 1 * ms, slot: 1) == .due(t + 1 * ms))
        #expect(tickets.claim(now: t + 1 * ms, slot: 1) == .notYet(t + 4 * ms))
        // Slot 2 never asks: at t + 4 ms its ticket 2 is 2 ms overdue, taken after slot 0's own.
        #expect(tickets.claim(now: t + 4 * ms, slot: 0) == .due(t + 3 * ms))
        #expect(tickets.claim(now: t + 4 * ms, slot: 0) == .due(t + 2 * ms))
        #expect(tickets.claim(now: t + 4 * ms, slot: 0) == .notYet(t + 6 * ms))
        for due in [4, 7] { #expect(tickets.claim(now: t + 9 * ms, slot: 1) == .due(t + UInt64(due) * ms)) }
        // Ticket 8 (slot 2's) is 1 ms overdue at t + 9 ms: not yet a neighbour's.
        for due in [6, 5] { #expect(tickets.claim(now: t + 9 * ms, slot: 0) == .due(t + UInt64(due) * ms)) }
        #expect(tickets.claim(now: t + 9 * ms, slot: 0) == .notYet(t + 10 * ms))
        #expect(tickets.claim(now: t + 10 * ms, slot: 0) == .due(t + 8 * ms))
        #expect(tickets.claimed == 9 && tickets.isExhausted)
        #expect(tickets.claim(now: t + 10 * ms, slot: 2) == .exhausted)
    }

    /// One connection of four asks (the others have no tokens, or are reconnecting): it has
    /// its own tickets as they fall due and every other slot's once overdue, oldest first.
    @Test func aLoneConnectionTakesEveryOverdueTicketOldestFirst() throws {
        let tickets = try Self.started(lasting: 8, slots: 4)
        var claimed: [UInt64] = []
        while case .due(let due) = tickets.claim(now: t + 20 * ms, slot: 0) { claimed.append((due - t) / ms) }
        #expect(claimed == [4, 1, 2, 3, 5, 6, 7])
        #expect(tickets.isExhausted)
    }

    /// A slot whose connection has no tokens left is retired: its tickets are the others' as
    /// soon as they fall due, not 2 ms later; the slots still sending keep their own.
    @Test func aRetiredSlotsTicketsGoToTheOthersWhenDue() throws {
        let tickets = try Self.started(lasting: 8, slots: 2)
        // Slot 1's ticket 1 is due at t + 1 ms: slot 0 may take it only at t + 3 ms…
        #expect(tickets.claim(now: t + 1 * ms, slot: 0) == .notYet(t + 2 * ms))
        tickets.retire(slot: 1)
        // …until slot 1 retires: now it is slot 0's as it stands, due at t + 1 ms.
        #expect(tickets.claim(now: t + 1 * ms, slot: 0) == .due(t + 1 * ms))
        // Slot 1's next (ticket 3, t + 3 ms) is due after slot 0's own (ticket 2): slot 0
        // waits for its own, then for the retired slot's due time, not 2 ms past it.
        #expect(tickets.claim(now: t + 1 * ms, slot: 0) == .notYet(t + 2 * ms))
        #expect(tickets.claim(now: t + 2 * ms, slot: 0) == .due(t + 2 * ms))
        #expect(tickets.claim(now: t + 2 * ms, slot: 0) == .notYet(t + 3 * ms))
        var claimed: [UInt64] = []
        for now in 3...7 {
            while case .due(let due) = tickets.claim(now: t + UInt64(now) * ms, slot: 0) {
                claimed.append((due - t) / ms)
                #expect(due == t + UInt64(now) * ms, "ticket \(claimed.last!) went out late")
            }
        }
        #expect(claimed == [3, 4, 5, 6, 7])
        #expect(tickets.isExhausted)
    }

    /// Without retirement the same schedule leaves slot 1's tickets 2 ms late.
    @Test func aSlotThatIsNotRetiredKeepsItsTicketsForTheStealDelay() throws {
        let tickets = try Self.started(lasting: 4, slots: 2)
        #expect(tickets.claim(now: t + 1 * ms, slot: 0) == .notYet(t + 2 * ms))
        #expect(tickets.claim(now: t + 2 * ms, slot: 0) == .due(t + 2 * ms))
        #expect(tickets.claim(now: t + 2 * ms, slot: 0) == .notYet(t + 3 * ms))
        #expect(tickets.claim(now: t + 3 * ms, slot: 0) == .due(t + 1 * ms))
    }

    /// A slot's tickets are due slots ÷ rate apart, at the rate of the moment: 1,000/s over 4
    /// slots, 4 ms; nothing past the schedule's end.
    @Test func aSlotsTicketsAreSlotsOverRateApart() throws {
        let tickets = ArrivalTickets(schedule: try ArrivalSchedule(rate: 1000, duration: .milliseconds(10)), slots: 4)
        #expect(tickets.spacing(slot: 1) == 4_000_000)
        #expect(tickets.claim(now: 1_000_000_000, slot: 0) == .due(1_000_000_000))
        #expect(tickets.spacing(slot: 0) == 4_000_000)
        _ = tickets.claim(now: 1_010_000_000, slot: 0)
        #expect(tickets.spacing(slot: 0) == nil, "its next two would be at 8 and 12 ms, past 10")
    }
}
