import Benchmark
import FanoutFCMSink
import FanoutHTTP2
import Foundation
import NIOCore

// The FCM sink answering `messages:send` over HTTP/2, the whole way in memory
// (`HTTP2InMemoryPair`): a client keeping 100 streams open sends data messages to 1,024
// registration tokens with the bearer the sink issued; the sink (`FCMHTTP2Connection`, as
// `fanout sink --service fcm` serves by default) reads the frames, checks the bearer, the
// project, the quota, the body and the device's rates, and writes `{"name":…}`. Two lengths
// of connection, 100 and 1,000 sends: what they allocate apart is what 900 sends allocate, and
// a sink that answers every send must allocate nothing for one.

/// The sends: a data message with Android's delivery fields to each of 1,024 tokens.
let sends = Bodies { token, device in
    """
    {"message":{"token":"\(token)","data":{"match":"42","score":"3:1","device":"\(device)"},\
    "notification":{"title":"Goal!","body":"Spain 3:1 Italy"},\
    "android":{"priority":"high","ttl":"3600s","collapse_key":"match-42"}}}
    """
}
/// A send's header fields, as firebase-admin's httpx writes them, with `bearer`.
func fields(bearer: String) -> HTTP2Fields {
    HTTP2Fields([
        (":method", "POST"), (":scheme", "https"), (":authority", "fcm.googleapis.com"),
        (":path", "/v1/projects/fanout-bench/messages:send"), ("authorization", "Bearer \(bearer)"),
        ("content-type", "application/json"), ("x-goog-api-format-version", "2"),
    ])
}

/// Sends `total` messages keeping `window` streams open; counts the 200s.
struct Sender: HTTP2ConnectionDelegate {
    let total: Int
    let fields: HTTP2Fields
    var window = 100
    var sent = 0
    var answered = 0

    mutating func connectionStarted(_ connection: inout HTTP2Writer) { sendMore(&connection) }

    mutating func handle(_ event: HTTP2Event, connection: inout HTTP2Writer) {
        if case .message(let answer) = event, answer.status == 200 { answered += 1 }
        sendMore(&connection)
        if answered == total && connection.sentGoAway == nil { connection.goAway() }
    }

    mutating func sendMore(_ connection: inout HTTP2Writer) {
        guard connection.hasPeerSettings else { return }
        while sent < total, sent - answered < window {
            let range = sends.ranges[sent % Bodies.count]
            let body = sends.bytes.withUnsafeBytes { UnsafeRawBufferPointer(rebasing: $0[range]) }
            _ = try? connection.sendRequest(fields, bodyBytes: body, tag: UInt64(sent))
            sent += 1
        }
    }
}

/// A pair in memory: a sender of `total` messages and a sink as `fanout sink --service fcm`
/// serves by default — bearers its token endpoint issued, the project's quota, each device's
/// rates — with the sender's token issued by it.
func pair(of total: Int) -> HTTP2InMemoryPair<Sender, FCMHTTP2Connection> {
    var configuration = FCMSinkConfiguration()
    configuration.project = "fanout-bench"
    let service = FCMService(configuration: configuration, account: nil)
    let bearer = service.tokens.issue(lifetime: 3_600_000_000_000, now: NIODeadline.now().uptimeNanoseconds)
    return HTTP2InMemoryPair(
        client: Sender(total: total, fields: fields(bearer: bearer)),
        server: FCMHTTP2Connection(service: service),
        FCMHTTP2Connection.configuration(configuration)
    )
}

/// Registers the two connections' benchmarks (FCMBenchmarks.swift calls it).
func sinkSendsBenchmarks() {
    // CI gates on allocation counts only (FANOUT_BENCHMARK_METRICS=malloc).
    let mallocOnly = ProcessInfo.processInfo.environment["FANOUT_BENCHMARK_METRICS"] == "malloc"
    for total in [100, 1000] {
        Benchmark(
            "FanoutFCMSinkSends\(total)",
            configuration: .init(
                metrics: mallocOnly ? [.mallocCountTotal] : [.wallClock, .throughput, .mallocCountTotal],
                scalingFactor: .one,
                maxDuration: .seconds(2),
                maxIterations: 10_000,
                thresholds: [.mallocCountTotal: .init(absolute: [.p90: 0])]
            )
        ) { benchmark in
            // The connections are made outside the measurement: what is measured is the
            // exchange, from the preface to the GOAWAY.
            var connection = pair(of: total)
            benchmark.startMeasurement()
            _ = connection.run(maxTurns: 10 * total)
            benchmark.stopMeasurement()
            precondition(
                connection.clientDelegate.answered == total,
                "\(connection.clientDelegate.answered) of \(total)"
            )
        }
    }
}
