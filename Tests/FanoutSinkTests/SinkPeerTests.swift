import Crypto
import FanoutAPNs
import FanoutHTTP2
import FanoutTestSupport
import Foundation
import NIOCore
import NIOPosix
import Testing

@testable import FanoutSink

/// The sink on a real socket, asked by clients nobody here wrote: Python's h2 through every
/// validation rule, PyJWT's tokens, curl over h2c and TLS, and h2load for load.
@Suite(.serialized) struct SinkPeerTests {
    /// A sink on loopback with one event loop, stopped by `stop()`.
    final class RunningSink {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let sink: Sink
        var port: Int { sink.localAddress.port! }

        init(_ configuration: SinkConfiguration = .init(), transport: HTTP2Transport = .cleartext) throws {
            sink = try Sink(
                host: "127.0.0.1",
                port: 0,
                group: group,
                transport: transport,
                configuration: configuration
            )
        }

        func stop() {
            sink.drain(grace: .seconds(2))
            try? group.syncShutdownGracefully()
        }
    }

    struct Answer: Decodable, Equatable {
        var status: Int
        var reason: String?
        var timestamp: Int64?
        var apns_id: String?
        var content_type: String?
        var reset: Int?
        var apns_request_id: String?
        var apns_channel_id: String?
        var channels: [String]?
        var message_storage_policy: Int?
    }

    static func python(_ script: String, _ arguments: [String], input: Data? = nil) throws -> String {
        let path = String(#filePath[..<#filePath.lastIndex(of: "/")!]) + "/Peers/" + script
        let result = try PeerProcess.run("python3", [path] + arguments, input: input)
        #expect(result.status == 0, "\(script): \(result.errors)")
        return result.output
    }

    static func ask(
        port: Int,
        _ requests: [(headers: [(String, String)], body: String)],
        tls: String? = nil
    ) throws -> [Answer] {
        let json = try JSONSerialization.data(
            withJSONObject: requests.map { ["headers": $0.headers.map { [$0.0, $0.1] }, "body": $0.body] }
        )
        let output = try python("apns_client.py", ["\(port)"] + (tls.map { ["--tls", $0] } ?? []), input: json)
        return try JSONDecoder().decode([Answer].self, from: Data(output.utf8))
    }

    @Test(.requires(.h2)) func pythonH2GetsEveryValidationAnswer() throws {
        let running = try RunningSink()
        defer { running.stop() }
        let cases = APNsRequestCheckTests.cases
        let answers = try Self.ask(
            port: running.port,
            cases.map { (SinkHarness.fields(token: $0.token, $0.changes), $0.body) }
        )
        try #require(answers.count == cases.count)
        for (testCase, answer) in zip(cases, answers) {
            #expect(answer.status == testCase.status, "\(testCase.name)")
            #expect(answer.reason == testCase.reason, "\(testCase.name)")
            #expect(answer.apns_id?.count == 36, "\(testCase.name)")
            #expect(answer.content_type == (testCase.status == 200 ? nil : "application/json"), "\(testCase.name)")
        }
        running.sink.drain(grace: .seconds(2))
        let summary = running.sink.statistics.summary
        #expect(summary.requests == cases.count)
        #expect(summary.accepted == cases.count { $0.status == 200 })
        #expect(summary.rejected.values.reduce(0, +) == cases.count { $0.status != 200 })
    }

    @Test(.requires(.h2)) func duplicateHeadersFromPythonH2() throws {
        let running = try RunningSink()
        defer { running.stop() }
        var fields = SinkHarness.fields()
        fields.append(("apns-topic", "com.example.app"))
        let answers = try Self.ask(port: running.port, [(fields, "{}")])
        #expect(answers.first?.status == 400)
        #expect(answers.first?.reason == "DuplicateHeaders")
    }

    @Test(.requires(.h2, .jwt, .cryptography)) func pyjwtTokensAreAcceptedAndTamperedOnesRefused() throws {
        let key = P256.Signing.PrivateKey()
        let folder = NSTemporaryDirectory() + "fanout-key-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let p8 = folder + "/AuthKey_ABC123DEFG.p8"
        try key.pemRepresentation.write(toFile: p8, atomically: true, encoding: .utf8)

        var configuration = SinkConfiguration()
        configuration.tokenAuthentication = TokenAuthentication(
            keys: [try TokenAuthentication.Key(keyID: "ABC123DEFG", teamID: "DEF123GHIJ", pem: key.pemRepresentation)]
        )
        let running = try RunningSink(configuration)
        defer { running.stop() }
        let now = Int64(Date().timeIntervalSince1970)
        let token = try Self.python("provider_token.py", [p8, "ABC123DEFG", "DEF123GHIJ", "\(now)"])
            .trimmingCharacters(in: .whitespacesAndNewlines)
        var tampered = Array(token)
        tampered[tampered.count - 5] = tampered[tampered.count - 5] == "A" ? "B" : "A"
        let old = try Self.python("provider_token.py", [p8, "ABC123DEFG", "DEF123GHIJ", "\(now - 7200)"])
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let request = { (token: String) in
            (SinkHarness.fields([("authorization", "bearer \(token)")]), SinkHarness.poll)
        }
        // Separate connections: a connection keeps its first token.
        #expect(try Self.ask(port: running.port, [request(String(tampered))]).map(\.reason) == ["InvalidProviderToken"])
        #expect(try Self.ask(port: running.port, [request(old)]).map(\.reason) == ["ExpiredProviderToken"])
        let answers = try Self.ask(port: running.port, [request(token), request(token)])
        #expect(answers.map(\.status) == [200, 200])
    }

    @Test(.requires(.curl, .openssl, .h2)) func curlOverH2cAndTLS() throws {
        let running = try RunningSink()
        defer { running.stop() }
        let path = "/3/device/" + String(repeating: "ab", count: 32)
        let plain = try PeerProcess.run(
            "curl",
            [
                "-s", "--http2-prior-knowledge", "--max-time", "20", "-d", "@\(repositoryRoot)/fixtures/poll.json",
                "-H", "apns-topic: com.example.app", "-H", "apns-push-type: alert", "-D", "-",
                "-w", "%{http_version} %{http_code}", "http://127.0.0.1:\(running.port)\(path)",
            ]
        )
        // The answer's apns-id header, whole: a canonical UUID.
        let ids = lines(of: plain.output, keyed: "apns-id: ")
        #expect(
            ids.count == 1
                && ids[0].wholeMatch(of: #/apns-id: [0-9A-F]{8}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{12}/#)
                    != nil,
            "\(plain.output)"
        )
        #expect(plain.output.hasSuffix("2 200"), "\(plain.output)")

        let folder = NSTemporaryDirectory() + "fanout-tls-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let made = try PeerProcess.run(
            "openssl",
            [
                "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout",
                folder + "/key.pem", "-out", folder + "/cert.pem", "-days", "2", "-subj", "/CN=localhost",
                "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1",
            ]
        )
        try #require(made.status == 0, "\(made.errors)")
        let tlsSink = try RunningSink(
            transport: .tlsServer(certificateFile: folder + "/cert.pem", keyFile: folder + "/key.pem")
        )
        defer { tlsSink.stop() }
        let big = String(repeating: "x", count: 5000)
        let tls = try PeerProcess.run(
            "curl",
            [
                "-s", "--http2", "--cacert", folder + "/cert.pem", "--max-time", "20",
                "-d", #"{"aps":{"alert":"\#(big)"}}"#, "-H", "apns-topic: com.example.app",
                "-w", " %{http_version} %{http_code}", "https://localhost:\(tlsSink.port)\(path)",
            ]
        )
        #expect(tls.output == #"{"reason":"PayloadTooLarge"} 2 413"#, "\(tls.errors)")
        let answers = try Self.ask(
            port: tlsSink.port,
            [(SinkHarness.fields(), SinkHarness.poll)],
            tls: folder + "/cert.pem"
        )
        #expect(answers.map(\.status) == [200])
    }

