import FanoutFCM
import FanoutInstrument
import FanoutPush
import FanoutTestSupport
import Foundation
import Testing

@testable import FanoutFCMSink

/// The FCM sink as the provider's instrument: a planted bad provider's faults counted exactly,
/// and firebase-admin used as its documentation shows passing every check.
@Suite(.requires(.python3, .firebaseAdmin)) struct FCMProviderCardTests {
    /// The counts of the card's rows, by rule.
    static func counts(_ service: FCMService) throws -> [ProviderRule: Int] {
        let checks = try #require(service.cardChecks)
        return Dictionary(uniqueKeysWithValues: checks.map { ($0.rule, $0.count) })
    }

    @Test func aPlantedBadProvidersFaultsAreCountedExactly() throws {
        let running = try FCMSinkFixture.Running(tls: false, account: true, instrument: ProviderInstrument()) {
            $0.quota = .init(messages: 11, window: 60_000_000_000)
            $0.unregisteredShare = 0.3
        }
        defer { running.stop() }
        let tokens = (0..<40).map { "planted-device-\($0)" }
        func fate(_ token: String) -> FCMTokenFate { FCMTokenFate.of(token, unregistered: 0.3, otherSender: 0) }
        let registered = Array(tokens.filter { fate($0) == .registered }.prefix(8))
        let unregistered = try #require(tokens.first { fate($0) == .unregistered })
        try #require(registered.count == 8)
        let plan = ["registered": registered, "unregistered": unregistered] as [String: Any]
        let result = try PeerProcess.run(
            "python3",
            [
                PythonPeer.path("fcm_bad_provider.py"), try #require(running.credentials), "127.0.0.1",
                String(running.port),
            ],
            input: try JSONSerialization.data(withJSONObject: plan),
            timeout: .seconds(120)
        )
        #expect(result.status == 0, "\(result.errors)")
        var statuses: [String: Int] = [:]
        for line in result.output.split(separator: "\n") {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            statuses[try #require(object["step"] as? String)] = try #require(object["status"] as? Int)
        }
        // The sink answered each step as FCM would: the faults are the provider's, not the sink's.
        #expect(
            statuses == [
                "churn": 200, "connection-close": 200, "no-bearer": 401, "unknown-bearer": 401,
                "unknown-bearer-again": 401,
                "delivered": 200, "duplicate": 200, "unregistered": 404, "unregistered-again": 404,
                "unregistered-other-message": 404, "malformed": 400, "malformed-again": 400, "filling-0": 200,
                "filling-1": 200, "over-quota": 429, "over-quota-again": 429,
                "quota-ignored": 429,
            ]
        )
        // Drained: every connection closed, its end judged.
        running.sink.drain(grace: .seconds(1))
        let service = running.sink.service
        #expect(
            try Self.counts(service) == [
                .permanentRetried: 3, .fastRetry: 1, .streamLimit: 0, .afterGoAway: 0, .churn: 2,
                .quotaIgnored: 1, .clientErrors: 8, .duplicate: 1, .accessToken: 2, .bearer: 3,
            ]
        )
        #expect(service.clientErrors.errors == 8)
        #expect(service.clientErrors.sends == 17)
        let card = try #require(service.instrument?.card)
        #expect(
            card.examples(.bearer).map(\.detail) == [
                "no Authorization: Bearer header", "a bearer the token endpoint did not issue",
                "a bearer the token endpoint did not issue, sent again after its 401",
            ]
        )
        #expect(
            card.examples(.permanentRetried).map(\.detail) == [
                "sent again after 404 UNREGISTERED", "sent again after 404 UNREGISTERED",
                "sent again after 400 INVALID_ARGUMENT",
            ]
        )
        #expect(card.examples(.permanentRetried).map(\.token).prefix(2) == [unregistered, unregistered])
        #expect(card.examples(.fastRetry).map(\.token) == [registered[7]])
        #expect(card.examples(.duplicate).map(\.token) == [registered[1]])
        // The client errors' examples are the first five, in the order answered.
        #expect(
            card.examples(.clientErrors).map(\.detail) == [
                "401 UNAUTHENTICATED: no Authorization: Bearer header",
                "401 UNAUTHENTICATED: a bearer the token endpoint did not issue",
                "401 UNAUTHENTICATED: a bearer the token endpoint did not issue, sent again after its 401",
                "404 UNREGISTERED", "404 UNREGISTERED",
            ]
        )
        // Each connection's row: the provider closed its three, the one whose send asked for
        // `connection: close` too (the sink closed it at the provider's word, not draining).
        let rows = service.connectionRows.snapshot.rows
        let sending = rows.filter { $0.requests > 0 }
        #expect(sending.map(\.requests) == [1, 1, 15])
        #expect(sending.map(\.accepted) == [1, 1, 4])
        #expect(sending.allSatisfy { $0.closedByProvider })
    }

    /// firebase-admin's documented calls, in one process that stays up as an app server does
    /// (its connection pools kept) while the sink drains, with every token registered: no check
    /// fails, and its arrivals are measured.
    @Test func firebaseAdminUsedAsDocumentedPassesTheCard() throws {
        let instrument = ProviderInstrument()
        let running = try FCMSinkFixture.Running(tls: true, account: true, instrument: instrument)
        defer { running.stop() }
        let tokens = (0..<20).map { "fcm-device-\($0)" }
        let plan: [[String: Any]] = [
            ["call": "send", "token": tokens[0]], ["call": "send_each", "tokens": tokens],
            ["call": "send_each_for_multicast", "tokens": tokens], ["call": "send_each_async", "tokens": tokens],
        ]
        let certificate = try #require(running.certificate)
        let app = try PeerProcess(
            "env",
            [
                "FANOUT_HOLD=1", "REQUESTS_CA_BUNDLE=\(certificate)", "SSL_CERT_FILE=\(certificate)", "python3",
                PythonPeer.path("fcm_send.py"), try #require(running.credentials), "https://127.0.0.1:\(running.port)",
            ],
            input: try JSONSerialization.data(withJSONObject: ["calls": plan])
        )
        let held = poll(timeout: .seconds(120)) { app.outputSoFar.hasSuffix("held\n") || !app.isRunning }
        running.sink.drain(grace: .seconds(2))
        let result = app.stop()
        try #require(held && result.output.hasSuffix("held\n"), "\(result.output) \(result.errors)")
        for line in result.output.split(separator: "\n").dropLast() {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            let outcomes = try #require(object["results"] as? [[String]]).map { $0[0] }
            #expect(Set(outcomes) == ["ok"], "\(line)")
        }
        let counts = try Self.counts(running.sink.service)
        #expect(counts.values.allSatisfy { $0 == 0 }, "\(counts)")
        #expect(counts.count == 10)
        let totals = instrument.totals.snapshot
        #expect(totals.deliveries.totalCount == UInt64(1 + 3 * tokens.count))
        #expect(totals.arrivals.totalCount == UInt64(1 + 3 * tokens.count))
        // The sink ended every connection that carried a send, draining.
        let rows = running.sink.service.connectionRows.snapshot.rows.filter { $0.requests > 0 }
        #expect(!rows.isEmpty && rows.allSatisfy { !$0.closedByProvider }, "\(rows)")
    }
}

