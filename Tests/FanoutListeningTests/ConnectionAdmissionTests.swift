import Testing

@testable import FanoutListening

/// `ConnectionAdmission`: the total, per-peer and per-peer idle connection limits, eviction of
/// the connections that never sent a request, and the words of a refusal.
@Suite struct ConnectionAdmissionTests {
    typealias Admission = ConnectionAdmission<Int>

    /// Admits connections `ids` from `peer` and has each send a request (so none is evictable).
    static func busy(_ admission: inout Admission, _ ids: Range<Int>, from peer: String) {
        for id in ids {
            #expect(admission.admit(id, peer: peer, now: 0) == .admitted(evicting: nil))
            admission.requestArrived(id)
        }
    }

    @Test func onePeerIsHeldToItsShareAndOthersStillGetIn() {
        var admission = Admission(total: 5, perPeer: 2, idlePerPeer: 2)
        Self.busy(&admission, 0..<2, from: "10.0.0.1")
        #expect(admission.admit(2, peer: "10.0.0.1", now: 0) == .refused(.perPeer))
        #expect(admission.count(from: "10.0.0.1") == 2)
        Self.busy(&admission, 3..<4, from: "10.0.0.2")
        Self.busy(&admission, 4..<5, from: "10.0.0.3")
        Self.busy(&admission, 5..<6, from: "10.0.0.4")
        #expect(admission.open == 5)
        // The total first: a sixth from anyone is past it when every connection sent a request.
        #expect(admission.admit(6, peer: "10.0.0.5", now: 0) == .refused(.total))
        admission.closed(0)
        #expect(admission.count(from: "10.0.0.1") == 1)
        Self.busy(&admission, 7..<8, from: "10.0.0.1")
        for id in [1, 7] { admission.closed(id) }
        #expect(admission.count(from: "10.0.0.1") == 0)
        #expect(admission.open == 3)
        // One never counted, or closed twice, changes nothing.
        admission.closed(99)
        admission.closed(1)
        #expect(admission.open == 3)
    }

