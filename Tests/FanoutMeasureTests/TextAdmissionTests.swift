import Testing

@testable import FanoutMeasure

/// `TextAdmission`: whom a newcomer evicts, and that nothing is ever refused.
@Suite struct TextAdmissionTests {
    /// Ids of the victims of admitting `arrivals` (id, address) in order.
    static func victims(_ admission: inout TextAdmission, _ arrivals: [(Int, String)]) -> [Int] {
        arrivals.compactMap { id, address in
            if case .evicted(let victim, _) = admission.admit(id, from: address) { return victim.id }
            return nil
        }
    }

    @Test func anAddressPastItsShareLosesItsLeastRecentlyActive() {
        var admission = TextAdmission(maxConnections: 64)
        #expect(admission.share == 32)
        let arrivals = (1...40).map { ($0, "10.0.0.1") }
        #expect(Self.victims(&admission, arrivals) == Array(1...8))
        #expect(admission.count == 32 && admission.held(by: "10.0.0.1") == 32)
        // An answer makes 9 the most recently active: 10 goes next, then 11.
        admission.answered(9, from: "10.0.0.1")
        #expect(Self.victims(&admission, [(41, "10.0.0.1"), (42, "10.0.0.1")]) == [10, 11])
        #expect(admission.admit(43, from: "10.0.0.2") == .admitted)
    }

    @Test func atTheTotalTheBusiestAddressGivesWay() {
        var admission = TextAdmission(maxConnections: 5)
        #expect(admission.share == 3)
        // a holds 1, 3 and 5 (its share), b 2, c 4: all five held. A newcomer from d evicts
        // the oldest of a, the address holding the most.
        let arrivals: [(Int, String)] = [(1, "a"), (2, "b"), (3, "a"), (4, "c"), (5, "a")]
        #expect(Self.victims(&admission, arrivals) == [])
        guard case .evicted(let victim, .total) = admission.admit(6, from: "d") else {
            Issue.record("a full endpoint admitted d without an eviction")
            return
        }
        #expect(victim.id == 1 && victim.address == "a")
        // a: 3, 5 (2); b: 2; c: 4; d: 6. Next from e: a is the busiest.
        #expect(Self.victims(&admission, [(7, "e")]) == [3])
        // a: 5; b: 2; c: 4; d: 6; e: 7 — all hold one: the oldest, b's 2, goes.
        #expect(Self.victims(&admission, [(8, "f")]) == [2])
        #expect(admission.count == 5)
    }

    @Test func aClosedConnectionFreesItsPlaceAndAnUnknownOneIsIgnored() {
        var admission = TextAdmission(maxConnections: 2)
        #expect(admission.admit(1, from: "a") == .admitted)
        #expect(admission.admit(2, from: "b") == .admitted)
        admission.closed(1, from: "a")
        // An evicted connection's own close comes later and finds nothing.
        admission.closed(1, from: "a")
        admission.closed(99, from: "z")
        admission.answered(99, from: "z")
        #expect(admission.count == 1 && admission.held(by: "a") == 0)
        #expect(admission.admit(3, from: "c") == .admitted)
    }

    @Test func oneConnectionAtMostStillAdmitsEachNewcomer() {
        var admission = TextAdmission(maxConnections: 1)
        #expect(admission.share == 1)
        #expect(admission.admit(1, from: "a") == .admitted)
        #expect(Self.victims(&admission, [(2, "a"), (3, "b")]) == [1, 2])
        #expect(admission.count == 1)
    }
}
