import FanoutTestSupport
import Foundation
import NIOCore
import Testing

@testable import FanoutHTTP2

/// Fanout's HTTP/2 against implementations nobody here wrote: h2load, nghttp, curl and
/// Python's h2 as clients of a Fanout server; nghttpd as the server for Fanout's client; over
/// cleartext (prior knowledge) and TLS (ALPN h2).
@Suite(.serialized) struct PeerInteroperabilityTests {
    static let pollFile = repositoryRoot + "/fixtures/poll.json"

    @Test(.requires(.h2load)) func h2loadGetsEveryAnswerFromAFanoutServer() throws {
        let server = try FanoutServer()
        defer { server.stop() }
        for (connections, streams) in [(4, 100), (1, 1000)] {
            let result = try PeerProcess.run(
                "h2load",
                [
                    "-n", "20000", "-c", "\(connections)", "-m", "\(streams)", "-t", "1", "-d", Self.pollFile,
                    "-H", "apns-topic: com.example.app", "-H", "apns-push-type: alert",
                    "http://127.0.0.1:\(server.port)/3/device/\(String(repeating: "ab", count: 32))",
                ]
            )
            #expect(result.status == 0, "\(result.errors)")
            #expect(H2loadReport(result.output) == .allSucceeded(20000), "\(result.output)")
        }
    }

