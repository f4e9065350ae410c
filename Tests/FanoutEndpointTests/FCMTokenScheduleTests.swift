import NIOCore
import Testing

@testable import FanoutEndpoint

/// When a sender fetches its FCM access token, on a clock the test moves: before the first
/// send, 3 min 45 s before expiry, at once after a 401 (once a token), after a growing backoff
/// when a fetch fails, and never a token past its expiry.
@Suite struct FCMTokenScheduleTests {
    static let second: UInt64 = 1_000_000_000

    @Test func aTokenIsUsedUntilThreeMinutesFortyFiveBeforeItExpires() {
        var schedule = FCMTokenSchedule()
        let start = 1_000 * Self.second
        #expect(schedule.valid(at: start) == nil)
        #expect(schedule.next(now: start) == .fetch)
        #expect(schedule.next(now: start) == .waitForFetch)
        // The answer takes 2 s; its 3599 s count from the request.
        schedule.fetched(accessToken: "ya29.a", expiresIn: 3599, now: start + 2 * Self.second)
        let token = schedule.valid(at: start + 2 * Self.second)
        #expect(token == .init(authorization: "Bearer ya29.a", generation: 1, expiresAt: start + 3599 * Self.second))
        let refresh = start + (3599 - 225) * Self.second
        #expect(schedule.next(now: start + 2 * Self.second) == .wait(until: refresh))
        #expect(schedule.next(now: refresh - 1) == .wait(until: refresh))
        #expect(schedule.next(now: refresh) == .fetch)
        // While the next is fetched the last is still sent.
        #expect(schedule.valid(at: refresh + Self.second)?.generation == 1)
        schedule.fetched(accessToken: "ya29.b", expiresIn: 3599, now: refresh + Self.second)
        #expect(schedule.valid(at: refresh + Self.second)?.authorization == "Bearer ya29.b")
        #expect(schedule.valid(at: refresh + Self.second)?.generation == 2)
    }

    @Test func aTokenPastItsExpiryIsNeverSent() {
        var schedule = FCMTokenSchedule()
        #expect(schedule.next(now: 0) == .fetch)
        schedule.fetched(accessToken: "t", expiresIn: 3599, now: 0)
        #expect(schedule.valid(at: 3599 * Self.second - 1) != nil)
        #expect(schedule.valid(at: 3599 * Self.second) == nil)
    }

    /// A token that lives less than twice the margin is replaced at half its life.
    @Test func aShortLivedTokenIsReplacedAtHalfItsLife() {
        var schedule = FCMTokenSchedule()
        #expect(schedule.next(now: 0) == .fetch)
        schedule.fetched(accessToken: "t", expiresIn: 300, now: 0)
        #expect(schedule.next(now: 0) == .wait(until: 150 * Self.second))
    }

    /// A fetch slower than half a short life does not ask again at once; a token that had
    /// expired when it came is a failed fetch, backed off.
    @Test func aSlowFetchNeverLoops() {
        var schedule = FCMTokenSchedule()
        #expect(schedule.next(now: 0) == .fetch)
        // 4 s tokens, the answer 3 s late: half its life is past, the next fetch waits a second.
        let taken = schedule.fetched(accessToken: "t", expiresIn: 4, now: 3 * Self.second)
        #expect(taken)
        #expect(schedule.next(now: 3 * Self.second) == .wait(until: 4 * Self.second))
        #expect(schedule.next(now: 4 * Self.second) == .fetch)
        // 2 s tokens, the answer 3 s late: expired on arrival.
        let expired = schedule.fetched(accessToken: "u", expiresIn: 2, now: 7 * Self.second)
        #expect(!expired)
        #expect(schedule.failures == 1)
        #expect(schedule.valid(at: 7 * Self.second) == nil)
        #expect(schedule.next(now: 7 * Self.second) == .wait(until: 8 * Self.second))
    }

    /// A 401 asks for a token at once, once for all the requests that token's refusals end; a
    /// 401 to an older token asks nothing.
    @Test func aRefusalFetchesOnceAToken() {
        var schedule = FCMTokenSchedule()
        #expect(schedule.next(now: 0) == .fetch)
        schedule.fetched(accessToken: "a", expiresIn: 3599, now: 0)
        let now = 60 * Self.second
        let moved = [
            schedule.refused(generation: 1, now: now), schedule.refused(generation: 1, now: now),
        ]
        #expect(moved == [true, false])
        #expect(schedule.next(now: now) == .fetch)
        let whileFetching = schedule.refused(generation: 1, now: now)
        #expect(!whileFetching)
        #expect(schedule.next(now: now) == .waitForFetch)
        schedule.fetched(accessToken: "b", expiresIn: 3599, now: now + Self.second)
        schedule.refused(generation: 1, now: now + 2 * Self.second)
        #expect(schedule.next(now: now + 2 * Self.second) == .wait(until: now + (3599 - 225) * Self.second))
        schedule.refused(generation: 2, now: now + 3 * Self.second)
        #expect(schedule.next(now: now + 3 * Self.second) == .fetch)
    }