/// The card's judgement of retries after the sink's own faults, request by request without a
/// socket: a token back before its 503's Retry-After (or the second a 500 asks) is a fast
/// retry; one back after it is not.
@Suite struct FCMCardRetryTests {
    static let second: UInt64 = 1_000_000_000

    @Test(arguments: [(0.0, 1.0), (1.0, 0.0)])
    func aRetryInsideTheWaitIsFastAndOneAfterItIsNot(internalShare: Double, unavailableShare: Double) throws {
        var configuration = FCMSinkConfiguration()
        configuration.project = "fanout-test"
        configuration.authentication = .anyBearer
        configuration.internalShare = internalShare
        configuration.unavailableShare = unavailableShare
        let service = FCMService(configuration: configuration, account: nil, instrument: ProviderInstrument())
        var exchange = FCMExchange(service: service, transport: .http2, peer: "test", seed: 7, now: 0)
        for (at, token) in [(10.0, "a"), (10.5, "a"), (11.6, "a"), (11.7, "b")] {
            let answer = FCMExchangeTests.ask(
                &exchange,
                body: #"{"message":{"token":"\#(token)"}}"#,
                now: UInt64(at * Double(Self.second))
            ).0
            #expect(answer.status == (internalShare > 0 ? 500 : 503))
        }
        let card = try #require(service.instrument?.card)
        #expect(card.count(.fastRetry) == 1)
        #expect(card.examples(.fastRetry).map(\.detail) == ["sent again 500 ms before its Retry-After ended"])
    }

    /// The card's clock is 24 bits of milliseconds and wraps every 4.66 hours: a token back
    /// 2.5 hours after its wait ended is no fast retry (its difference is bounded by the longest
    /// wait the card was told).
    @Test func aRetryHoursLaterIsNotFastAcrossTheClocksWrap() throws {
        var configuration = FCMSinkConfiguration()
        configuration.project = "fanout-test"
        configuration.authentication = .anyBearer
        configuration.unavailableShare = 1
        configuration.deviceLimits = nil
        let service = FCMService(configuration: configuration, account: nil, instrument: ProviderInstrument())
        var exchange = FCMExchange(service: service, transport: .http2, peer: "test", seed: 7, now: 0)
        for hours in [0.0, 2.5, 3.0, 4.0] {
            _ = FCMExchangeTests.ask(
                &exchange,
                body: #"{"message":{"token":"a"}}"#,
                now: UInt64((10 + hours * 3600) * Double(Self.second))
            )
        }
        #expect(try #require(service.instrument?.card).count(.fastRetry) == 0)
    }

    /// With `--no-auth` any bearer is taken, and the tokens the endpoint handed out are still
    /// judged by their use: one kept in use beside the next is not replaced; one dropped is.
    @Test func anyBearerTokensAreJudgedByUse() throws {
        var configuration = FCMSinkConfiguration()
        configuration.project = "fanout-test"
        configuration.authentication = .anyBearer
        let service = FCMService(configuration: configuration, account: nil, instrument: ProviderInstrument())
        var exchange = FCMExchange(service: service, transport: .http1, peer: "test", seed: 7, now: 0)
        func token(at seconds: UInt64) throws -> String {
            let body = FCMExchangeTests.ask(
                &exchange,
                path: "/token",
                bearer: nil,
                body: "grant_type=x",
                now: seconds * Self.second
            ).1
            let object = try #require(try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any])
            return try #require(object["access_token"] as? String)
        }
        let first = try token(at: 10)
        _ = FCMExchangeTests.ask(&exchange, bearer: first, now: 11 * Self.second)
        let second = try token(at: 12)
        // Both in use: the first beside the second.
        _ = FCMExchangeTests.ask(&exchange, bearer: second, now: 13 * Self.second)
        _ = FCMExchangeTests.ask(&exchange, bearer: first, now: 14 * Self.second)
        // The third replaces the second, which is never used again.
        _ = try token(at: 15)
        _ = FCMExchangeTests.ask(&exchange, bearer: first, now: 16 * Self.second)
        exchange.closed(now: 17 * Self.second)
        let checks = try #require(service.cardChecks)
        #expect(checks.first { $0.rule == .accessToken }?.count == 1)
    }
}
