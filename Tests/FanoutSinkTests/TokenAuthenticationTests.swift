import Foundation
import Testing

@testable import FanoutSink

/// Token auth's rules, with the clock moved by hand instead of waiting an hour.
@Suite struct TokenAuthenticationTests {
    static let start: Int64 = 1_700_000_000
    let key = TestKey(keyID: "ABC123DEFG", teamID: "DEF123GHIJ")
    let otherKey = TestKey(keyID: "XYZ987WVUT", teamID: "DEF123GHIJ")
    let clock = TestClock(start)

    func harness(keys: [TestKey]? = nil) -> SinkHarness {
        var configuration = SinkConfiguration()
        let clock = clock
        configuration.tokenAuthentication = TokenAuthentication(
            keys: (keys ?? [key, otherKey]).map(\.sinkKey),
            now: { clock.now }
        )
        return SinkHarness(configuration)
    }

    static func request(_ token: String?) -> [(String, String)] {
        SinkHarness.fields([("authorization", token.map { "bearer \($0)" })])
    }

    @Test func aValidTokenIsAcceptedAndReusedWithoutBeingVerifiedAgain() throws {
        var sink = harness()
        let token = key.token(issuedAt: Self.start)
        #expect(sink.send(Self.request(token))?.status == 200)
        clock.advance(by: 3000)
        #expect(sink.send(Self.request(token))?.status == 200)
        #expect(sink.sink.authenticationState.token == Array(token.utf8))
    }

    @Test func missingMalformedUnknownAndTamperedTokens() {
        var sink = harness()
        #expect(sink.send(Self.request(nil))?.reason == "MissingProviderToken")
        #expect(sink.send(SinkHarness.fields([("authorization", "Basic abc")]))?.reason == "InvalidProviderToken")
        #expect(sink.send(Self.request("not.a.jwt"))?.reason == "InvalidProviderToken")
        let stranger = TestKey(keyID: "NOPE000000", teamID: "DEF123GHIJ")
        #expect(sink.send(Self.request(stranger.token(issuedAt: Self.start)))?.reason == "InvalidProviderToken")
        // A valid token with one claim changed: the signature no longer matches.
        let token = key.token(issuedAt: Self.start)
        let parts = token.split(separator: ".")
        let forged = TestKey.base64URL(Data(#"{"iss":"DEF123GHIJ","iat":\#(Self.start + 1)}"#.utf8))
        #expect(sink.send(Self.request("\(parts[0]).\(forged).\(parts[2])"))?.reason == "InvalidProviderToken")
        // Signed by the right key, but not ES256, or issued by another team.
        #expect(
            sink.send(Self.request(key.token(issuedAt: Self.start, algorithm: "HS256")))?.reason
                == "InvalidProviderToken"
        )
        #expect(
            sink.send(Self.request(key.token(issuedAt: Self.start, issuer: "OTHERTEAM0")))?.reason
                == "InvalidProviderToken"
        )
        #expect(sink.statistics.summary.accepted == 0)
    }

    @Test func aTokenOlderThanAnHourIsExpired() {
        var sink = harness()
        #expect(sink.send(Self.request(key.token(issuedAt: Self.start - 3601)))?.reason == "ExpiredProviderToken")
        let token = key.token(issuedAt: Self.start)
        #expect(sink.send(Self.request(token))?.status == 200)
        clock.advance(by: 3601)
        // The same bytes, now too old.
        #expect(sink.send(Self.request(token))?.reason == "ExpiredProviderToken")
    }

    /// `iat` is the peer's number: extremes are answered, never trapped on, and a token from the
    /// future (beyond the clock skew) is invalid rather than valid forever.
    @Test(arguments: [Int64.min, Int64.min + 1, -1, 0, Int64.max, Int64.max - 1])
    func extremeIssueTimesAreAnsweredNotTrappedOn(issuedAt: Int64) {
        var sink = harness()
        let reason = sink.send(Self.request(key.token(issuedAt: issuedAt)))?.reason
        #expect(reason == (issuedAt > Self.start ? "InvalidProviderToken" : "ExpiredProviderToken"))
    }

