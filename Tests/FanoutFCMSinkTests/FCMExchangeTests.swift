import FanoutFCM
import FanoutFCMAuth
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import Testing

@testable import FanoutFCMSink

/// The FCM sink's answers, request by request, without a socket: the order of its checks, each
/// refusal's status and body, the quota's window, the ids of successes.
@Suite struct FCMExchangeTests {
    static let second: UInt64 = 1_000_000_000

    static func exchange(
        _ configure: (inout FCMSinkConfiguration) -> Void = { _ in },
        account: Bool = false
    ) throws -> FCMExchange {
        var configuration = FCMSinkConfiguration()
        configuration.project = "fanout-test"
        configuration.authentication = account ? .serviceAccount : .anyBearer
        configure(&configuration)
        let service = FCMService(
            configuration: configuration,
            account: account ? try FCMServiceAccount.generated(project: configuration.project) : nil
        )
        return FCMExchange(service: service, transport: .http2, peer: "test", seed: 0xABCD)
    }

    /// Answers one request; the answer and its body as text.
    static func ask(
        _ exchange: inout FCMExchange,
        method: String = "POST",
        path: String = "/v1/projects/fanout-test/messages:send",
        bearer: String? = "any",
        body: String = #"{"message":{"token":"abc","data":{"k":"v"}}}"#,
        now: UInt64 = 10 * second
    ) -> (FCMAnswer, String) {
        let authorization = bearer.map { "Bearer \($0)" }
        let answer = Array(method.utf8).withUnsafeBytes { method in
            Array(path.utf8).withUnsafeBytes { path in
                Array(body.utf8).withUnsafeBytes { body in
                    func ask(_ authorization: UnsafeRawBufferPointer?) -> FCMAnswer {
                        exchange.answer(
                            FCMRequest(
                                method: method,
                                path: path,
                                authorization: authorization,
                                body: body,
                                bodyLength: body.count
                            ),
                            now: now
                        )
                    }
                    guard let authorization else { return ask(nil) }
                    return Array(authorization.utf8).withUnsafeBytes { ask($0) }
                }
            }
        }
        return (answer, String(buffer: exchange.body))
    }

    @Test func aSendIsAnsweredWithANameOfFCMsShapeAndCounted() throws {
        var exchange = try Self.exchange()
        let (first, body) = Self.ask(&exchange)
        #expect(first == FCMAnswer(status: 200))
        #expect(body == #"{"name":"projects/fanout-test/messages/0:1%000000000000abcd"}"#)
        let (_, second) = Self.ask(&exchange)
        #expect(second == #"{"name":"projects/fanout-test/messages/0:2%000000000000abcd"}"#)
        #expect(exchange.service.statistics[.delivered] == 2)
        #expect(exchange.service.statistics.requests(over: .http2) == 2)
    }

