import FanoutTestSupport
import Foundation
import NIOCore
import NIOPosix

@testable import FanoutHTTP2

/// Answers every request with 200, echoing the request body (or the path, when there is no
/// body) and the body's length in `x-body-length`.
struct EchoResponder: HTTP2ConnectionDelegate {
    mutating func handle(_ event: HTTP2Event, connection: inout HTTP2Writer) {
        guard case .message(let request) = event else { return }
        let body = ByteBuffer(
            bytes: request.bodyLength > 0
                ? request.body : (request.headers.first(":path") ?? .init(start: nil, count: 0))
        )
        let fields = HTTP2Fields([(":status", "200"), ("x-body-length", "\(request.bodyLength)")])
        connection.respond(stream: request.stream, fields, body: body)
    }
}

/// A Fanout HTTP/2 server on loopback with one event loop, stopped by `stop()`.
final class FanoutServer {
    let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    let channel: any Channel
    var port: Int { channel.localAddress!.port! }

    init(
        transport: HTTP2Transport = .cleartext,
        configuration: HTTP2Connection.Configuration = .init(),
        settingsTimeout: TimeAmount = .seconds(10)
    ) throws {
        channel = try HTTP2Channels.listen(
            host: "127.0.0.1",
            port: 0,
            group: group,
            transport: transport,
            configuration: configuration,
            settingsTimeout: settingsTimeout,
            makeDelegate: { _ in EchoResponder() }
        ).wait()
    }

    /// A server over TLS with `certificate`.
    convenience init(certificate: TestCertificate) throws {
        try self.init(transport: .tlsServer(certificateFile: certificate.certificate, keyFile: certificate.key))
    }

    func stop() {
        try? channel.close().wait()
        try? group.syncShutdownGracefully()
    }
}

/// What a Fanout client saw: one entry per request, by tag.
final class ClientResults: @unchecked Sendable {
    struct Response: Equatable {
        var status: Int
        var body: String
    }

    private let lock = NSLock()
    private let done = DispatchSemaphore(value: 0)
    private(set) var responses: [UInt64: Response] = [:]
    private(set) var resets: [UInt64: HTTP2ErrorCode] = [:]
    private(set) var endError: (any Error)?
    private var ended = false

    func record(_ tag: UInt64, _ response: Response) { lock.withLock { responses[tag] = response } }
    func record(_ tag: UInt64, reset code: HTTP2ErrorCode) { lock.withLock { resets[tag] = code } }

    func end(_ error: (any Error)?) {
        lock.withLock {
            guard !ended else { return }
            ended = true
            endError = error
        }
        done.signal()
    }

    /// Waits for the connection to end, within `seconds`.
    func wait(seconds: Int = 60) -> Bool { done.wait(timeout: .now() + .seconds(seconds)) == .success }

    var snapshot: (responses: [UInt64: Response], resets: [UInt64: HTTP2ErrorCode], error: (any Error)?) {
        lock.withLock { (responses, resets, endError) }
    }
}

/// Sends `total` requests, keeping as many in flight as the peer allows, then sends GOAWAY so
/// the connection closes once every response is in.
struct RequestSender: HTTP2ConnectionDelegate {
    let total: Int
    let fields: HTTP2Fields
    let body: ByteBuffer?
    let results: ClientResults
    var sent = 0
    var finished = 0

    mutating func connectionStarted(_ connection: inout HTTP2Writer) { sendMore(&connection) }

    mutating func handle(_ event: HTTP2Event, connection: inout HTTP2Writer) {
        switch event {
        case .message(let response):
            results.record(
                response.tag,
                .init(status: response.status, body: String(decoding: response.body, as: UTF8.self))
            )
            finished += 1
        case .streamReset(_, let tag, let code, _):
            results.record(tag, reset: code)
            finished += 1
        default: break
        }
        sendMore(&connection)
        if finished == total { connection.goAway() }
    }

    private mutating func sendMore(_ connection: inout HTTP2Writer) {
        while sent < total && connection.availableStreams > 0 {
            guard (try? connection.sendRequest(fields, body: body, tag: UInt64(sent))) != nil else { return }
            sent += 1
        }
    }

    mutating func connectionEnded(_ connection: borrowing HTTP2Connection, error: (any Error)?) { results.end(error) }
}

/// Runs `RequestSender` against `host:port` and returns what it saw.
func sendRequests(
    port: Int,
    total: Int,
    fields: HTTP2Fields,
    body: ByteBuffer?,
    transport: HTTP2Transport = .cleartext,
    configuration: HTTP2Connection.Configuration = .init()
) throws -> ClientResults {
    let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    defer { try? group.syncShutdownGracefully() }
    let results = ClientResults()
    let (channel, _) = try HTTP2Channels.connect(
        host: "127.0.0.1",
        port: port,
        group: group,
        transport: transport,
        serverHostname: "localhost",
        configuration: configuration,
        delegate: { RequestSender(total: total, fields: fields, body: body, results: results) }
    ).wait()
    if !results.wait() {
        try? channel.close().wait()
        throw PeerProcess.TimedOut(command: "Fanout's client sending \(total) requests")
    }
    try? channel.closeFuture.wait()
    return results
}

/// A self-signed certificate for 127.0.0.1 and localhost, made with the openssl command.
struct TestCertificate {
    let directory: String
    var certificate: String { directory + "/cert.pem" }
    var key: String { directory + "/key.pem" }

    init() throws {
        directory = NSTemporaryDirectory() + "fanout-tls-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let result = try PeerProcess.run(
            "openssl",
            [
                "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                "-keyout", directory + "/key.pem", "-out", directory + "/cert.pem", "-days", "2",
                "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1",
            ],
            timeout: .seconds(30)
        )
        guard result.status == 0 else { throw CertificateError(message: result.errors) }
    }

    func remove() { try? FileManager.default.removeItem(atPath: directory) }

    struct CertificateError: Error { var message: String }
}

/// nghttpd (C, nghttp2) serving a directory with one small JSON file, stopped by `stop()`.
final class NghttpdServer {
    let port: Int
    let directory = NSTemporaryDirectory() + "fanout-www-\(UUID().uuidString)"
    let process: PeerProcess
    static let document = #"{"ok":true}"#

    init(certificate: TestCertificate? = nil) throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try Self.document.write(toFile: directory + "/index.html", atomically: true, encoding: .utf8)
        var arguments = ["-d", directory]
        if let certificate {
            arguments += ["0", certificate.key, certificate.certificate]
        } else {
            arguments += ["--no-tls", "0"]
        }
        process = try PeerProcess("nghttpd", arguments)
        do {
            // nghttpd picks its port and does not say which: read from /proc.
            port = try listeningPort(of: process.processIdentifier)
        } catch {
            process.stop()
            throw error
        }
    }

    func stop() {
        process.stop()
        try? FileManager.default.removeItem(atPath: directory)
    }
}

/// The body every load test sends: the interactive "poll" notification.
let pollBody = try! String(contentsOfFile: repositoryRoot + "/fixtures/poll.json", encoding: .utf8)