    @Test func aTokenFromTheFutureIsInvalidBeyondTheClockSkew() {
        var sink = harness()
        let skew = TokenAuthentication.maximumClockSkew
        #expect(sink.send(Self.request(key.token(issuedAt: Self.start + skew)))?.status == 200)
        var other = harness()
        #expect(
            other.send(Self.request(key.token(issuedAt: Self.start + skew + 1)))?.reason == "InvalidProviderToken"
        )
        // The year 2100.
        #expect(other.send(Self.request(key.token(issuedAt: 4_102_444_800)))?.reason == "InvalidProviderToken")
    }

    @Test func ageSaturatesInsteadOfOverflowing() {
        #expect(TokenAuthentication.age(of: .min, at: 1_700_000_000) == .max)
        #expect(TokenAuthentication.age(of: .max, at: -1_700_000_000) == .min)
        #expect(TokenAuthentication.age(of: 100, at: 160) == 60)
    }

    @Test func aNewTokenWithinTwentyMinutesIsTooManyUpdates() {
        var sink = harness()
        #expect(sink.send(Self.request(key.token(issuedAt: Self.start)))?.status == 200)
        clock.advance(by: 1199)
        let early = sink.send(Self.request(key.token(issuedAt: clock.now)))
        #expect(early?.status == 429)
        #expect(early?.reason == "TooManyProviderTokenUpdates")
        clock.advance(by: 1)
        #expect(sink.send(Self.request(key.token(issuedAt: clock.now)))?.status == 200)
    }

    @Test func aConnectionIsBoundToItsFirstKey() {
        var sink = harness()
        #expect(sink.send(Self.request(key.token(issuedAt: Self.start)))?.status == 200)
        clock.advance(by: 1800)
        #expect(sink.send(Self.request(otherKey.token(issuedAt: clock.now)))?.reason == "UnrelatedKeyIdInToken")
        // Another connection may use the other key.
        var fresh = harness()
        #expect(fresh.send(Self.request(otherKey.token(issuedAt: clock.now)))?.status == 200)
    }

    @Test func streamsRiseToAThousandAfterTheFirstAuthenticatedRequest() {
        var sink = harness()
        #expect(sink.streamLimit == 1)
        #expect(sink.send(Self.request(nil))?.status == 403)
        #expect(sink.streamLimit == 1)
        #expect(sink.send(Self.request(key.token(issuedAt: Self.start)))?.status == 200)
        #expect(sink.streamLimit == 1000)
    }

    @Test func streamsDropAfterARejectionWhenAsked() {
        var configuration = SinkConfiguration()
        configuration.throttleAfterRejection = true
        var sink = SinkHarness(configuration)
        #expect(sink.send(SinkHarness.fields())?.status == 200)
        #expect(sink.streamLimit == 1000)
        #expect(sink.send(SinkHarness.fields([("apns-priority", "2")]))?.status == 400)
        #expect(sink.streamLimit == 1)
        #expect(sink.send(SinkHarness.fields())?.status == 200)
        #expect(sink.streamLimit == 1000)
    }
}

/// `iat` is RFC 7519's NumericDate: a JSON number, integer or not. A Python client that sends
/// `1764140000.25` is accepted by APNs; the sink refused it. A string or a boolean is no
/// NumericDate: refused, and the fault said (the 403's reason cannot say which claim).
@Suite struct NumericDateTests {
    let key = TestKey(keyID: "ABC123DEFG", teamID: "DEF123GHIJ")

    func harness(faults: TokenFaults) -> SinkHarness {
        var configuration = SinkConfiguration()
        var authentication = TokenAuthentication(
            keys: [key.sinkKey],
            now: { TokenAuthenticationTests.start }
        )
        authentication.faults = faults
        configuration.tokenAuthentication = authentication
        return SinkHarness(configuration)
    }