    @Test(.requires(.h2load, .openssl)) func h2loadOverTLSNegotiatesH2() throws {
        let certificate = try TestCertificate()
        defer { certificate.remove() }
        let server = try FanoutServer(certificate: certificate)
        defer { server.stop() }
        let result = try PeerProcess.run(
            "h2load",
            [
                "-n", "2000", "-c", "2", "-m", "100", "-t", "1", "-d", Self.pollFile,
                "https://127.0.0.1:\(server.port)/3/device/ab",
            ]
        )
        #expect(
            lines(of: result.output, keyed: "Application protocol: ") == ["Application protocol: h2"],
            "\(result.output)"
        )
        #expect(H2loadReport(result.output) == .allSucceeded(2000), "\(result.output)")
    }

    @Test(.requires(.curl, .openssl)) func curlWithPriorKnowledgeAndOverTLS() throws {
        let server = try FanoutServer()
        defer { server.stop() }
        let plain = try PeerProcess.run(
            "curl",
            [
                "-s", "--http2-prior-knowledge", "--max-time", "20", "-d", "@\(Self.pollFile)",
                "-H", "content-type: application/json", "-w", "\n%{http_version} %{http_code}",
                "http://127.0.0.1:\(server.port)/3/device/abcd",
            ]
        )
        #expect(plain.output == pollBody + "\n2 200", "\(plain.errors)")

        let certificate = try TestCertificate()
        defer { certificate.remove() }
        let tlsServer = try FanoutServer(certificate: certificate)
        defer { tlsServer.stop() }
        let tls = try PeerProcess.run(
            "curl",
            [
                "-s", "--http2", "--cacert", certificate.certificate, "--max-time", "20",
                "-w", "\n%{http_version} %{http_code}", "https://localhost:\(tlsServer.port)/3/device/abcd",
            ]
        )
        #expect(tls.output == "/3/device/abcd\n2 200", "\(tls.errors)")
    }

    @Test(.requires(.nghttp)) func nghttpSeesSettingsAndAnswers() throws {
        let server = try FanoutServer()
        defer { server.stop() }
        let result = try PeerProcess.run(
            "nghttp",
            ["-nv", "-d", Self.pollFile, "-H", ":method: POST", "http://127.0.0.1:\(server.port)/3/device/ab"],
            timeout: .seconds(30)
        )
        #expect(result.status == 0, "\(result.errors)")
        // nghttp's lines without their time stamps ("[  0.002] ") and indentation, each whole.
        let said = result.output.split(separator: "\n").map { line in
            String(line.replacing(#/^\[ *[0-9.]+\] /#, with: "").drop { $0 == " " })
        }.joined(separator: "\n")
        // The server's SETTINGS, whole: the frame and each setting.
        let saidLines = said.split(separator: "\n").map(String.init)
        let settings = saidLines.firstIndex(of: "recv SETTINGS frame <length=18, flags=0x00, stream_id=0>")
        #expect(
            settings.map { Array(saidLines[($0 + 1)...].prefix(4)) }
                == [
                    "(niv=3)", "[SETTINGS_MAX_CONCURRENT_STREAMS(0x03):100]",
                    "[SETTINGS_INITIAL_WINDOW_SIZE(0x04):1048576]",
                    "[SETTINGS_MAX_HEADER_LIST_SIZE(0x06):16384]",
                ],
            "\(result.output)"
        )
        #expect(
            lines(of: said, keyed: "recv (stream_id=13) :status") == ["recv (stream_id=13) :status: 200"],
            "\(said)"
        )
        #expect(
            lines(of: said, keyed: "recv (stream_id=13) x-body-length")
                == ["recv (stream_id=13) x-body-length: \(pollBody.utf8.count)"],
            "\(said)"
        )
    }

    @Test(.requires(.h2)) func pythonH2ClientFlowControlAndPing() throws {
        let server = try FanoutServer()
        defer { server.stop() }
        let output = try PythonPeer.run("h2_client.py", ["\(server.port)"])
        struct Report: Decodable {
            var responses: Int
            var problems: [String]
            var ping: Bool
            var max_concurrent_streams: Int?
        }
        let report = try JSONDecoder().decode(Report.self, from: Data(output.utf8))
        #expect(report.responses == 37)
        #expect(report.problems == [])
        #expect(report.ping)
        #expect(report.max_concurrent_streams == 100)
    }

    @Test(.requires(.nghttpd)) func fanoutClientAgainstNghttpd() throws {
        let nghttpd = try NghttpdServer()
        defer { nghttpd.stop() }
        let fields = HTTP2Fields([
            (":method", "POST"), (":scheme", "http"), (":path", "/index.html"), (":authority", "127.0.0.1"),
            ("apns-topic", "com.example.app"),
        ])
        // More requests than nghttpd's 100 concurrent streams, with a body each.
        let results = try sendRequests(
            port: nghttpd.port,
            total: 3000,
            fields: fields,
            body: ByteBuffer(string: pollBody)
        )
        let (responses, resets, error) = results.snapshot
        #expect(resets.isEmpty)
        #expect(error == nil)
        #expect(responses.count == 3000)
        #expect(responses.values.allSatisfy { $0 == .init(status: 200, body: NghttpdServer.document) })
    }

    @Test(.requires(.nghttpd, .openssl)) func fanoutClientAgainstNghttpdOverTLS() throws {
        let certificate = try TestCertificate()
        defer { certificate.remove() }
        let nghttpd = try NghttpdServer(certificate: certificate)
        defer { nghttpd.stop() }
        let fields = HTTP2Fields([
            (":method", "GET"), (":scheme", "https"), (":path", "/index.html"), (":authority", "localhost"),
        ])
        let results = try sendRequests(
            port: nghttpd.port,
            total: 200,
            fields: fields,
            body: nil,
            transport: .tlsClient(trustedCertificatesFile: certificate.certificate)
        )
        let (responses, _, error) = results.snapshot
        #expect(error == nil)
        #expect(responses.count == 200)
        #expect(responses.values.allSatisfy { $0 == .init(status: 200, body: NghttpdServer.document) })
    }

    @Test(.requires(.curl, .openssl)) func aTLSPeerThatDoesNotOfferH2IsRefused() throws {
        let certificate = try TestCertificate()
        defer { certificate.remove() }
        let server = try FanoutServer(certificate: certificate)
        defer { server.stop() }
        let result = try PeerProcess.run(
            "curl",
            ["-s", "--http1.1", "-k", "--max-time", "20", "-w", "%{http_code}", "https://127.0.0.1:\(server.port)/"]
        )
        #expect(result.output == "000")
        #expect(result.status != 0)
    }
}
