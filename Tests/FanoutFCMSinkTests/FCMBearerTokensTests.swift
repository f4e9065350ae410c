import FanoutFCMAuth
import FanoutTestSupport
import Foundation
import NIOCore
import NIOPosix
import Testing

@testable import FanoutEndpoint
@testable import FanoutFCMSink

/// A sender's FCM bearer tokens against the sink's token endpoint (itself proven against
/// google-auth in FirebaseAdminSinkTests): the first token before a send, one the sink's send
/// method takes, a new one after a 401 and ahead of expiry, and the endpoint's refusal quoted.
///
/// The limit bounds a hang, it times nothing: each wait here has its own bound (the request's
/// timeout, the tries), but an async test also waits for a thread of Swift's cooperative pool,
/// two threads on two cores, which the suite's synchronous tests can hold for minutes on a busy
/// machine (CI once held them 220 s, and a limit of one minute failed a test that needs 1 s).
@Suite(.timeLimit(.minutes(10))) struct FCMBearerTokensTests {
    static func tokens(
        for running: FCMSinkFixture.Running,
        account: FCMServiceAccount? = nil,
        loop: any EventLoop
    ) throws -> FCMBearerTokens {
        let request = try FCMTokenRequest(
            tokenURI: running.sink.service.tokenURI!,
            trustedCertificatesFile: running.certificate
        )
        return FCMBearerTokens(account: account ?? running.sink.service.account!, request: request, loop: loop)
    }

    /// The status curl gets for one send carrying `authorization`.
    static func send(authorization: String, running: FCMSinkFixture.Running) throws -> String {
        let scheme = running.certificate == nil ? "http" : "https"
        let result = try PeerProcess.run(
            "curl",
            [
                "-sS", "-o", "/dev/null", "-w", "%{http_code}", "-X", "POST", "-H", "authorization: \(authorization)",
                "-H", "content-type: application/json", "-d", #"{"message":{"token":"abc"}}"#,
            ] + (running.certificate.map { ["--cacert", $0] } ?? [])
                + ["\(scheme)://127.0.0.1:\(running.port)/v1/projects/fanout-test/messages:send"],
            timeout: .seconds(30)
        )
        return result.output
    }

    @Test(.requires(.curl), arguments: [false, true])
    func theFirstTokenComesBeforeASendAndTheSinkTakesIt(tls: Bool) async throws {
        let running = try FCMSinkFixture.Running(tls: tls, account: true)
        defer { running.stop() }
        let group = MultiThreadedEventLoopGroup.singleton
        let tokens = try Self.tokens(for: running, loop: group.next())
        defer { tokens.stop() }
        #expect(tokens.current() == nil)
        try await tokens.start()
        let current = try #require(tokens.current())
        #expect(current.generation == 1)
        #expect(current.value.hasPrefix("Bearer ya29."))
        #expect(try Self.send(authorization: current.value, running: running) == "200")
        #expect(try Self.send(authorization: "Bearer ya29.not-issued", running: running) == "401")
        #expect(running.sink.service.statistics[.delivered] == 1)
    }

    /// A 401 to generation 1 fetches generation 2 (tokens of an hour: nothing else would).
    @Test func aRefusalBringsANewToken() async throws {
        let running = try FCMSinkFixture.Running(tls: false, account: true)
        defer { running.stop() }
        let tokens = try Self.tokens(for: running, loop: MultiThreadedEventLoopGroup.singleton.next())
        defer { tokens.stop() }
        try await tokens.start()
        let first = try #require(tokens.current())
        tokens.refused(generation: first.generation)
        await tokens.fetched(atLeast: 2)
        let second = try #require(tokens.current())
        #expect(second.generation == 2)
        #expect(second.value != first.value)
        #expect(try Self.sinkTakes(second.value, running: running))
    }

    /// Tokens that live 2 s are replaced at half their life, each a new generation.
    @Test func aShortLifeBringsNewTokens() async throws {
        let running = try FCMSinkFixture.Running(tls: false, account: true) { $0.accessTokenLifetime = 2 }
        defer { running.stop() }
        let tokens = try Self.tokens(for: running, loop: MultiThreadedEventLoopGroup.singleton.next())
        defer { tokens.stop() }
        try await tokens.start()
        await tokens.fetched(atLeast: 3)
        let current = try #require(tokens.current())
        #expect(current.generation >= 3)
        #expect(current.generation == tokens.fetchedCount)
    }

    static func sinkTakes(_ authorization: String, running: FCMSinkFixture.Running) throws -> Bool {
        try send(authorization: authorization, running: running) == "200"
    }

    /// A TLS sink whose certificate is not trusted: the handshake's failure, named as TLS's.
    @Test func anUntrustedCertificateIsATLSFailure() async throws {
        let running = try FCMSinkFixture.Running(tls: true, account: true)
        defer { running.stop() }
        let request = try FCMTokenRequest(tokenURI: running.sink.service.tokenURI!)
        let tokens = FCMBearerTokens(
            account: running.sink.service.account!,
            request: request,
            loop: MultiThreadedEventLoopGroup.singleton.next()
        )
        do {
            try await tokens.start(attempts: 1)
            Issue.record("a token came over a certificate nobody trusts")
        } catch {
            #expect(error.kind == .unreachable)
            #expect(error.detail.hasPrefix("TLS failed: "), "\(error)")
        }
    }

    /// Another key than the sink's account: the sink's own OAuth error, at the first try.
    @Test func anAssertionTheEndpointRefusesIsQuoted() async throws {
        let running = try FCMSinkFixture.Running(tls: false, account: true)
        defer { running.stop() }
        let group = MultiThreadedEventLoopGroup.singleton
        let stranger = try FCMServiceAccount.generated(project: "fanout-test")
        let tokens = try Self.tokens(for: running, account: stranger, loop: group.next())
        let uri = running.sink.service.tokenURI!
        await #expect(
            throws: FCMTokenError(endpoint: uri, .refused, "answered 400 invalid_grant: Invalid JWT Signature.")
        ) {
            try await tokens.start()
        }
        #expect(tokens.current() == nil)
    }

    /// Nothing listening: tried twice, then the connect's failure.
    @Test func anEndpointNobodyAnswersFailsAfterItsTries() async throws {
        let group = MultiThreadedEventLoopGroup.singleton
        // A port just closed: nothing listens on it.
        let closed = try await ServerBootstrap(group: group).bind(host: "127.0.0.1", port: 0).get()
        let port = closed.localAddress!.port!
        try await closed.close()
        let uri = "http://127.0.0.1:\(port)/token"
        let tokens = FCMBearerTokens(
            account: try FCMServiceAccount.generated(project: "fanout-test"),
            request: try FCMTokenRequest(tokenURI: uri),
            loop: group.next()
        )
        do {
            try await tokens.start(attempts: 2)
            Issue.record("a token came from a closed port")
        } catch {
            #expect(error.kind == .unreachable)
            #expect(error.endpoint == uri)
            #expect(error.detail.hasPrefix("cannot connect: "))
        }
    }

    /// A listener that accepts and never answers: the request's timeout ends the wait.
    @Test func anEndpointThatNeverAnswersTimesOut() async throws {
        let group = MultiThreadedEventLoopGroup.singleton
        let silent = try await ServerBootstrap(group: group).bind(host: "127.0.0.1", port: 0).get()
        defer { silent.close(promise: nil) }
        let uri = "http://127.0.0.1:\(silent.localAddress!.port!)/token"
        var request = try FCMTokenRequest(tokenURI: uri)
        request.timeout = .milliseconds(300)
        let tokens = FCMBearerTokens(
            account: try FCMServiceAccount.generated(project: "fanout-test"),
            request: request,
            loop: group.next()
        )
        await #expect(throws: FCMTokenError(endpoint: uri, .noAnswer, "no answer within 300 ms")) {
            try await tokens.start(attempts: 1)
        }
    }
}
