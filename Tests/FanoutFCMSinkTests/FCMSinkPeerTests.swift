import FanoutFCM
import FanoutFCMAuth
import FanoutInstrument
import FanoutPush
import FanoutSink
import FanoutTestSupport
import Foundation
import NIOCore
import NIOPosix
import NIOSSL
import Testing

@testable import FanoutFCMSink

/// An FCM sink on a real port, in process, and programs nobody here wrote talking to it.
enum FCMSinkFixture {
    /// A sink for `configure`'s configuration (project `fanout-test`); over TLS with a new
    /// self-signed certificate in `folder` when `tls`. The caller drains it and shuts the group.
    static func start(
        in folder: String,
        tls: Bool,
        account: Bool,
        instrument: ProviderInstrument? = nil,
        _ configure: (inout FCMSinkConfiguration) -> Void = { _ in }
    ) throws -> (FCMSink, MultiThreadedEventLoopGroup, port: Int, certificate: String?) {
        var configuration = FCMSinkConfiguration()
        configuration.project = "fanout-test"
        if !account { configuration.authentication = .anyBearer }
        configure(&configuration)
        let service = FCMService(
            configuration: configuration,
            account: account ? try FCMServiceAccount.generated(project: "fanout-test") : nil,
            instrument: instrument
        )
        var context: NIOSSLContext?
        var certificate: String?
        if tls {
            let files = try SinkCertificates.writeSelfSigned(into: folder, hosts: ["127.0.0.1"])
            context = try FCMSink.tlsContext(certificateFile: files.certificate, keyFile: files.key)
            certificate = files.certificate
        }
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let sink = try FCMSink(host: "127.0.0.1", port: 0, group: group, tls: context, service: service)
        let port = sink.localAddress.port!
        service.tokenURI = "\(tls ? "https" : "http")://127.0.0.1:\(port)/token"
        return (sink, group, port, certificate)
    }

    static func folder() throws -> String {
        let folder = NSTemporaryDirectory() + "fanout-fcm-sink-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        return folder
    }

    /// A started sink in a scratch folder: where it listens, the certificate to trust (TLS),
    /// and the credentials file written for its account (with one). `stop()` drains it (a second
    /// drain returns at once), stops its loop and removes the folder.
    final class Running {
        let sink: FCMSink
        let port: Int
        let certificate: String?
        let credentials: String?
        private let group: MultiThreadedEventLoopGroup
        private let folder: String

        init(
            tls: Bool,
            account: Bool,
            instrument: ProviderInstrument? = nil,
            _ configure: (inout FCMSinkConfiguration) -> Void = { _ in }
        ) throws {
            folder = try FCMSinkFixture.folder()
            do {
                (sink, group, port, certificate) = try start(
                    in: folder,
                    tls: tls,
                    account: account,
                    instrument: instrument,
                    configure
                )
            } catch {
                try? FileManager.default.removeItem(atPath: folder)
                throw error
            }
            let account = sink.service.account
            credentials = account == nil ? nil : folder + "/service-account.json"
            if let account, let credentials {
                do {
                    try account.json(tokenURI: sink.service.tokenURI!).write(
                        toFile: credentials,
                        atomically: true,
                        encoding: .utf8
                    )
                } catch {
                    stop()
                    throw error
                }
            }
        }

        func stop() {
            sink.drain(grace: .seconds(1))
            try? group.syncShutdownGracefully()
            try? FileManager.default.removeItem(atPath: folder)
        }
    }
}

