import Benchmark
import FanoutPayload
import Foundation
import NIOCore

// Fanout's payload encoder against Foundation's JSONEncoder on the same notification: the
// interactive "poll" with a per-device badge and the device token in both action URLs
// (fixtures/poll-personalised.json). Each iteration encodes one payload for the next of 1024
// devices, so neither side sees the same input twice in a row.

/// The repository root, from this file's place in it.
let repositoryRoot: String = {
    var path = #filePath
    for _ in 0..<4 { path = String(path[..<path.lastIndex(of: "/")!]) }
    return path
}()

/// 1024 devices: a 64-hex-character token and a badge each, as a token file would give them.
struct Devices: Sendable {
    static let count = 1024
    let tokens: [String]
    let badges: [Int]
    /// Every line's bytes, `token \t badge`, back to back; `lines[i]` is line i's range.
    let bytes: [UInt8]
    let lines: [(token: Range<Int>, fields: Range<Int>)]

    init() {
        var random = SystemRandomNumberGenerator()
        var tokens: [String] = []
        var badges: [Int] = []
        var bytes: [UInt8] = []
        var lines: [(Range<Int>, Range<Int>)] = []
        let hex = Array("0123456789abcdef".utf8)
        for _ in 0..<Self.count {
            let token = (0..<64).map { _ in hex[Int(random.next() % 16)] }
            let badge = Int(random.next() % 1000)
            let start = bytes.count
            bytes += token
            let fieldsStart = bytes.count
            bytes += Array("\t\(badge)".utf8)
            lines.append((start..<fieldsStart, fieldsStart..<bytes.count))
            tokens.append(String(decoding: token, as: UTF8.self))
            badges.append(badge)
        }
        self.tokens = tokens
        self.badges = badges
        self.bytes = bytes
        self.lines = lines
    }
}

/// The same notification as Codable types, the way a Swift provider would write it for
/// JSONEncoder (the way APNSwift does).
struct PollNotification: Encodable {
    struct APS: Encodable {
        struct Alert: Encodable {
            var title: String
            var body: String
        }
        var alert: Alert
        var badge: Int
        var sound: String
        var category: String
        var mutableContent: Int

        enum CodingKeys: String, CodingKey {
            case alert, badge, sound, category
            case mutableContent = "mutable-content"
        }
    }

    struct Action: Encodable {
        var name: String
        var type: String
        var value: String
    }

    var aps: APS
    var categoryActions: [Action]

    enum CodingKeys: String, CodingKey {
        case aps
        case categoryActions = "category-actions"
    }
}

/// Built once: the benchmark closures run once per sample, and setup there would be timed
/// into cold caches.
let devices = Devices()
/// The devices' lines in memory that lives as long as the process, as a token reader's chunk would.
// Written once here and only read after: safe to share.
nonisolated(unsafe) let deviceBytes: UnsafeRawBufferPointer = {
    let memory = UnsafeMutableRawBufferPointer.allocate(byteCount: devices.bytes.count, alignment: 8)
    memory.copyBytes(from: devices.bytes)
    return UnsafeRawBufferPointer(memory)
}()
let pollTemplate = try! PayloadTemplate(
    contentsOf: "\(repositoryRoot)/fixtures/poll-personalised.json",
    options: .init(fieldNames: ["badge"])
)

let benchmarks: @Sendable () -> Void = {
    // CI gates on allocation counts only (FANOUT_BENCHMARK_METRICS=malloc): they are
    // deterministic, and a run without timing is quick. Locally, time is measured too.
    let mallocOnly = ProcessInfo.processInfo.environment["FANOUT_BENCHMARK_METRICS"] == "malloc"
    Benchmark.defaultConfiguration = .init(
        metrics: mallocOnly ? [.mallocCountTotal] : [.wallClock, .throughput, .mallocCountTotal],
        scalingFactor: .kilo,
        maxDuration: .seconds(2),
        maxIterations: 1_000_000
    )

    // The token reader hands out tokens it has validated as hex; the first benchmark does not
    // rely on that and has the encoder check every token, the second is the load engine's path.
    for tokenIsValidatedHex in [false, true] {
        Benchmark(
            // No spaces: package-benchmark writes threshold file names with `_` for spaces but
            // reads them back with the name as it is.
            tokenIsValidatedHex ? "FanoutEncoder-tokenValidatedByReader" : "FanoutEncoder-tokenChecked",
            // The static check compares p90 with the committed value; any allocation is a regression.
            configuration: .init(thresholds: [.mallocCountTotal: .init(absolute: [.p90: 0])])
        ) { benchmark in
            let encoder = PayloadEncoder(template: pollTemplate)
            var buffer = ByteBufferAllocator().buffer(capacity: pollTemplate.sizeLimit)
            // No closure around the loop: a closure capturing `buffer` would add a dynamic
            // exclusivity check per iteration that the load engine does not pay.
            let bytes = deviceBytes
            benchmark.startMeasurement()
            var device = 0
            for _ in benchmark.scaledIterations {
                let line = devices.lines[device]
                let input = NotificationInput(
                    token: UnsafeRawBufferPointer(rebasing: bytes[line.token]),
                    sequence: UInt64(device),
                    fields: UnsafeRawBufferPointer(rebasing: bytes[line.fields]),
                    tokenIsValidatedHex: tokenIsValidatedHex
                )
                buffer.clear()
                blackHole(try encoder.encode(input, into: &buffer))
                device = (device + 1) & (Devices.count - 1)
            }
            benchmark.stopMeasurement()
        }
    }

    Benchmark("FoundationJSONEncoder") { benchmark in
        let encoder = JSONEncoder()
        encoder.outputFormatting = .withoutEscapingSlashes
        benchmark.startMeasurement()
        var device = 0
        for _ in benchmark.scaledIterations {
            let token = devices.tokens[device]
            let notification = PollNotification(
                aps: .init(
                    alert: .init(title: "Poll", body: "Do you like the new design?"),
                    badge: devices.badges[device],
                    sound: "default",
                    category: "poll",
                    mutableContent: 1
                ),
                categoryActions: [
                    .init(name: "OK", type: "url", value: "https://example.com/ok?device=\(token)"),
                    .init(name: "NOK", type: "url", value: "https://example.com/nok?device=\(token)"),
                ]
            )
            blackHole(try encoder.encode(notification))
            device = (device + 1) & (Devices.count - 1)
        }
        benchmark.stopMeasurement()
    }
}
