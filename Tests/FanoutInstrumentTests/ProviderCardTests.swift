import FanoutAPNs
import Testing

@testable import FanoutInstrument

/// The conformance card's memory and the rules it judges from what connections tell it, without
/// a sink (the card as the sink fills it: FanoutSinkTests' `SinkProviderCardTests`).
@Suite struct ProviderCardTests {
    @Test func aKeyTableHoldsWhatFitsAndSaysWhenFull() {
        let table = KeyTable(log2Capacity: 4)
        #expect(table.value(of: 42 << 24) == nil)
        #expect(table.insert(42 << 24, value: 7) == .added)
        #expect(table.insert(42 << 24, value: 9) == .updated)
        #expect(table.value(of: 42 << 24) == 9)
        // Sixteen slots: sixteen keys with the same home fill them, the seventeenth does not fit.
        for index in 1..<16 { #expect(table.insert(UInt64(index) << 24, value: 1) == .added) }
        #expect(table.count == 16)
        #expect(table.insert(99 << 24, value: 1) == .full)
        #expect(table.value(of: 99 << 24) == nil)
        table.replace(99 << 24, value: 5)
        #expect(table.value(of: 99 << 24) == 5)
        #expect(table.value(of: 42 << 24) == nil, "replace overwrote the home slot")
    }

    /// A short connection is churn once another follows it, in whichever order the sink hears
    /// of the close and the connect; a port probe that sent nothing is not.
    @Test func churnIsCountedWhicheverComesFirst() {
        let card = ProviderCard()
        let second: UInt64 = 1_000_000_000
        card.connectionOpened(1, now: 0)
        card.providerClosed(1, lifetime: second, requests: 1, lastRequest: second / 2, now: second)
        #expect(card.count(.churn) == 0, "nothing followed it yet")
        card.connectionOpened(2, now: 2 * second)
        #expect(card.count(.churn) == 1)
        card.connectionOpened(3, now: 3 * second)
        card.providerClosed(2, lifetime: second, requests: 5, lastRequest: 5 * second / 2, now: 3 * second)
        #expect(card.count(.churn) == 2, "connection 3 had opened before 2's close was heard")
        card.connectionOpened(4, now: 4 * second)
        card.providerClosed(3, lifetime: second, requests: 0, lastRequest: 0, now: 4 * second)
        card.providerClosed(4, lifetime: 20 * second, requests: 5, lastRequest: 23 * second, now: 24 * second)
        card.providerClosed(4, lifetime: second, requests: 500, lastRequest: 23 * second, now: 24 * second)
        card.connectionOpened(5, now: 25 * second)
        #expect(card.count(.churn) == 2, "a probe, a long connection and a busy one are not churn")
    }

    /// A pool opened together is siblings, not replacements: a small send over four connections,
    /// two of which carried a request each, closed at its end is no churn (`fanout send
    /// --generate 2000` failed the card on it). The same short connections are churn when the
    /// provider connects again after them: opening and closing a pool a send is what APNs calls
    /// connecting and disconnecting quickly.
    @Test func aPoolOpenedTogetherIsNotChurnUntilItIsOpenedAgain() {
        let card = ProviderCard()
        let millisecond: UInt64 = 1_000_000
        for id in 1...4 { card.connectionOpened(id, now: UInt64(id) * millisecond) }
        card.providerClosed(
            3,
            lifetime: 3 * millisecond,
            requests: 1,
            lastRequest: 5 * millisecond,
            now: 6 * millisecond
        )
        card.providerClosed(
            4,
            lifetime: 2 * millisecond,
            requests: 1,
            lastRequest: 5 * millisecond,
            now: 6 * millisecond
        )
        card.providerClosed(
            1,
            lifetime: 5 * millisecond,
            requests: 1_293,
            lastRequest: 5 * millisecond,
            now: 6 * millisecond
        )
        #expect(card.count(.churn) == 0, "connections 1–4 opened before 3 and 4 were last used")
        card.connectionOpened(5, now: 1_000 * millisecond)
        #expect(card.count(.churn) == 2, "connection 5 replaced the two short ones")
    }

    /// Provider tokens issued less than 20 minutes apart, on any connection, are renewals too soon.
    @Test func providerTokensRenewedTooSoonAreOnTheCard() {
        let card = ProviderCard()
        card.providerToken(issuedAt: 1_000_000, connection: 1, now: 0)
        card.providerToken(issuedAt: 1_000_000, connection: 2, now: 0)
        #expect(card.count(.providerToken) == 0, "one token shared by two connections")
        card.providerToken(issuedAt: 1_000_000 + 1200, connection: 1, now: 0)
        #expect(card.count(.providerToken) == 0, "renewed after 20 minutes")
        card.providerToken(issuedAt: 1_000_000 + 1500, connection: 2, now: 0)
        #expect(card.count(.providerToken) == 1)
        card.providerToken(refused: .expiredProviderToken, connection: 3, now: 0)
        #expect(card.count(.providerToken) == 2)
    }
}