@Suite(.requires(.python3, .firebaseAdmin)) struct FirebaseAdminSinkTests {
    /// What firebase-admin printed for each call: the exception's class or "ok", a call's lines.
    static func run(
        _ plan: [[String: Any]],
        credentials: String,
        port: Int,
        certificate: String
    ) throws -> [String: [[String]]] {
        let input = String(decoding: try JSONSerialization.data(withJSONObject: ["calls": plan]), as: UTF8.self)
        let result = try PeerProcess.run(
            "env",
            [
                "REQUESTS_CA_BUNDLE=\(certificate)", "SSL_CERT_FILE=\(certificate)", "python3",
                PythonPeer.path("fcm_send.py"), credentials, "https://127.0.0.1:\(port)",
            ],
            input: Data(input.utf8),
            timeout: .seconds(120)
        )
        #expect(result.status == 0, "\(result.errors)")
        var calls = [String: [[String]]]()
        for line in result.output.split(separator: "\n") {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            let call = try #require(object["call"] as? String)
            calls[call] = try #require(object["results"] as? [[String]], "\(line)")
        }
        return calls
    }

    @Test func firebaseAdminSendsThroughTheSinkWithATokenFromIt() throws {
        let running = try FCMSinkFixture.Running(tls: true, account: true) {
            $0.unregisteredShare = 0.2
            $0.otherSenderShare = 0.2
        }
        defer { running.stop() }
        let (sink, port, certificate) = (running.sink, running.port, running.certificate)
        let credentials = try #require(running.credentials)
        let tokens = (0..<20).map { "fcm-device-\($0)" }
        func fate(_ token: String) -> FCMTokenFate { FCMTokenFate.of(token, unregistered: 0.2, otherSender: 0.2) }
        let registered = try #require(tokens.first { fate($0) == .registered })
        let unregistered = try #require(tokens.first { fate($0) == .unregistered })
        let foreign = try #require(tokens.first { fate($0) == .otherSender })
        let plan: [[String: Any]] = [
            ["call": "send", "token": registered], ["call": "send", "token": registered, "dry_run": true],
            ["call": "send", "token": unregistered], ["call": "send", "token": foreign],
            ["call": "send_each", "tokens": tokens], ["call": "send_each_for_multicast", "tokens": tokens],
            ["call": "send_each_async", "tokens": tokens],
        ]
        // One process a plan step would load the SDK seven times; one process runs them all,
        // and a dictionary keeps the last of each call's kind: run the three sends apart.
        let sends = try plan[0..<4].map { step in
            try #require(
                Self.run([step], credentials: credentials, port: port, certificate: certificate!)["send"]?.first
            )
        }
        #expect(sends[0][0] == "ok")
        #expect(sends[0][1].hasPrefix("projects/fanout-test/messages/0:"))
        #expect(sends[1][0] == "ok")
        #expect(sends[2][0] == "UnregisteredError")
        #expect(sends[3][0] == "SenderIdMismatchError")
        let calls = try Self.run(Array(plan[4...]), credentials: credentials, port: port, certificate: certificate!)
        let expected = tokens.map { token in
            switch fate(token) {
            case .registered: "ok"
            case .unregistered: "UnregisteredError"
            case .otherSender: "SenderIdMismatchError"
            }
        }
        for call in ["send_each", "send_each_for_multicast", "send_each_async"] {
            #expect(calls[call]?.map { $0[0] } == expected, "\(call): \(calls[call] ?? [])")
        }
        let statistics = sink.service.statistics
        let delivered = expected.filter { $0 == "ok" }.count
        #expect(statistics[.delivered] == 1 + 3 * delivered)
        #expect(statistics[.validated] == 1)
        #expect(statistics[.unregistered] == 1 + 3 * expected.filter { $0 == "UnregisteredError" }.count)
        #expect(statistics[.senderIDMismatch] == 1 + 3 * expected.filter { $0 == "SenderIdMismatchError" }.count)
        // Every send carried a bearer the sink's token endpoint issued, on a grant it verified.
        #expect(statistics[.unauthenticated] == 0)
        #expect(statistics[.tokenRefused] == 0)
        #expect(statistics[.tokenIssued] >= 5)
        // send_each_async went over HTTP/2 (httpx, ALPN h2), the rest over HTTP/1.1 (requests).
        #expect(statistics.requests(over: .http2) == tokens.count)
        #expect(statistics.requests(over: .http1) == 4 + 2 * tokens.count + statistics[.tokenIssued])
    }

    /// Past the quota: over HTTP/2 (httpx, which does not wait out a 429) the SDK raises
    /// QuotaExceededError; over HTTP/1.1 (requests, whose urllib3 retries a 429 after its
    /// `Retry-After`) it waits for the next window and every send gets through.
    @Test(arguments: [("send_each_async", 60), ("send_each", 10)])
    func firebaseAdminMeetsTheProjectsQuota(call: String, windowSeconds: UInt64) throws {
        let running = try FCMSinkFixture.Running(tls: true, account: true) {
            $0.quota = .init(messages: 3, window: windowSeconds * 1_000_000_000)
        }
        defer { running.stop() }
        let (sink, port, certificate) = (running.sink, running.port, running.certificate)
        let credentials = try #require(running.credentials)
        let calls = try Self.run(
            [["call": call, "tokens": (0..<5).map { "device-\($0)" }]],
            credentials: credentials,
            port: port,
            certificate: certificate!
        )
        let outcomes = try #require(calls[call]).map { $0[0] }
        // Five sent at once into a window of three: two refused with Retry-After.
        #expect(sink.service.statistics[.quotaExceeded] == 2)
        if call == "send_each_async" {
            #expect(outcomes.filter { $0 == "ok" }.count == 3, "\(outcomes)")
            #expect(outcomes.filter { $0 == "QuotaExceededError" }.count == 2, "\(outcomes)")
            #expect(sink.service.statistics[.delivered] == 3)
        } else {
            #expect(outcomes == Array(repeating: "ok", count: 5), "\(outcomes)")
            #expect(sink.service.statistics[.delivered] == 5)
        }
    }
}