    /// Issue 61, case 10: at the total, the connection that has waited longest without a
    /// request is evicted for the new one, whoever it is from; busy ones never are.
    @Test func atTheTotalTheOldestIdleConnectionMakesRoom() {
        var admission = Admission(total: 4, perPeer: 4, idlePerPeer: 4)
        #expect(admission.admit(1, peer: "10.0.0.2", now: 0) == .admitted(evicting: nil))
        Self.busy(&admission, 2..<3, from: "10.0.0.3")
        #expect(admission.admit(3, peer: "10.0.0.2", now: 0) == .admitted(evicting: nil))
        #expect(admission.admit(4, peer: "10.0.0.4", now: 0) == .admitted(evicting: nil))
        #expect(admission.idle == 3)
        // Full: 1 is the oldest idle one, then 3, then 4 (2 sent a request).
        #expect(
            admission.admit(5, peer: "10.0.0.1", now: 0)
                == .admitted(evicting: .init(id: 1, peer: "10.0.0.2", limit: .total))
        )
        admission.requestArrived(5)
        #expect(admission.open == 4)
        #expect(admission.count(from: "10.0.0.2") == 1)
        // Connection 3 sends a request: 4 is the oldest idle one now.
        admission.requestArrived(3)
        #expect(
            admission.admit(6, peer: "10.0.0.1", now: 0)
                == .admitted(evicting: .init(id: 4, peer: "10.0.0.4", limit: .total))
        )
        // The evicted connection's close, when it comes, is not counted twice.
        admission.closed(1)
        admission.closed(4)
        #expect(admission.open == 4)
        // 6 is idle and the only one: the next evicts it; after that all are busy.
        #expect(
            admission.admit(7, peer: "10.0.0.5", now: 0)
                == .admitted(evicting: .init(id: 6, peer: "10.0.0.1", limit: .total))
        )
        admission.requestArrived(7)
        #expect(admission.admit(8, peer: "10.0.0.5", now: 0) == .refused(.total))
    }

    /// The four-address attack in small: four peers fill the sink with idle connections; a
    /// client that sends requests still gets every connection it opens.
    @Test func idleConnectionsFromManyPeersCannotLockAClientOut() {
        var admission = Admission(total: 16, perPeer: 4, idlePerPeer: 4)
        var id = 0
        for peer in ["127.0.0.2", "127.0.0.3", "127.0.0.4", "127.0.0.5"] {
            for _ in 0..<4 {
                #expect(admission.admit(id, peer: peer, now: 0) == .admitted(evicting: nil))
                id += 1
            }
        }
        var evicted: [Int] = []
        for _ in 0..<4 {
            guard case .admitted(let victim?) = admission.admit(id, peer: "127.0.0.1", now: 0) else {
                Issue.record("refused")
                return
            }
            evicted.append(victim.id)
            admission.requestArrived(id)
            id += 1
        }
        #expect(evicted == [0, 1, 2, 3], "oldest first")
        #expect(admission.count(from: "127.0.0.1") == 4)
    }

    /// Review of issue 61: 1,100 silent connections from 127.0.0.1 held its 256 and locked out
    /// a `fanout send` from the same address. At its own limit, an address's oldest connection
    /// that has waited the grace without a request makes room; one younger does not (a pool in
    /// its handshake is refused in words), and one that sent a request never does.
    @Test func silentConnectionsMakeRoomForOneFromTheirAddressThatSends() {
        let second: UInt64 = 1_000_000_000
        var admission = Admission(total: 16, perPeer: 4, idlePerPeer: 4, grace: .seconds(1))
        for id in 0..<4 { #expect(admission.admit(id, peer: "127.0.0.1", now: 0) == .admitted(evicting: nil)) }
        #expect(admission.admit(4, peer: "127.0.0.1", now: second - 1) == .refused(.perPeer))
        #expect(
            admission.admit(5, peer: "127.0.0.1", now: second)
                == .admitted(evicting: .init(id: 0, peer: "127.0.0.1", limit: .perPeer))
        )
        admission.requestArrived(5)
        // More silent ones evict the rest of the first four, oldest first, then are refused
        // until they have waited the grace themselves; the one that sends stays.
        var evicted: [Int] = []
        for id in 6..<12 {
            switch admission.admit(id, peer: "127.0.0.1", now: second + 10) {
            case .admitted(let eviction?): evicted.append(eviction.id)
            case .refused(let limit): #expect(limit == .perPeer && id >= 9, "\(id)")
            case .admitted(nil): Issue.record("\(id) admitted past the limit with none evicted")
            }
        }
        #expect(evicted == [1, 2, 3])
        #expect(admission.count(from: "127.0.0.1") == 4)
        #expect(admission.idleCount(from: "127.0.0.1") == 3)
        #expect(
            admission.admit(12, peer: "127.0.0.1", now: 3 * second)
                == .admitted(evicting: .init(id: 6, peer: "127.0.0.1", limit: .perPeer))
        )
        // Another address is not touched by this one's limit.
        #expect(admission.admit(13, peer: "127.0.0.2", now: 3 * second) == .admitted(evicting: nil))
        // Once every connection of the address has sent a request, the limit is a refusal.
        for id in [7, 8, 12] { admission.requestArrived(id) }
        #expect(admission.admit(14, peer: "127.0.0.1", now: 9 * second) == .refused(.perPeer))
    }

    /// The same at the per-peer idle limit, which holds from half the total.
    @Test func anAddressAtItsIdleLimitMakesRoomFromItsOldest() {
        let second: UInt64 = 1_000_000_000
        var admission = Admission(total: 8, perPeer: 8, idlePerPeer: 2, grace: .seconds(1))
        for id in 0..<2 {
            #expect(admission.admit(id, peer: "10.0.0.9", now: 0) == .admitted(evicting: nil))
            admission.requestArrived(id)
        }
        for id in 2..<4 { #expect(admission.admit(id, peer: "10.0.0.2", now: second) == .admitted(evicting: nil)) }
        #expect(admission.admit(4, peer: "10.0.0.2", now: second) == .refused(.idlePerPeer))
        #expect(
            admission.admit(5, peer: "10.0.0.2", now: 2 * second)
                == .admitted(evicting: .init(id: 2, peer: "10.0.0.2", limit: .idlePerPeer))
        )
        #expect(admission.idleCount(from: "10.0.0.2") == 2)
        #expect(admission.open == 4)
    }

    @Test func aPeerIsHeldToItsIdleConnections() {
        // Half the total (4 of 8) is open: the idle limit holds.
        var admission = Admission(total: 8, perPeer: 10, idlePerPeer: 2)
        #expect(admission.admit(10, peer: "10.0.0.9", now: 0) == .admitted(evicting: nil))
        #expect(admission.admit(11, peer: "10.0.0.9", now: 0) == .admitted(evicting: nil))
        admission.requestArrived(10)
        admission.requestArrived(11)
        #expect(admission.admit(1, peer: "10.0.0.2", now: 0) == .admitted(evicting: nil))
        #expect(admission.admit(2, peer: "10.0.0.2", now: 0) == .admitted(evicting: nil))
        #expect(admission.admit(3, peer: "10.0.0.2", now: 0) == .refused(.idlePerPeer))
        #expect(admission.idleCount(from: "10.0.0.2") == 2)
        // Others are not held to that peer's idle connections.
        #expect(admission.admit(4, peer: "10.0.0.3", now: 0) == .admitted(evicting: nil))
        // Once one sends a request, the peer may open another.
        admission.requestArrived(1)
        #expect(admission.idleCount(from: "10.0.0.2") == 1)
        #expect(admission.admit(5, peer: "10.0.0.2", now: 0) == .admitted(evicting: nil))
        admission.closed(2)
        #expect(admission.idleCount(from: "10.0.0.2") == 1)
        #expect(admission.count(from: "10.0.0.2") == 2)
    }

    /// Below half the total, a pool that opens all its connections before sending on any is
    /// not held to the idle limit; from half on, it is.
    @Test func theIdleLimitHoldsFromHalfTheTotal() {
        var admission = Admission(total: 8, perPeer: 8, idlePerPeer: 2)
        for id in 1...4 {
            #expect(admission.admit(id, peer: "10.0.0.2", now: 0) == .admitted(evicting: nil), "\(id)")
        }
        #expect(admission.idleCount(from: "10.0.0.2") == 4)
        #expect(admission.admit(5, peer: "10.0.0.2", now: 0) == .refused(.idlePerPeer))
        // Another peer's first two idle ones are admitted, its third is not.
        #expect(admission.admit(6, peer: "10.0.0.3", now: 0) == .admitted(evicting: nil))
        #expect(admission.admit(7, peer: "10.0.0.3", now: 0) == .admitted(evicting: nil))
        #expect(admission.admit(8, peer: "10.0.0.3", now: 0) == .refused(.idlePerPeer))
        // Below half again, the limit lets the pool go on opening.
        for id in 1...4 { admission.closed(id) }
        #expect(admission.admit(9, peer: "10.0.0.3", now: 0) == .admitted(evicting: nil))
    }

    /// Connections that come, send a request and go leave nothing behind in the idle queue:
    /// its stale entries are dropped, and the order of those left holds.
    @Test func theIdleQueueStaysSmallAndInOrder() {
        var admission = Admission(total: 8, perPeer: 8, idlePerPeer: 8)
        #expect(admission.admit(-1, peer: "10.0.0.2", now: 0) == .admitted(evicting: nil))
        for id in 0..<100_000 {
            #expect(admission.admit(id, peer: "10.0.0.1", now: 0) == .admitted(evicting: nil))
            admission.requestArrived(id)
            admission.closed(id)
        }
        #expect(admission.open == 1)
        #expect(admission.idleQueueLength <= 64)
        Self.busy(&admission, 200_000..<200_007, from: "10.0.0.3")
        #expect(
            admission.admit(300_000, peer: "10.0.0.4", now: 0)
                == .admitted(evicting: .init(id: -1, peer: "10.0.0.2", limit: .total))
        )
    }

    /// A sink held full of idle connections, each newcomer evicting the oldest (the four-address
    /// attack kept up): the queue's storage stays small. Eviction only moved its head on, so it
    /// grew by an entry an eviction for the sink's life.
    ///
    /// The same at one address's limit, each silent newcomer evicting that address's oldest:
    /// its own order stays small too.
    @Test(arguments: [ConnectionAdmission<Int>.Limit.total, .perPeer])
    func evictionsLeaveTheIdleQueueSmall(at limit: ConnectionAdmission<Int>.Limit) {
        var admission =
            limit == .total
            ? Admission(total: 4, perPeer: 200_000, idlePerPeer: 200_000)
            : Admission(total: 1024, perPeer: 4, idlePerPeer: 4, grace: .zero)
        for id in 0..<4 { _ = admission.admit(id, peer: "10.0.0.1", now: 1) }
        for id in 4..<100_004 {
            #expect(
                admission.admit(id, peer: "10.0.0.1", now: 1)
                    == .admitted(evicting: .init(id: id - 4, peer: "10.0.0.1", limit: limit))
            )
        }
        #expect(admission.open == 4 && admission.idle == 4)
        #expect(admission.idleQueueLength <= 128, "\(admission.idleQueueLength) entries for 4 idle connections")
        #expect(admission.idleQueueLength(of: "10.0.0.1") <= 128, "\(admission.idleQueueLength(of: "10.0.0.1"))")
    }

    /// The per-peer limits follow the total the open-file limit allows: a quarter of it from one
    /// address and a quarter of that idle, so four addresses always get in however low the limit
    /// made the sink (review of issue 61: under `ulimit -n 256` the total was 93 and one address
    /// could still hold all of it, the per-peer default staying at 256). A limit given is kept,
    /// and an idle one follows the per-peer one given.
    @Test func thePerPeerLimitsAreAQuarterOfTheDefaultTotal() {
        #expect(Admission.peerLimits(perPeer: nil, idlePerPeer: nil, defaultTotal: 1024) == (256, 64))
        #expect(Admission.peerLimits(perPeer: nil, idlePerPeer: nil, defaultTotal: 93) == (23, 5))
        #expect(Admission.peerLimits(perPeer: nil, idlePerPeer: nil, defaultTotal: 669) == (167, 41))
        #expect(Admission.peerLimits(perPeer: nil, idlePerPeer: nil, defaultTotal: 3) == (1, 1))
        #expect(Admission.peerLimits(perPeer: 40, idlePerPeer: nil, defaultTotal: 93) == (40, 10))
        #expect(Admission.peerLimits(perPeer: 40, idlePerPeer: 2, defaultTotal: 93) == (40, 2))
    }

    @Test func aRefusalSaysWhichLimit() {
        let admission = Admission(total: 1024, perPeer: 256, idlePerPeer: 64)
        #expect(admission.reason(.total, peer: "10.0.0.1") == "fanout sink: 1024 connections, its limit")
        #expect(
            admission.reason(.perPeer, peer: "10.0.0.1")
                == "fanout sink: 256 connections from 10.0.0.1, the per-peer limit"
        )
        #expect(
            admission.reason(.idlePerPeer, peer: "10.0.0.1")
                == "fanout sink: 64 connections from 10.0.0.1 that sent no authenticated request, the per-peer idle limit"
        )
    }

    @Test func anEvictionSaysWhichLimitItMadeRoomAt() {
        let admission = Admission(total: 1024, perPeer: 256, idlePerPeer: 64, grace: .seconds(1))
        #expect(
            admission.reason(.init(id: 1, peer: "10.0.0.7", limit: .total), newcomer: "10.0.0.8:4000")
                == "it sent no authenticated request, and 10.0.0.8:4000 came to a sink at its 1024 connections, its limit"
        )
        #expect(
            admission.reason(.init(id: 1, peer: "10.0.0.7", limit: .perPeer), newcomer: "10.0.0.7:4000")
                == "it sent no authenticated request in 1s, and 10.0.0.7:4000 came at 256 connections from 10.0.0.7, the per-peer limit"
        )
        #expect(
            admission.reason(.init(id: 1, peer: "10.0.0.7", limit: .idlePerPeer), newcomer: "10.0.0.7:4000")
                == "it sent no authenticated request in 1s, and 10.0.0.7:4000 came at 64 connections from 10.0.0.7 that sent no authenticated request, the per-peer idle limit"
        )
    }
}
