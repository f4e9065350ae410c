// h2bench: the two halves of FanoutHTTP2 as programs, so scripts/bench/http2.sh can put each
// beside its C peer in the same run:
//
//   h2bench serve --port P [--threads T]
//       a minimal Fanout server answering 200 (no body) to every request; compare with nghttpd
//       under h2load.
//   h2bench load --port P --path PATH -n N -c C -m M -d FILE [--threads T] [-H 'name: value']...
//       Fanout's client: C connections, up to M streams each, N POSTs of FILE in all; compare
//       with h2load against the same server. Prints h2load-style "finished in" and req/s.
import FanoutHTTP2
import Foundation
import NIOCore
import NIOPosix

struct Options {
    var values: [String: String] = [:]
    var headers: [(String, String)] = []

    init(_ arguments: ArraySlice<String>) {
        var iterator = arguments.makeIterator()
        while let key = iterator.next() {
            guard let value = iterator.next() else { fail("\(key) needs a value") }
            if key == "-H" {
                guard let colon = value.dropFirst().firstIndex(of: ":") else { fail("-H takes 'name: value'") }
                headers.append(
                    (
                        value[..<colon].lowercased(),
                        value[value.index(after: colon)...].trimmingCharacters(in: .whitespaces)
                    )
                )
            } else {
                values[key] = value
            }
        }
    }

    func int(_ key: String, default fallback: Int? = nil) -> Int {
        guard let text = values[key] else {
            guard let fallback else { fail("\(key) is required") }
            return fallback
        }
        guard let value = Int(text), value > 0 else { fail("\(key) takes a positive number, not \(text)") }
        return value
    }
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("h2bench: \(message)\n".utf8))
    exit(2)
}

/// Answers every request with `:status 200` and no body.
struct OKResponder: HTTP2ConnectionDelegate {
    static let ok = HTTP2Fields([(":status", "200")])

    mutating func handle(_ event: HTTP2Event, connection: inout HTTP2Writer) {
        if case .message(let request) = event { connection.respond(stream: request.stream, Self.ok, body: nil) }
    }
}

/// Keeps every stream the server allows busy until this connection's share is sent.
struct LoadDriver: HTTP2ConnectionDelegate {
    let quota: Int
    let fields: HTTP2Fields
    let body: ByteBuffer
    let tally: Tally
    var sent = 0
    var finished = 0
    var succeeded = 0

    mutating func connectionStarted(_ connection: inout HTTP2Writer) { sendMore(&connection) }

    mutating func handle(_ event: HTTP2Event, connection: inout HTTP2Writer) {
        switch event {
        case .message(let response):
            finished += 1
            if response.status / 100 == 2 { succeeded += 1 }
        case .streamReset:
            finished += 1
        default: return
        }
        sendMore(&connection)
        if finished == quota { connection.goAway() }
    }

    private mutating func sendMore(_ connection: inout HTTP2Writer) {
        while sent < quota && connection.availableStreams > 0 {
            guard (try? connection.sendRequest(fields, body: body)) != nil else { return }
            sent += 1
        }
    }

    mutating func connectionEnded(_ connection: borrowing HTTP2Connection, error: (any Error)?) {
        tally.add(finished: finished, succeeded: succeeded, error: error)
    }
}

final class Tally: @unchecked Sendable {
    private let lock = NSLock()
    private let group = DispatchGroup()
    private(set) var finished = 0
    private(set) var succeeded = 0
    private(set) var errors: [String] = []

    func expect(_ connections: Int) { for _ in 0..<connections { group.enter() } }

    func add(finished: Int, succeeded: Int, error: (any Error)?) {
        lock.withLock {
            self.finished += finished
            self.succeeded += succeeded
            if let error { errors.append("\(error)") }
        }
        group.leave()
    }

    func wait(seconds: Int) -> Bool { group.wait(timeout: .now() + .seconds(seconds)) == .success }
}

let arguments = CommandLine.arguments
guard arguments.count >= 2 else { fail("usage: h2bench serve|load [options]") }
let options = Options(arguments.dropFirst(2))
let threads = options.int("--threads", default: 1)
let group = MultiThreadedEventLoopGroup(numberOfThreads: threads)

switch arguments[1] {
case "serve":
    let port = options.int("--port", default: 8443)
    var configuration = HTTP2Connection.Configuration()
    configuration.maxConcurrentStreams = UInt32(options.int("--max-streams", default: 1000))
    let channel = try HTTP2Channels.listen(
        host: "127.0.0.1",
        port: port,
        group: group,
        configuration: configuration,
        makeDelegate: { _ in OKResponder() }
    ).wait()
    FileHandle.standardOutput.write(Data("listening on 127.0.0.1:\(channel.localAddress!.port!)\n".utf8))
    try channel.closeFuture.wait()

case "load":
    let total = options.int("-n")
    let connections = options.int("-c", default: 1)
    let streams = options.int("-m", default: 1)
    guard let file = options.values["-d"], let data = FileManager.default.contents(atPath: file) else {
        fail("-d FILE (the request body) is required and must be readable")
    }
    let path = options.values["--path"] ?? "/"
    let port = options.int("--port")
    let fields = HTTP2Fields(
        [(":method", "POST"), (":scheme", "http"), (":path", path), (":authority", "127.0.0.1:\(port)")]
            + options.headers.map { (name: $0.0, value: $0.1) }
    )
    var configuration = HTTP2Connection.Configuration()
    configuration.maxOutboundStreams = streams
    let body = ByteBuffer(bytes: data)
    let tally = Tally()
    tally.expect(connections)
    let start = ContinuousClock.now
    var channels: [any Channel] = []
    for index in 0..<connections {
        let quota = total / connections + (index < total % connections ? 1 : 0)
        let (channel, _) = try HTTP2Channels.connect(
            host: "127.0.0.1",
            port: port,
            group: group,
            configuration: configuration,
            delegate: { LoadDriver(quota: quota, fields: fields, body: body, tally: tally) }
        ).wait()
        channels.append(channel)
    }
    guard tally.wait(seconds: 600) else { fail("the run did not finish within 600 s") }
    let seconds =
        Double((ContinuousClock.now - start).components.attoseconds) / 1e18
        + Double((ContinuousClock.now - start).components.seconds)
    print(String(format: "finished in %.2fms, %.2f req/s", seconds * 1000, Double(tally.finished) / seconds))
    print(
        "requests: \(total) total, \(tally.finished) done, \(tally.succeeded) succeeded, \(tally.finished - tally.succeeded) failed"
    )
    if !tally.errors.isEmpty { print("connection errors: \(tally.errors.joined(separator: "; "))") }

default:
    fail("unknown command \(arguments[1]); use serve or load")
}
try? group.syncShutdownGracefully()