@Suite(.requires(.curl)) struct CurlFCMSinkTests {
    /// curl's status line and protocol for one send.
    static func send(_ arguments: [String], url: String) throws -> (status: String, version: String, body: String) {
        let result = try PeerProcess.run(
            "curl",
            [
                "-sS", "-X", "POST", "-H", "authorization: Bearer anything", "-H", "content-type: application/json",
                "-d", #"{"message":{"token":"abc","data":{"k":"v"}}}"#, "-w", "\n%{http_code} %{http_version}", url,
            ]
                + arguments,
            timeout: .seconds(30)
        )
        #expect(result.status == 0, "\(result.errors)")
        let lines = result.output.split(separator: "\n")
        let last = lines.last?.split(separator: " ").map(String.init) ?? []
        return (last.first ?? "", last.last ?? "", lines.dropLast().joined(separator: "\n"))
    }

    @Test(arguments: [false, true])
    func onePortServesHTTP2AndHTTP1(tls: Bool) throws {
        let running = try FCMSinkFixture.Running(tls: tls, account: false)
        defer { running.stop() }
        let (sink, port, certificate) = (running.sink, running.port, running.certificate)
        let url = "\(tls ? "https" : "http")://127.0.0.1:\(port)/v1/projects/fanout-test/messages:send"
        let trust = certificate.map { ["--cacert", $0] } ?? []
        let http2 = try Self.send((tls ? ["--http2"] : ["--http2-prior-knowledge"]) + trust, url: url)
        #expect(http2.status == "200")
        #expect(http2.version == "2")
        #expect(http2.body.hasPrefix(#"{"name":"projects/fanout-test/messages/0:1%"#))
        let http1 = try Self.send(["--http1.1"] + trust, url: url)
        #expect(http1.status == "200")
        #expect(http1.version == "1.1")
        #expect(sink.service.statistics.connections(over: .http2) == 1)
        #expect(sink.service.statistics.connections(over: .http1) == 1)
        #expect(sink.service.statistics[.delivered] == 2)
    }
}

/// HTTP/1.1 as Python's http.client speaks it: requests one after another on one connection,
/// a body past what the sink reads, and the connection still serving after it.
@Suite(.requires(.python3)) struct HTTP1FCMSinkTests {
    @Test func oneKeepAliveConnectionCarriesRequestsAndSurvivesAnOversizedBody() throws {
        let running = try FCMSinkFixture.Running(tls: false, account: false)
        defer { running.stop() }
        let (sink, port) = (running.sink, running.port)
        let script = """
            import http.client, json
            connection = http.client.HTTPConnection("127.0.0.1", \(port), timeout=20)
            path = "/v1/projects/fanout-test/messages:send"
            headers = {"authorization": "Bearer x", "content-type": "application/json"}
            bodies = ['{"message":{"token":"a"}}', '{"message":{"token":"a","data":{"k":"' + "v" * 70000 + '"}}}',
                      '{"message":{"token":"b"}}']
            for body in bodies:
                connection.request("POST", path, body=body, headers=headers)
                answer = connection.getresponse()
                print(answer.status, answer.getheader("connection"), json.loads(answer.read()).get("name", "-")[:30])
            """
        let result = try PeerProcess.run("python3", ["-c", script], timeout: .seconds(60))
        #expect(result.status == 0, "\(result.errors)")
        #expect(
            result.output.split(separator: "\n")
                == [
                    "200 None projects/fanout-test/messages/", "400 None -", "200 None projects/fanout-test/messages/",
                ],
            "\(result.output)"
        )
        #expect(sink.service.statistics.connections(over: .http1) == 1)
        #expect(sink.service.statistics.requests(over: .http1) == 3)
    }
}