    /// Failed fetches are tried again after 1 s, 2 s, 4 s … 60 s; a success starts over, and a
    /// 401 does not cut a backoff short.
    @Test func failedFetchesBackOff() {
        var schedule = FCMTokenSchedule()
        var now: UInt64 = 0
        var waits: [UInt64] = []
        for _ in 0..<8 {
            #expect(schedule.next(now: now) == .fetch)
            schedule.failed(now: now)
            guard case .wait(let until) = schedule.next(now: now) else {
                Issue.record("no wait after a failure")
                return
            }
            waits.append((until - now) / Self.second)
            now = until
        }
        #expect(waits == [1, 2, 4, 8, 16, 32, 60, 60])
        #expect(schedule.next(now: now) == .fetch)
        schedule.fetched(accessToken: "t", expiresIn: 3599, now: now)
        #expect(schedule.failures == 0)
        #expect(schedule.next(now: now) == .wait(until: now + (3599 - 225) * Self.second))
        #expect(schedule.next(now: now + (3599 - 225) * Self.second) == .fetch)
        schedule.failed(now: now + (3599 - 225) * Self.second)
        schedule.refused(generation: 1, now: now + (3599 - 225) * Self.second)
        #expect(schedule.next(now: now + (3599 - 225) * Self.second) == .wait(until: now + (3600 - 225) * Self.second))
    }
}

/// What a token endpoint's answer becomes: the token, or an error quoting the endpoint's own
/// OAuth error, transient where google-auth would ask again.
@Suite struct FCMTokenAnswerTests {
    static func answer(_ status: Int, _ body: String) -> FCMTokenRequest.Answer {
        FCMTokenRequest.Answer(status: status, body: ByteBuffer(string: body))
    }

    static let endpoint = "http://127.0.0.1:9/token"

    @Test(arguments: [
        (#"{"access_token":"ya29.x","expires_in":3599,"token_type":"Bearer"}"#, 3599),
        (#"{"access_token":"ya29.x","expires_in":"3600","token_type":"Bearer"}"#, 3600),
    ])
    func aTokenIsRead(body: String, expiresIn: Int) throws {
        let token = try FCMTokenRequest.token(from: Self.answer(200, body), endpoint: Self.endpoint)
        #expect(token.accessToken == "ya29.x")
        #expect(token.expiresIn == expiresIn)
    }

    @Test(arguments: [
        (
            400, #"{"error":"invalid_grant","error_description":"Invalid JWT Signature."}"#,
            "answered 400 invalid_grant: Invalid JWT Signature.", FCMTokenError.Kind.refused
        ),
        (503, #"{"error":"temporarily_unavailable"}"#, "answered 503 temporarily_unavailable", .unavailable),
        (400, #"{"error":"internal_failure"}"#, "answered 400 internal_failure", .unavailable),
        (502, "<html>bad gateway</html>", "answered 502 without an OAuth error (24 bytes)", .refused),
        (429, "", "answered 429 without an OAuth error (0 bytes)", .unavailable),
        (200, "[]", "answered 200 with a body that is not a JSON object", .badAnswer),
        (200, #"{"expires_in":3599}"#, "answered 200 without an \"access_token\" string", .badAnswer),
        (200, #"{"access_token":"t","expires_in":1.5}"#, "answered 200 without a whole \"expires_in\"", .badAnswer),
        (200, #"{"access_token":"t"}"#, "answered 200 without a whole \"expires_in\"", .badAnswer),
        (
            200, #"{"access_token":"t","expires_in":0}"#,
            "answered a token that expires in 0 s (not from 1 s to a day)", .badAnswer
        ),
        (
            200, #"{"access_token":"t","expires_in":9300000000}"#,
            "answered a token that expires in 9300000000 s (not from 1 s to a day)", .badAnswer
        ),
    ])
    func aRefusalOrABadAnswerSaysWhat(status: Int, body: String, detail: String, kind: FCMTokenError.Kind) {
        #expect(throws: FCMTokenError(endpoint: Self.endpoint, kind, detail)) {
            try FCMTokenRequest.token(from: Self.answer(status, body), endpoint: Self.endpoint)
        }
    }

    @Test(arguments: ["ftp://example.com/token", "token", "https:///token"])
    func aTokenURIThatIsNotHTTPIsRefused(uri: String) {
        #expect(throws: FCMTokenError(endpoint: uri, .badURI, "is not an http or https URL with a host")) {
            try FCMTokenRequest(tokenURI: uri)
        }
    }
}