    @Test(.requires(.h2load)) func h2loadLoadIsCountedWithoutLoss() throws {
        let running = try RunningSink()
        defer { running.stop() }
        let token = String(repeating: "ab", count: 32)
        let result = try PeerProcess.run(
            "h2load",
            [
                "-n", "20000", "-c", "4", "-m", "100", "-t", "1", "-d", "\(repositoryRoot)/fixtures/poll.json",
                "-H", "apns-topic: com.example.app", "-H", "apns-push-type: alert",
                "http://127.0.0.1:\(running.port)/3/device/\(token)",
            ]
        )
        #expect(H2loadReport(result.output) == .allSucceeded(20000), "\(result.output)")
        running.sink.drain(grace: .seconds(2))
        let summary = running.sink.statistics.summary
        #expect(summary.requests == 20000)
        #expect(summary.accepted == 20000)
        // The same notification 20,000 times: the digest is its hash added 20,000 times.
        let payload = try Data(contentsOf: URL(fileURLWithPath: "\(repositoryRoot)/fixtures/poll.json"))
        let expected = NotificationDigestProbe.digest(token: token, payload: payload, times: 20000)
        #expect(summary.digest == expected)
    }
}

enum NotificationDigestProbe {
    static func digest(token: String, payload: Data, times: Int) -> NotificationDigest {
        var digest = NotificationDigest()
        let tokenBytes = Array(token.utf8)
        let hash = tokenBytes.withUnsafeBytes { token in
            payload.withUnsafeBytes { payload in NotificationDigest.hash(token: token, payload: payload) }
        }
        for _ in 0..<times { digest.add(hash: hash) }
        return digest
    }
}