    @Test(
        arguments: [
            ("1700000000", 200, nil),
            ("1700000000.25", 200, nil),
            ("1.7e9", 200, nil),
            (#""1700000000""#, 403, #"its iat claim is the string "1700000000", not a NumericDate"#),
            ("true", 403, "its iat claim is true, not a NumericDate"),
            ("null", 403, "its iat claim is null, not a NumericDate"),
            // Beyond any Double: no JSON reader here takes it as a number.
            ("1e999", 403, "its claims are not base64url of a JSON object"),
        ] as [(String, Int, String?)]
    )
    func iatIsANumericDate(iat: String, status: Int, fault: String?) {
        let said = NIOLockedBox<[String]>([])
        var sink = harness(faults: TokenFaults { line in said.append(line) })
        let answer = sink.send(TokenAuthenticationTests.request(key.token(iat: iat)))
        #expect(answer?.status == status, "\(iat): \(String(describing: answer))")
        if let fault {
            #expect(answer?.reason == "InvalidProviderToken")
            #expect(said.value.count == 1 && said.value[0].contains(fault), "\(iat): \(said.value)")
            #expect(said.value[0].hasPrefix("403 InvalidProviderToken: the provider token is refused: "))
        } else {
            #expect(said.value.isEmpty, "\(said.value)")
        }
    }

    /// RFC 7515 §4.1.11: a critical extension the sink does not understand refuses the token;
    /// a NUL where the scheme's space goes is no space (RFC 9113 §8.2.1: malformed).
    @Test func aCriticalExtensionOrANulInTheSchemeIsRefused() {
        let said = NIOLockedBox<[String]>([])
        var sink = harness(faults: TokenFaults { line in said.append(line) })
        let critical = key.token(iat: "1700000000", header: #""crit":["exp"],"exp":1700003600"#)
        let answer = sink.send(TokenAuthenticationTests.request(critical))
        #expect(answer?.reason == "InvalidProviderToken")
        #expect(
            said.value == [
                "403 InvalidProviderToken: the provider token is refused: its header names [\"exp\"] as crit: "
                    + "extensions the sink does not understand, so it must refuse the token (RFC 7515 §4.1.11)"
            ],
            "\(said.value)"
        )
        let token = key.token(iat: "1700000000")
        let nul = sink.send(SinkHarness.fields([("authorization", "bearer\u{0}\(token)")]))
        #expect(nul?.reason == "InvalidProviderToken")
        // The same token with a space, and the scheme in capitals, is accepted.
        #expect(sink.send(SinkHarness.fields([("authorization", "BEARER \(token)")]))?.status == 200)
    }

    /// Each distinct fault is said once, however often it comes, and counted.
    @Test func aFaultIsSaidOnceAndCounted() {
        let said = NIOLockedBox<[String]>([])
        let faults = TokenFaults { line in said.append(line) }
        var sink = harness(faults: faults)
        for _ in 0..<5 { _ = sink.send(TokenAuthenticationTests.request(key.token(iat: #""soon""#))) }
        _ = sink.send(TokenAuthenticationTests.request(key.token(iat: "1700000000", issuer: "OTHERTEAM0")))
        #expect(said.value.count == 2, "\(said.value)")
        #expect(
            said.value.last
                == "403 InvalidProviderToken: the provider token is refused: "
                + "its iss OTHERTEAM0 is not key ABC123DEFG's team (DEF123GHIJ)",
            "\(said.value)"
        )
        #expect(
            faults.counts == [
                .issuedAtNotNumericDate(#"the string "soon""#): 5,
                .teamMismatch(issuer: "OTHERTEAM0", keyID: "ABC123DEFG", keyTeam: "DEF123GHIJ"): 1,
            ]
        )
        #expect(faults.unremembered == 0)
    }

    /// Past `TokenFaults.memory` distinct faults, a new one is neither said nor remembered, only
    /// counted; the ones remembered still count.
    @Test func faultsPastTheMemoryAreCountedTogether() {
        let said = NIOLockedBox<[String]>([])
        let faults = TokenFaults { line in said.append(line) }
        for count in 0..<(TokenFaults.memory + 6) { faults.note(.parts(count)) }
        faults.note(.parts(0))
        faults.note(.parts(TokenFaults.memory + 1))
        #expect(said.value.count == TokenFaults.memory)
        #expect(faults.counts.count == TokenFaults.memory)
        #expect(faults.counts[.parts(0)] == 2)
        #expect(faults.counts[.parts(TokenFaults.memory)] == nil)
        #expect(faults.unremembered == 7)
    }
}

/// A small thread-safe box for what a `@Sendable` callback hands over.
final class NIOLockedBox<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: Value
    init(_ value: Value) { stored = value }
    var value: Value { lock.withLock { stored } }
    func append<Element>(_ element: Element) where Value == [Element] { lock.withLock { stored.append(element) } }
}
