import Benchmark
import FanoutHPACK
import FanoutHTTP2
import Foundation
import NIOCore

// One APNs request/response exchange over an in-memory Fanout client ↔ server pair: the client
// encodes HEADERS (a new device token in :path each time) and a 280-byte DATA frame, the server
// decodes and validates them and answers 200 with an apns-id, the client decodes the response.
// Both connections' whole state machines run; only the socket is missing. In steady state an
// exchange must not allocate (CI gates mallocs at 0).

/// APNs request fields: the shared ones from a list, the device path from reused bytes.
struct APNsRequest: HTTP2HeaderFields {
    let shared: HTTP2Fields
    /// "/3/device/" and 64 hex digits, rewritten for each device.
    var path: [UInt8]

    init() {
        shared = HTTP2Fields([
            (":method", "POST"), (":scheme", "https"), (":authority", "api.push.apple.com"),
            ("apns-topic", "com.example.app"), ("apns-push-type", "alert"), ("apns-priority", "10"),
            ("apns-expiration", "0"),
            (
                "authorization",
                "bearer eyJhbGciOiJFUzI1NiIsImtpZCI6IkFCQzEyM0RFRkcifQ.eyJpc3MiOiJERUYxMjNHSElKIiwiaWF0IjoxNzAwMDAwMDAwfQ.c2lnbmF0dXJl"
            ),
        ])
        path = Array("/3/device/".utf8) + [UInt8](repeating: UInt8(ascii: "0"), count: 64)
    }

    static let digits: [UInt8] = Array("0123456789abcdef".utf8)

    /// Writes device `index`'s token into the path.
    mutating func select(device index: Int) {
        let digits = Self.digits
        var value = UInt64(truncatingIfNeeded: index) &* 0x9E37_79B9_7F4A_7C15
        for position in 0..<16 {
            path[10 + position] = digits[Int(value & 0xF)]
            value >>= 4
        }
    }

    func encode(with encoder: inout HPACKEncoder, into block: inout OutputBuffer) {
        path.withUnsafeBytes { path in
            let name: StaticString = ":path"
            encoder.encode(
                name: UnsafeRawBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount),
                value: path,
                indexing: .withoutIndexing,
                into: &block
            )
        }
        shared.encode(with: &encoder, into: &block)
    }
}

/// A client and a server joined in memory.
struct Exchange: ~Copyable {
    var client = HTTP2Connection(role: .client)
    var server = HTTP2Connection(role: .server)
    var request = APNsRequest()
    let response = HTTP2Fields([(":status", "200"), ("apns-id", "6E1F6F4A-9C2B-4D8E-A1B3-0C5D7E9F1A2B")])
    let body: ByteBuffer
    var device = 0
    var statusSum = 0

    init() {
        let poll = FileManager.default.contents(atPath: Exchange.fixture("poll.json"))!
        body = ByteBuffer(bytes: poll)
        for _ in 0..<4 { run() }  // the handshake
    }

    static func fixture(_ name: String) -> String {
        var path = #filePath
        for _ in 0..<4 { path = String(path[..<path.lastIndex(of: "/")!]) }
        return path + "/fixtures/" + name
    }

    /// The "socket": a connection's queued bytes are moved into it, read by the peer, and it is
    /// cleared, keeping its capacity (as NIO lets go of a buffer once written).
    var wire = ByteBufferAllocator().buffer(capacity: 64 * 1024)

    /// Moves bytes both ways once; the server answers every request.
    mutating func run() {
        // The closures see locals: the connections are parts of `self`, taken by `receive`.
        var sum = statusSum
        let response = self.response
        client.moveOutbound(into: &wire)
        HTTP2Connection.receive(&server, from: &wire) { event, server in
            if case .message(let request) = event {
                sum &+= request.bodyLength
                server.respond(stream: request.stream, response, body: nil)
            }
        }
        wire.clear()
        server.moveOutbound(into: &wire)
        HTTP2Connection.receive(&client, from: &wire) { event, _ in
            if case .message(let response) = event { sum &+= response.status }
        }
        wire.clear()
        statusSum = sum
    }

    /// One request and its response.
    mutating func exchange() {
        request.select(device: device)
        device &+= 1
        _ = try? client.sendRequest(request, body: body)
        run()
    }
}

let benchmarks: @Sendable () -> Void = {
    // CI gates Fanout's allocations only (FANOUT_BENCHMARK_METRICS=malloc).
    let mallocOnly = ProcessInfo.processInfo.environment["FANOUT_BENCHMARK_METRICS"] == "malloc"
    Benchmark.defaultConfiguration = .init(
        metrics: mallocOnly ? [.mallocCountTotal] : [.wallClock, .mallocCountTotal, .cpuTotal],
        scalingFactor: .kilo,
        maxDuration: .seconds(2),
        thresholds: [.mallocCountTotal: .init(absolute: [.p90: 0])]
    )

    Benchmark("FanoutHTTP2Exchange-APNsRequest") { benchmark in
        var exchange = Exchange()
        // Steady state: stream slots, buffers and the stream index have grown to their size.
        for _ in 0..<1000 { exchange.exchange() }
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations { exchange.exchange() }
        benchmark.stopMeasurement()
        blackHole(exchange.statusSum)
    }
}
