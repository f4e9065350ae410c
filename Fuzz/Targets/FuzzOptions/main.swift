// The count and size options' ranges (`MachineLimits`, `OptionRange`) fed arbitrary values on
// arbitrary machines, and what the commands build from values that pass: a load shape and
// configuration, a capacity plan and its text, a template with its size limit and the values
// spliced into it. Nothing may trap: what passes a range must be safe downstream.
//
//   input := word* (8 bytes each, little-endian; missing bytes are 0)
//
// The words are taken in order: the machine (open files, memory), the sender's loops,
// connections and streams, the plan's question, a size limit, then the bytes left are a token
// line's fields for `{{field.1:number}}` and `{{field.2:int}}` (`aps.badge`).
import FanoutClient
import FanoutEndpoint
import FanoutMachine
import FanoutNotation
import FanoutPayload
import FanoutReport
import Foundation
import FuzzSupport
import NIOCore

runFuzzer(
    seeds: [
        words([20_000, 23 << 30, 1, 4, 1000, 600_000, 300, 80, 5, 2, 1000, 70, 4096]) + Array("\t0.5\t3".utf8),
        words([1024, 1 << 30, 1024, 100_000, UInt64(Int.max), UInt64.max, 0, 1, 0, 0, UInt64(Int.max), 1, 1 << 32])
            + Array("\t1e999\t-3".utf8),
        words([UInt64(bitPattern: Int64.min), 0, UInt64.max, UInt64.max, UInt64.max])
            + Array("\t12345678901234567891".utf8),
    ],
    test
)

func words(_ values: [UInt64]) -> [UInt8] {
    values.flatMap { value in (0..<8).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) } }
}

/// A template with a number and a badge from the token line; `static`, so made when first used
/// (top-level code after `runFuzzer`, which never returns, would never run).
enum Fixture {
    static let template =
        #"{"aps":{"alert":"{{field.1}}","badge":"{{field.2:int}}","relevance-score":"{{field.1:number}}"}}"#
    /// Compiled with the push type's limit, once: most inputs' size limits are refused.
    static let defaultEncoder = compiled(sizeLimit: nil)!
}

