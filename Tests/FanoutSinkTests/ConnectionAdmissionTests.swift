import Testing

@testable import FanoutSink

/// `ConnectionAdmission`: the total and per-peer connection limits, and the words of a refusal.
@Suite struct ConnectionAdmissionTests {
    @Test func onePeerIsHeldToItsShareAndOthersStillGetIn() {
        var admission = ConnectionAdmission(total: 5, perPeer: 2)
        #expect(admission.admit(peer: "10.0.0.1") == nil)
        #expect(admission.admit(peer: "10.0.0.1") == nil)
        #expect(admission.admit(peer: "10.0.0.1") == .perPeer)
        #expect(admission.count(from: "10.0.0.1") == 2)
        #expect(admission.admit(peer: "10.0.0.2") == nil)
        #expect(admission.admit(peer: "10.0.0.3") == nil)
        #expect(admission.admit(peer: "10.0.0.4") == nil)
        #expect(admission.open == 5)
        // The total first: a sixth from anyone is past it.
        #expect(admission.admit(peer: "10.0.0.5") == .total)
        admission.closed(peer: "10.0.0.1")
        #expect(admission.count(from: "10.0.0.1") == 1)
        #expect(admission.admit(peer: "10.0.0.1") == nil)
        for _ in 0..<2 { admission.closed(peer: "10.0.0.1") }
        #expect(admission.count(from: "10.0.0.1") == 0)
        #expect(admission.open == 3)
    }

    @Test func aRefusalSaysWhichLimit() {
        let admission = ConnectionAdmission(total: 1024, perPeer: 256)
        #expect(admission.reason(.total, peer: "10.0.0.1") == "fanout sink: 1024 connections, its limit")
        #expect(
            admission.reason(.perPeer, peer: "10.0.0.1")
                == "fanout sink: 256 connections from 10.0.0.1, the per-peer limit"
        )
    }
}