    /// The fault shares: a send failed (500 INTERNAL) or turned away (503 UNAVAILABLE with
    /// Retry-After) by a draw of its own, after the bearer and the project, before the quota
    /// (which they do not spend); over 20,000 sends each share within 1.5 points.
    @Test func theFaultSharesFailAndTurnAwaySendsWithFCMsBodies() throws {
        var exchange = try Self.exchange {
            $0.internalShare = 0.1
            $0.unavailableShare = 0.2
            // Room for the 200s (about 14,000) but not for every send: a fault that spent the
            // quota would bring 429s before the end.
            $0.quota = .init(messages: 15_500, window: 600 * Self.second)
            // One token throughout: no device's rate.
            $0.deviceLimits = nil
        }
        var statuses: [Int: Int] = [:]
        var bodies: [Int: String] = [:]
        for _ in 0..<20_000 {
            let (answer, body) = Self.ask(&exchange)
            statuses[answer.status, default: 0] += 1
            bodies[answer.status] = body
            if answer.status == 503 { #expect(answer.retryAfter == 1) }
            if answer.status == 500 { #expect(answer.retryAfter == nil) }
        }
        let internalShare = Double(statuses[500] ?? 0) / 20_000
        let unavailableShare = Double(statuses[503] ?? 0) / 20_000
        #expect(abs(internalShare - 0.1) < 0.015, "\(statuses)")
        #expect(abs(unavailableShare - 0.2) < 0.015, "\(statuses)")
        #expect(statuses[200]! + statuses[500]! + statuses[503]! == 20_000)
        let statistics = exchange.service.statistics
        #expect(statistics[.internalError] == statuses[500])
        #expect(statistics[.unavailable] == statuses[503])
        #expect(statistics.rejected == [.fcm(.internal): statuses[500]!, .fcm(.unavailable): statuses[503]!])
        #expect(Array(bodies[500]!.utf8).withUnsafeBytes { FCMAnswerBody.errorCode(in: $0) } == .internal)
        #expect(Array(bodies[503]!.utf8).withUnsafeBytes { FCMAnswerBody.errorCode(in: $0) } == .unavailable)
        #expect(statuses[429] == nil, "the faults spent the quota: \(statuses)")
    }

    @Test func validateOnlyIsAnsweredAsASendAndNotDelivered() throws {
        var exchange = try Self.exchange()
        let (answer, body) = Self.ask(&exchange, body: #"{"validate_only":true,"message":{"token":"abc"}}"#)
        #expect(answer.status == 200)
        #expect(body.hasPrefix(#"{"name":"projects/fanout-test/messages/"#))
        #expect(exchange.service.statistics[.validated] == 1)
        #expect(exchange.service.statistics[.delivered] == 0)
    }

    @Test func noBearerIs401WithoutAnFCMDetail() throws {
        var exchange = try Self.exchange()
        let (answer, body) = Self.ask(&exchange, bearer: nil)
        #expect(answer == FCMAnswer(status: 401))
        #expect(answer.unauthenticated)
        #expect(body == Self.text(.missingCredential))
        #expect(Self.askWithScheme(&exchange, "Basic abc", now: 1) == 401)
        #expect(Self.askWithScheme(&exchange, "Bearer ", now: 1) == 401)
        #expect(String(buffer: exchange.body) == Self.text(.missingCredential))
        #expect(exchange.service.statistics[.unauthenticated] == 3)
    }

    @Test func withAServiceAccountOnlyIssuedUnexpiredTokensPass() throws {
        var exchange = try Self.exchange(account: true)
        let (unknown, unknownBody) = Self.ask(&exchange, bearer: "ya29.made-up")
        #expect(unknown.status == 401)
        #expect(unknownBody == Self.text(.invalidCredential))
        let token = exchange.service.tokens.issue(lifetime: 60 * Self.second, now: 10 * Self.second)
        #expect(Self.ask(&exchange, bearer: token, now: 20 * Self.second).0.status == 200)
        // Once accepted it is remembered, but its expiry still holds.
        #expect(Self.ask(&exchange, bearer: token, now: 69 * Self.second).0.status == 200)
        let (expired, expiredBody) = Self.ask(&exchange, bearer: token, now: 70 * Self.second)
        #expect(expired.status == 401)
        #expect(expiredBody == Self.text(.invalidCredential))
        // The scheme's case does not matter (RFC 9110 §11.1).
        let fresh = exchange.service.tokens.issue(lifetime: 60 * Self.second, now: 70 * Self.second)
        #expect(Self.ask(&exchange, bearer: nil, now: 71 * Self.second).0.status == 401)
        #expect(Self.askWithScheme(&exchange, "bEaReR \(fresh)", now: 71 * Self.second) == 200)
    }

    /// The connection proves who it is at its first send with a bearer the sink issued, once:
    /// a refused bearer and a 404 path do not prove it (the sink's admission keeps such a
    /// connection evictable), later sends do not tell again.
    @Test func theFirstSendWithAGoodBearerProvesTheConnectionOnce() throws {
        var exchange = try Self.exchange(account: true)
        let told = NIOLockedValueBox(0)
        exchange.proved = { told.withLockedValue { $0 += 1 } }
        #expect(Self.ask(&exchange, bearer: "ya29.made-up").0.status == 401)
        #expect(Self.ask(&exchange, bearer: nil).0.status == 401)
        #expect(Self.ask(&exchange, path: "/v1/nothing").0.status == 404)
        #expect(told.withLockedValue { $0 } == 0)
        let token = exchange.service.tokens.issue(lifetime: 60 * Self.second, now: 10 * Self.second)
        #expect(Self.ask(&exchange, bearer: token, now: 20 * Self.second).0.status == 200)
        #expect(Self.ask(&exchange, bearer: token, now: 21 * Self.second).0.status == 200)
        #expect(told.withLockedValue { $0 } == 1)
        // A token granted proves its connection as well (`--no-auth` hands out one to any ask).
        var granting = try Self.exchange()
        granting.proved = { told.withLockedValue { $0 += 1 } }
        #expect(Self.ask(&granting, method: "GET", path: "/token").0.status == 404)
        #expect(told.withLockedValue { $0 } == 1)
        #expect(Self.ask(&granting, path: "/token", bearer: nil, body: "").0.status == 200)
        #expect(Self.ask(&granting, path: "/token", bearer: nil, body: "").0.status == 200)
        #expect(told.withLockedValue { $0 } == 2)
    }

    static func askWithScheme(_ exchange: inout FCMExchange, _ authorization: String, now: UInt64) -> Int {
        let body = #"{"message":{"token":"abc"}}"#
        return Array("POST".utf8).withUnsafeBytes { method in
            Array("/v1/projects/fanout-test/messages:send".utf8).withUnsafeBytes { path in
                Array(body.utf8).withUnsafeBytes { body in
                    Array(authorization.utf8).withUnsafeBytes { authorization in
                        exchange.answer(
                            FCMRequest(
                                method: method,
                                path: path,
                                authorization: authorization,
                                body: body,
                                bodyLength: body.count
                            ),
                            now: now
                        ).status
                    }
                }
            }
        }
    }

    @Test func anotherProjectIsPermissionDeniedNamingIt() throws {
        var exchange = try Self.exchange()
        let (answer, body) = Self.ask(&exchange, path: "/v1/projects/someone-else/messages:send")
        #expect(answer.status == 403)
        #expect(body == Self.text(.wrongProject("someone-else")))
        #expect(Array(body.utf8).withUnsafeBytes { FCMAnswerBody.status(in: $0) } == .permissionDenied)
        #expect(Array(body.utf8).withUnsafeBytes { FCMAnswerBody.errorCode(in: $0) } == nil)
        #expect(exchange.service.statistics[.wrongProject] == 1)
    }

    @Test(arguments: [
        ("GET", "/v1/projects/fanout-test/messages:send"), ("POST", "/v1/projects/fanout-test/messages:sent"),
        ("POST", "/v1/projects//messages:send"), ("POST", "/"), ("GET", "/token"),
        ("POST", "/v1/projects/fanout-test/messages:send/extra"),
    ])
    func whatIsNoMethodIsNotFound(method: String, path: String) throws {
        var exchange = try Self.exchange()
        let (answer, body) = Self.ask(&exchange, method: method, path: path)
        #expect(answer.status == 404, "\(method) \(path)")
        #expect(body == Self.text(.methodNotFound), "\(method) \(path)")
    }

    @Test func aQueryDoesNotChangeTheMethod() throws {
        var exchange = try Self.exchange()
        #expect(Self.ask(&exchange, path: "/v1/projects/fanout-test/messages:send?alt=json").0.status == 200)
    }

    @Test func aBadBodyIsFCMsOwnRefusal() throws {
        var exchange = try Self.exchange()
        let (two, twoBody) = Self.ask(&exchange, body: #"{"message":{"token":"a","topic":"b"}}"#)
        #expect(two.status == 400)
        #expect(twoBody == Self.text(.moreThanOneTarget(["token", "topic"])))
        let (number, numberBody) = Self.ask(&exchange, body: #"{"message":{"token":"a","data":{"n":12}}}"#)
        #expect(number.status == 400)
        #expect(numberBody == Self.text(.dataValueNotString(index: 0, value: "12")))
        let (ttl, _) = Self.ask(&exchange, body: #"{"message":{"token":"a","android":{"ttl":"-1s"}}}"#)
        #expect(ttl.status == 400)
        #expect(exchange.service.statistics[.invalidArgument] == 3)
    }

    @Test func tokensAreHeldUnregisteredOrAnotherSendersByTheirHash() throws {
        var exchange = try Self.exchange {
            $0.unregisteredShare = 0.25
            $0.otherSenderShare = 0.25
        }
        var seen = [FCMTokenFate: Int]()
        for index in 0..<400 {
            let token = "token-\(index)"
            let fate = FCMTokenFate.of(token, unregistered: 0.25, otherSender: 0.25)
            seen[fate, default: 0] += 1
            let (answer, body) = Self.ask(&exchange, body: #"{"message":{"token":"\#(token)"}}"#)
            switch fate {
            case .registered: #expect(answer.status == 200)
            case .unregistered:
                #expect(answer.status == 404)
                #expect(body == Self.text(.unregistered))
            case .otherSender:
                #expect(answer.status == 403)
                #expect(body == Self.text(.senderIDMismatch))
            }
        }
        // A quarter each, within what 400 draws allow (±5 standard deviations).
        for fate in [FCMTokenFate.unregistered, .otherSender] {
            #expect((64...136).contains(seen[fate, default: 0]), "\(fate): \(seen)")
        }
        #expect(exchange.service.statistics[.unregistered] == seen[.unregistered])
        #expect(exchange.service.statistics[.senderIDMismatch] == seen[.otherSender])
        // Topics have no device to be unregistered.
        #expect(Self.ask(&exchange, body: #"{"message":{"topic":"news"}}"#).0.status == 200)
    }

    @Test func theQuotaWindowStartsWithTheFirstCountedMessageAndRefusesPastIt() throws {
        var exchange = try Self.exchange { $0.quota = .init(messages: 3, window: 60 * Self.second) }
        let start: UInt64 = 100 * Self.second
        // A 400 counts (FCM counts client errors but 429).
        #expect(Self.ask(&exchange, body: "{", now: start).0.status == 400)
        #expect(Self.ask(&exchange, now: start + Self.second).0.status == 200)
        #expect(Self.ask(&exchange, now: start + 2 * Self.second).0.status == 200)
        let (refused, body) = Self.ask(&exchange, now: start + 20 * Self.second + 1)
        #expect(refused == FCMAnswer(status: 429, retryAfter: 40))
        #expect(body == Self.text(.quotaExceeded(.project("fanout-test"), retryAfter: 40)))
        // Refused until the window ends, Retry-After rounded up to a whole second.
        #expect(Self.ask(&exchange, now: start + 60 * Self.second - 1).0 == FCMAnswer(status: 429, retryAfter: 1))
        #expect(Self.ask(&exchange, now: start + 60 * Self.second).0.status == 200)
        #expect(exchange.service.statistics[.quotaExceeded] == 2)
    }

    @Test func aBodyPastWhatTheSinkReadsIsRefused() throws {
        var exchange = try Self.exchange()
        let body = #"{"message":{"token":"abc"}}"#
        let answer = Array("POST".utf8).withUnsafeBytes { method in
            Array("/v1/projects/fanout-test/messages:send".utf8).withUnsafeBytes { path in
                Array(body.utf8).withUnsafeBytes { bytes in
                    Array("Bearer x".utf8).withUnsafeBytes { authorization in
                        exchange.answer(
                            FCMRequest(
                                method: method,
                                path: path,
                                authorization: authorization,
                                body: bytes,
                                bodyLength: 70_000
                            ),
                            now: 1
                        )
                    }
                }
            }
        }
        #expect(answer.status == 400)
        #expect(String(buffer: exchange.body) == Self.text(.tooLarge))
    }

    static func text(_ error: FCMError) -> String {
        var buffer = ByteBuffer()
        error.write(into: &buffer)
        return String(buffer: buffer)
    }
}

/// Each device's rates: the minute's and the hour's sends, and the collapsible burst.
@Suite struct FCMDeviceRateTests {
    static let second = FCMExchangeTests.second

    /// `seconds` after now, as an uptime in nanoseconds.
    static func sinceNow(_ seconds: UInt64) -> UInt64 { NIODeadline.now().uptimeNanoseconds + seconds * second }

    static func exchange(perMinute: UInt32, perHour: UInt32, quota: Int = 1000) throws -> FCMExchange {
        try FCMExchangeTests.exchange {
            $0.deviceLimits = .init(perMinute: perMinute, perHour: perHour)
            $0.quota = .init(messages: quota)
        }
    }

    @Test func aDevicePastItsMinuteIsRefusedUntilTheMinuteEndsAndPastItsHourUntilTheHourEnds() throws {
        var exchange = try Self.exchange(perMinute: 3, perHour: 5)
        // The rates count seconds from the sink's start, an uptime: the asks come after it (on a
        // machine up for less than an hour, a start of 1,000 s fell before it and the hour's
        // end read as 1.27 billion seconds away).
        let start = Self.sinceNow(1000)
        for offset in 0..<3 {
            #expect(FCMExchangeTests.ask(&exchange, now: start + UInt64(offset) * Self.second).0.status == 200)
        }
        let (refused, body) = FCMExchangeTests.ask(&exchange, now: start + 10 * Self.second)
        #expect(refused == FCMAnswer(status: 429, retryAfter: 50))
        #expect(body == FCMExchangeTests.text(.quotaExceeded(.device("abc"), retryAfter: 50)))
        // Another device is not held back by it.
        #expect(
            FCMExchangeTests.ask(&exchange, body: #"{"message":{"token":"other"}}"#, now: start + 10 * Self.second).0
                .status == 200
        )
        // The next minute: two more, then the hour's five are spent.
        #expect(FCMExchangeTests.ask(&exchange, now: start + 60 * Self.second).0.status == 200)
        #expect(FCMExchangeTests.ask(&exchange, now: start + 61 * Self.second).0.status == 200)
        #expect(
            FCMExchangeTests.ask(&exchange, now: start + 62 * Self.second).0 == FCMAnswer(status: 429, retryAfter: 3538)
        )
        #expect(FCMExchangeTests.ask(&exchange, now: start + 3600 * Self.second).0.status == 200)
        #expect(exchange.service.statistics[.quotaExceeded] == 2)
        #expect(exchange.service.statistics[.delivered] == 7)
    }

    @Test func aDevicesRefusalDoesNotCountAgainstTheProject() throws {
        var exchange = try Self.exchange(perMinute: 1, perHour: 100, quota: 2)
        let now = 50 * Self.second
        #expect(FCMExchangeTests.ask(&exchange, now: now).0.status == 200)
        #expect(FCMExchangeTests.ask(&exchange, now: now).0.status == 429)
        // Had the device's 429 counted, the project's two would be spent.
        #expect(FCMExchangeTests.ask(&exchange, body: #"{"message":{"token":"other"}}"#, now: now).0.status == 200)
        #expect(FCMExchangeTests.ask(&exchange, body: #"{"message":{"token":"third"}}"#, now: now).0.retryAfter == 60)
    }

    @Test func collapsibleMessagesPastTheBurstAreAcceptedAndHeld() throws {
        var exchange = try Self.exchange(perMinute: 1000, perHour: 10_000)
        let collapsible = #"{"message":{"token":"abc","android":{"collapse_key":"score"}}}"#
        let start = Self.sinceNow(10)
        for _ in 0..<20 { #expect(FCMExchangeTests.ask(&exchange, body: collapsible, now: start).0.status == 200) }
        #expect(exchange.service.statistics[.delivered] == 20)
        // The 21st is answered 200 as FCM does, and its delivery held.
        #expect(FCMExchangeTests.ask(&exchange, body: collapsible, now: start + Self.second).0.status == 200)
        #expect(exchange.service.statistics[.held] == 1)
        // Messages without a collapse key are not in the burst.
        #expect(FCMExchangeTests.ask(&exchange, now: start + Self.second).0.status == 200)
        #expect(exchange.service.statistics[.delivered] == 21)
        // One comes back every three minutes after the first was taken.
        #expect(FCMExchangeTests.ask(&exchange, body: collapsible, now: start + 179 * Self.second).0.status == 200)
        #expect(exchange.service.statistics[.held] == 2)
        #expect(FCMExchangeTests.ask(&exchange, body: collapsible, now: start + 180 * Self.second).0.status == 200)
        #expect(exchange.service.statistics[.delivered] == 22)
        #expect(FCMExchangeTests.ask(&exchange, body: collapsible, now: start + 181 * Self.second).0.status == 200)
        #expect(exchange.service.statistics[.held] == 3)
    }

    @Test func validateOnlyAndTopicsAreNoDevicesSends() throws {
        var exchange = try Self.exchange(perMinute: 1, perHour: 1)
        for _ in 0..<3 {
            #expect(
                FCMExchangeTests.ask(&exchange, body: #"{"validate_only":true,"message":{"token":"abc"}}"#).0.status
                    == 200
            )
            #expect(FCMExchangeTests.ask(&exchange, body: #"{"message":{"topic":"news"}}"#).0.status == 200)
        }
    }
}