func test(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    var input = FuzzInput(start, count)
    func word() -> UInt64 {
        let bytes = input.take(8)
        return bytes.enumerated().reduce(0) { $0 | UInt64($1.element) << (8 * $1.offset) }
    }
    func int() -> Int { Int(truncatingIfNeeded: word()) }

    let limits = MachineLimits(openFiles: int(), memoryBytes: word())

    // The sender: loops, then connections beside them, then streams over the connections.
    let threads = int()
    let sinkThreads = int()
    let connections = int()
    let streams = int()
    let accepted: Bool
    do {
        try limits.checkSender(
            eventLoops: ("--threads", threads),
            otherEventLoops: sinkThreads,
            connections: ("--connections", connections),
            filesEach: 2,
            streams: ("--streams", streams)
        )
        accepted = true
    } catch {
        precondition(error.description.hasPrefix("--"), "a refusal that does not name its option: \(error)")
        precondition(error.description.contains("; got "), "a refusal that does not say the value: \(error)")
        accepted = false
    }
    if accepted {
        precondition((1...MachineLimits.mostEventLoops).contains(threads), "\(threads) event loops passed")
        precondition(connections >= 1 && connections <= max(1, limits.openFiles), "\(connections) connections passed")
        precondition(streams >= 1 && streams <= MachineLimits.mostStreams, "\(streams) streams passed")
        let (inFlight, overflow) = connections.multipliedReportingOverflow(by: streams)
        precondition(!overflow && inFlight > 0, "connections × streams overflow")
        // Every stream's table entry within a quarter of the memory (a connection has at least
        // one stream, whatever the memory).
        let (bytes, bytesOverflow) = inFlight.multipliedReportingOverflow(by: MachineLimits.bytesPerStream)
        precondition(
            streams == 1 || !bytesOverflow && UInt64(bytes) <= max(limits.memoryBytes / 4, 256),
            "\(connections) × \(streams) streams passed on \(limits.memoryBytes) bytes of memory"
        )
        var shape = LoadShape()
        shape.connections = connections
        shape.streamsPerConnection = streams
        shape.maxAttempts = (try? MachineLimits.attempts("--attempts").check(int())) ?? 3
        _ = LoadConfiguration(
            host: "127.0.0.1",
            port: 2197,
            headers: try! NotificationHeaders(topic: "com.example.app"),
            encoder: Fixture.defaultEncoder,
            shape: shape
        )
    }

    // The plan: each figure within the range its option takes, then the plan and its text.
    let longest = UInt64(DurationNotation.longest.components.seconds) * 1_000_000_000
    var question = CapacityPlan.Question(
        devices: word() % 1_000_000_000_000_000 + 1,
        deadline: .nanoseconds(Int64(word() % longest + 1)),
        roundTrip: .nanoseconds(Int64(word() % longest + 1)),
        coresPerMachine: (try? MachineLimits.plannedCores("--cores").check(int())) ?? 1
    )
    question.processing = .nanoseconds(Int64(word() % longest))
    question.streams = (try? MachineLimits.plannedStreams("--streams").check(int())) ?? 1
    question.headroom = Double(word() % 1000 + 1) / 1000
    let flowWord = word()
    if flowWord & 1 != 0 {
        question.flow.connectionWindow = try? MachineLimits.plannedWindow("--connection-window", smallest: 65_535)
            .check(int())
    }
    if flowWord & 2 != 0 {
        question.flow.streamWindow = try? MachineLimits.plannedWindow("--stream-window", smallest: 1).check(int())
    }
    if flowWord & 4 != 0 {
        question.flow.bodyBytes = (try? MachineLimits.plannedBodyBytes("--body-bytes").check(int())) ?? 280
    }
    if flowWord & 8 != 0 {
        question.flow.bandwidth = BandwidthNotation.range.lowerBound + Double(word() % 10_000_000_000_000)
    }
    if flowWord & 16 != 0 {
        question.cpuMicroseconds = Double(word() % 100_000_000 + 1) / 1000
    }
    question.flow.refill = flowWord & 32 != 0 ? .eachFrame : .half
    question.flow.tls = flowWord & 64 == 0
    let plan = CapacityPlan(question)
    precondition(plan.connections >= 1, "a plan of no connections")
    _ = plan.text

    // A size limit that passes is one every buffer sized by it can hold.
    let sizeLimit = try? MachineLimits.payloadLimit("--size-limit").check(int())
    if let sizeLimit {
        precondition((1...MachineLimits.largestPayloadLimit).contains(sizeLimit), "a size limit of \(sizeLimit)")
        _ = PayloadBuffer(byteCount: sizeLimit + 64)
        _ = ByteBufferAllocator().buffer(capacity: sizeLimit)
    }
    render(Array(input.bytes), sizeLimit: sizeLimit)
    return 0
}

/// `nil` when the template's fixed bytes alone are over `sizeLimit` (refused at load).
func encoder(sizeLimit: Int?) -> PayloadEncoder? {
    sizeLimit == nil ? Fixture.defaultEncoder : compiled(sizeLimit: sizeLimit)
}

func compiled(sizeLimit: Int?) -> PayloadEncoder? {
    let options = PayloadTemplate.Options(sizeLimit: sizeLimit)
    guard let template = try? PayloadTemplate(json: Array(Fixture.template.utf8), file: "fuzz", options: options)
    else { return nil }
    return PayloadEncoder(template: template)
}

/// The token line's rest through the template: what is sent has a finite number and a badge
/// of at least 0, or it is refused.
func render(_ fields: [UInt8], sizeLimit: Int?) {
    var buffer = ByteBuffer()
    let token = Array(String(repeating: "a1", count: 32).utf8)
    guard let encoder = encoder(sizeLimit: sizeLimit) else { return }
    let size = token.withUnsafeBytes { token in
        fields.withUnsafeBytes { fields in
            try? encoder.encode(NotificationInput(token: token, sequence: 0, fields: fields), into: &buffer)
        }
    }
    guard size != nil else { return }
    guard let object = try? JSONSerialization.jsonObject(with: Data(buffer.readableBytesView)) as? [String: Any],
        let aps = object["aps"] as? [String: Any]
    else {
        fatalError(
            "the encoder wrote what is not a JSON object: \(String(decoding: buffer.readableBytesView, as: UTF8.self))"
        )
    }
    let text = String(decoding: buffer.readableBytesView, as: UTF8.self)
    if let badge = aps["badge"] as? NSNumber {
        precondition(badge.int64Value >= 0 || badge.doubleValue == 0, "a badge below 0 was sent: \(text)")
    }
    if let score = aps["relevance-score"] as? NSNumber {
        precondition(score.doubleValue.isFinite, "a number past a double was sent: \(text)")
    }
}
