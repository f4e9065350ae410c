import Benchmark
import FanoutFCM
import Foundation

// The FCM sink's check of each `messages:send` body (FCMSendCheck): a message as firebase-admin
// sends one, a data notification to one device with Android's delivery fields (and every other
// one a topic message in the other spellings), for the next of 1024 bodies each iteration. A
// mock that checks every message must not allocate for it.

/// 1024 bodies, each for its own 152-character registration token, back to back: `body`
/// writes the one for a token and its device's number. The send-check benchmark here and the
/// sink's (FCMSinkSends.swift) each make their own.
struct Bodies: Sendable {
    static let count = 1024
    let bytes: [UInt8]
    let ranges: [Range<Int>]

    init(_ body: (_ token: String, _ device: Int) -> String) {
        var random = SystemRandomNumberGenerator()
        let alphabet = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_:".utf8)
        var bytes: [UInt8] = []
        var ranges: [Range<Int>] = []
        for device in 0..<Self.count {
            let token = String(decoding: (0..<152).map { _ in alphabet[Int(random.next() % 65)] }, as: UTF8.self)
            let start = bytes.count
            bytes += Array(body(token, device).utf8)
            ranges.append(start..<bytes.count)
        }
        self.bytes = bytes
        self.ranges = ranges
    }
}

let bodies = Bodies { token, device in
    // Every other body a topic message in the discovery document's spellings, with the
    // web push, options and Android flags, so both kinds of field names are compared.
    let body: String =
        device.isMultiple(of: 2)
        ? """
        {"message":{"token":"\(token)","data":{"match":"42","score":"3:1","device":"\(device)"},\
        "notification":{"title":"Goal!","body":"Spain 3:1 Italy"},\
        "android":{"priority":"high","ttl":"3600s","collapse_key":"match-42"},\
        "apns":{"headers":{"apns-priority":"10"},"payload":{"aps":{"badge":1}}}},"validate_only":false}
        """
        : """
        {"validateOnly":false,"message":{"topic":"/topics/match-42","data":{"device":"\(device)"},\
        "android":{"collapseKey":"m","priority":"NORMAL","ttl":"60.5s","directBootOk":true,\
        "fcmOptions":{"analyticsLabel":"goal"}},"webpush":{"headers":{"TTL":"60"},"data":{"a":"b"},\
        "notification":{"title":"Goal!"}},"fcmOptions":{"analyticsLabel":"goal_alert"}}}
        """
    return body
}

let benchmarks: @Sendable () -> Void = {
    // CI gates on allocation counts only (FANOUT_BENCHMARK_METRICS=malloc).
    let mallocOnly = ProcessInfo.processInfo.environment["FANOUT_BENCHMARK_METRICS"] == "malloc"
    Benchmark.defaultConfiguration = .init(
        metrics: mallocOnly ? [.mallocCountTotal] : [.wallClock, .throughput, .mallocCountTotal],
        scalingFactor: .kilo,
        maxDuration: .seconds(2),
        maxIterations: 1_000_000
    )

    Benchmark(
        "FanoutFCMSendCheck",
        configuration: .init(thresholds: [.mallocCountTotal: .init(absolute: [.p90: 0])])
    ) { benchmark in
        bodies.bytes.withUnsafeBytes { bytes in
            benchmark.startMeasurement()
            var body = 0
            for _ in benchmark.scaledIterations {
                let checked = FCMSendCheck.check(UnsafeRawBufferPointer(rebasing: bytes[bodies.ranges[body]]))
                guard case .success(let send) = checked else { fatalError("refused: \(checked)") }
                blackHole(send)
                body = (body + 1) & (Bodies.count - 1)
            }
            benchmark.stopMeasurement()
        }
    }

    sinkSendsBenchmarks()
}