/// The sink's latency and its retirement of connections over HTTP/1.1, as Python's
/// http.client sees them: each answer held no less than the latency, in order, on one
/// keep-alive connection; the answer to the N-th request says `connection: close`, the sink
/// closes after it, and the client's next request goes on a new connection.
@Suite(.requires(.python3)) struct HTTP1FCMSinkLatencyTests {
    @Test func answersAreHeldTheirLatencyAndTheNthRequestRetiresTheConnection() throws {
        let running = try FCMSinkFixture.Running(tls: false, account: false) {
            $0.latency = .fixed(.milliseconds(300))
            $0.goAwayAfterRequests = 2
        }
        defer { running.stop() }
        let (sink, port) = (running.sink, running.port)
        // Raw sockets, so that the sink's close is what is read (http.client closes by itself
        // on `connection: close`). Each request timed on the monotonic clock.
        let script = """
            import socket, time
            def connect():
                return socket.create_connection(("127.0.0.1", \(port)), timeout=20)
            def send(sock, token):
                body = '{"message":{"token":"%s"}}' % token
                sock.sendall(("POST /v1/projects/fanout-test/messages:send HTTP/1.1\\r\\nhost: x\\r\\n"
                              "authorization: Bearer x\\r\\ncontent-length: %d\\r\\n\\r\\n%s" % (len(body), body)).encode())
                started, data = time.monotonic(), b""
                while b"\\r\\n\\r\\n" not in data:
                    data += sock.recv(4096)
                head, rest = data.split(b"\\r\\n\\r\\n", 1)
                fields = dict(line.split(": ", 1) for line in head.decode().split("\\r\\n")[1:])
                while len(rest) < int(fields["content-length"]):
                    rest += sock.recv(4096)
                held = time.monotonic() - started
                status = head.split(b" ")[1].decode()
                print(status, fields.get("connection"), "held" if held >= 0.29 else "early %.3f" % held)
                return fields.get("connection")
            sock = connect()
            for token in ["a", "b"]:
                said = send(sock, token)
            print("closed" if said == "close" and sock.recv(1) == b"" else "open")
            send(connect(), "c")
            """
        let result = try PeerProcess.run("python3", ["-c", script], timeout: .seconds(60))
        #expect(result.status == 0, "\(result.errors)")
        #expect(
            result.output.split(separator: "\n") == ["200 None held", "200 close held", "closed", "200 None held"],
            "\(result.output)"
        )
        #expect(sink.service.statistics.connections(over: .http1) == 2)
        #expect(sink.service.statistics[.delivered] == 3)
    }
}

/// A drain's way with connections: an HTTP/1.1 connection between requests is closed at once
/// (NIO's quiesce), not held to the drain's grace.
@Suite(.requires(.python3)) struct FCMSinkDrainTests {
    @Test func aDrainClosesAnIdleHTTP1ConnectionAtOnce() throws {
        let running = try FCMSinkFixture.Running(tls: false, account: false)
        defer { running.stop() }
        let (sink, port) = (running.sink, running.port)
        // One request, then the client waits (up to 30 s) for the server to close.
        let script = """
            import http.client, socket, sys
            connection = http.client.HTTPConnection("127.0.0.1", \(port), timeout=30)
            connection.request("POST", "/v1/projects/fanout-test/messages:send", body='{"message":{"token":"a"}}',
                               headers={"authorization": "Bearer x"})
            print(connection.getresponse().status, flush=True)
            try:
                print("closed" if connection.sock.recv(1) == b"" else "more bytes", flush=True)
            except socket.timeout:
                print("still open after 30 s", flush=True)
            """
        let client = try PeerProcess("python3", ["-c", script])
        defer { client.stop() }
        poll(timeout: .seconds(30)) { client.outputSoFar.hasSuffix("\n") }
        #expect(client.outputSoFar == "200\n")
        // The drain's grace is longer than the client waits: only a close at once reaches it.
        let drained = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            sink.drain(grace: .seconds(60))
            drained.signal()
        }
        let result = try client.wait(timeout: .seconds(45))
        #expect(result.output == "200\nclosed\n", "\(result.errors)")
        #expect(drained.wait(timeout: .now() + 30) == .success)
    }
}
