import FanoutAPNs
import FanoutMeasure
import FanoutPush
import Testing

@testable import FanoutInstrument
@testable import FanoutScenarioTerms
@testable import FanoutSink

/// The conformance card as the sink fills it, one connection in memory at a time (the card's
/// own memory and rules alone: FanoutInstrumentTests' `ProviderCardTests`).
@Suite struct SinkProviderCardTests {
    static func harness(_ instrument: ProviderInstrument, scenario: SinkScenario = SinkScenario()) -> SinkHarness {
        var configuration = SinkConfiguration()
        configuration.scenario = scenario
        configuration.idleTimeout = nil
        configuration.requestTimeout = nil
        configuration.instrument = instrument
        return SinkHarness(configuration)
    }

    static let token = String(repeating: "ab", count: 32)
    static let other = String(repeating: "cd", count: 32)

    /// The card remembers the token APNs said never to send again, not the accepted ones.
    @Test func aTokenSentAgainAfter410IsOnTheCardOnce() {
        var scenario = SinkScenario()
        scenario.unregisteredTokens.insert(Self.token)
        let instrument = ProviderInstrument()
        var harness = Self.harness(instrument, scenario: scenario)
        #expect(harness.send(SinkHarness.fields(token: Self.other))?.status == 200)
        #expect(harness.send(SinkHarness.fields(token: Self.other))?.status == 200)
        #expect(harness.send(SinkHarness.fields(token: Self.token))?.status == 410)
        #expect(instrument.card.count(.permanentRetried) == 0)
        #expect(harness.send(SinkHarness.fields(token: Self.token))?.status == 410)
        #expect(instrument.card.count(.permanentRetried) == 1)
        let example = instrument.card.examples(.permanentRetried).first
        #expect(example?.token == Self.token)
        #expect(example?.detail == "sent again after 410 Unregistered")
        #expect(ProviderRule.allCases.filter { $0 != .permanentRetried }.allSatisfy { instrument.card.count($0) == 0 })
    }

    /// A 429 is to be retried after a pause: at once is a fault, a second later is not.
    @Test func aRetryWithinASecondOf429IsTooFast() {
        let card = ProviderCard()
        Array(Self.token.utf8).withUnsafeBytes { token in
            let hash = TokenList.hash(token)
            let second: UInt64 = 1_000_000_000
            card.rejected(hash: hash, .tooManyRequests, now: 10 * second)
            card.arrived(token: token, hash: hash, connection: 1, now: 10 * second + 300_000_000)
            #expect(card.count(.fastRetry) == 1)
            card.arrived(token: token, hash: hash, connection: 1, now: 11 * second + 1_000_000)
            #expect(card.count(.fastRetry) == 1, "a retry after a pause of a second is not on the card")
            // Shutdown asks for another connection, not a pause; a provider token's 403, a new token.
            card.rejected(hash: hash, .shutdown, now: 20 * second)
            card.rejected(hash: hash, .expiredProviderToken, now: 20 * second)
            card.arrived(token: token, hash: hash, connection: 1, now: 20 * second + 1)
            #expect(card.count(.fastRetry) == 1 && card.count(.permanentRetried) == 0)
        }
    }

    /// One apns-id on two notifications is a fault; the same notification's retry with its id is not.
    @Test func anApnsIDOnTwoNotificationsIsOnTheCard() {
        let instrument = ProviderInstrument()
        var harness = Self.harness(instrument)
        let id = "11111111-2222-3333-4444-555555555555"
        #expect(harness.send(SinkHarness.fields(token: Self.token, [("apns-id", id)]))?.status == 200)
        #expect(harness.send(SinkHarness.fields(token: Self.token, [("apns-id", id)]))?.status == 200)
        #expect(instrument.card.count(.apnsIDReused) == 0)
        #expect(harness.send(SinkHarness.fields(token: Self.other, [("apns-id", id)]))?.status == 200)
        #expect(instrument.card.count(.apnsIDReused) == 1)
    }

    /// A payload within 5% of 4,096 bytes is near the limit; one well under it is not.
    @Test func aPayloadNearItsLimitIsOnTheCard() {
        let instrument = ProviderInstrument()
        var harness = Self.harness(instrument)
        let near = #"{"aps":{"alert":""# + String(repeating: "x", count: 3900) + #""}}"#
        #expect(harness.send(SinkHarness.fields(token: Self.token))?.status == 200)
        #expect(instrument.card.count(.payloadNearLimit) == 0)
        #expect(harness.send(SinkHarness.fields(token: Self.token), body: near)?.status == 200)
        #expect(instrument.card.count(.payloadNearLimit) == 1)
    }

    /// The stream integral against a hand-drawn curve: 1 stream for 10 ns, 3 for 10, 0 for 20.
    @Test func streamUseIsTheAreaOverTheBusyTime() {
        var use = StreamUse()
        use.note(0, at: 5)
        #expect(use.busy == 0)
        use.note(1, at: 100)
        use.note(3, at: 110)
        use.note(0, at: 120)
        #expect(use.busy == 20)
        #expect(use.area == 1 * 10 + 3 * 10)
        #expect(use.mean == 2)
        use.note(0, at: 140)
        #expect(use.mean == 40.0 / 40)
    }

    /// Every accepted notification's arrival after the mark, and the mark the first request set.
    @Test func arrivalsCountFromTheFirstRequest() {
        let instrument = ProviderInstrument()
        var harness = Self.harness(instrument)
        #expect(instrument.startedAt == nil)
        #expect(harness.send(SinkHarness.fields(token: Self.token))?.status == 200)
        #expect(harness.send(SinkHarness.fields(token: "00"))?.status == 400)
        #expect(instrument.startedAt != nil)
        let expected = ExpectedTokens([Self.token, Self.other])
        #expect(expected.count == 2 && expected.seen == 0)
        // Each acceptance says whether it completed the set: the first, a repeat, the last.
        let completed = [Self.token, Self.token, Self.other.uppercased().lowercased()].map { token in
            Array(token.utf8).withUnsafeBytes { expected.accepted(hash: TokenList.hash($0)) }
        }
        #expect(completed == [false, false, true])
        #expect(expected.seen == 2 && expected.isComplete)
    }
}

/// Stream use adds up by construction (issue #43 saw "17.1 of 1000 a connection on average
/// (peak 21); 93.1 in flight over 1 connections"): a connection's time-weighted mean is never
/// above the most it had open, over any sequence of changes.
@Suite struct StreamUseInvariantTests {
    @Test func aMeanIsNeverAboveItsPeak() {
        var state: UInt64 = 0x5EED
        func next(_ bound: UInt64) -> UInt64 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return (state >> 33) % bound
        }
        for _ in 0..<2_000 {
            var use = StreamUse()
            var now: UInt64 = 1_000 + next(1_000_000)
            for _ in 0..<Int(1 + next(60)) {
                // Levels of every size, times that repeat, and now and then one that goes back.
                now = next(10) == 0 ? now - min(now, next(1_000)) : now + next(5_000_000)
                use.note(Int(next(next(4) == 0 ? 1_001 : 30)), at: now)
            }
            #expect(use.mean <= Double(use.peak) + 1e-9, "mean \(use.mean), peak \(use.peak)")
        }
    }
}
