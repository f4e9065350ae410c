import FanoutAPNs
import FanoutHPACK
import FanoutHTTP2
import FanoutScenarioTerms
import NIOCore

/// A response's header fields (`:status`, `apns-id`, and for errors `content-type`), encoded
/// from reused bytes.
struct SinkResponseFields: HTTP2HeaderFields {
    var status: Int
    /// 36 bytes of the request's or a generated apns-id.
    var apnsID: UnsafeRawBufferPointer
    var isError: Bool
    /// 36 bytes of an `apns-unique-id` for a timed request's answer (`TimedAPNsID`), else `nil`.
    var uniqueID: UnsafeRawBufferPointer? = nil

    func encode(with encoder: inout HPACKEncoder, into block: inout OutputBuffer) {
        // The three digits on the stack: a table of them would be a lazily made global.
        let status = min(max(status, 100), 599)
        var digits = (
            UInt8(ascii: "0") + UInt8(status / 100), UInt8(ascii: "0") + UInt8(status / 10 % 10),
            UInt8(ascii: "0") + UInt8(status % 10)
        )
        withUnsafeBytes(of: &digits) { encoder.encode(name: Self.statusName, value: $0, into: &block) }
        // A value that never repeats: neither indexed nor Huffman-coded (coding 36 bytes per
        // response to save 9 was 6% of the sink's time under h2load), as the sender writes :path.
        // Neither name is in a table (the sink indexes neither): no look-up.
        encoder.encodeLiteral(name: Self.apnsIDName, value: apnsID, into: &block)
        if let uniqueID { encoder.encodeLiteral(name: Self.uniqueIDName, value: uniqueID, into: &block) }
        if isError { encoder.encode(name: Self.contentTypeName, value: Self.json, into: &block) }
    }

    static var statusName: UnsafeRawBufferPointer { view(":status") }
    static var apnsIDName: UnsafeRawBufferPointer { view(APNsRequest.Header.apnsID) }
    static var uniqueIDName: UnsafeRawBufferPointer { view(TimedAPNsID.answerHeader) }
    static var contentTypeName: UnsafeRawBufferPointer { view("content-type") }
    static var json: UnsafeRawBufferPointer { view("application/json") }

    private static func view(_ text: StaticString) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount)
    }
}

/// Error bodies made once per reason (`APNsErrorBody`); 410's carries a timestamp and is
/// written per response.
enum SinkErrorBody {
    static let bodies: [APNsReason: ByteBuffer] = Dictionary(
        uniqueKeysWithValues: APNsReason.allCases.map { reason in
            var body = ByteBuffer()
            APNsErrorBody.write(reason, into: &body)
            return (reason, body)
        }
    )
}

/// Version-4 UUIDs as text from a seeded generator: no Foundation, no allocation.
struct APNsIDGenerator {
    private var random: SinkRandom

    init(seed: UInt64) {
        random = SinkRandom(seed: seed)
    }

    private mutating func next() -> UInt64 { random.next() }

    /// Writes `xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx` (uppercase, as APNs) into 36 bytes.
    mutating func write(into out: UnsafeMutableRawBufferPointer) {
        let high = next()
        UUIDText.write(UUIDText.version4((high, next())), uppercase: true, into: out)
    }
}

/// Bytes owned for as long as a connection lives (the apns-id being answered).
final class ScratchBytes {
    let bytes: UnsafeMutableRawBufferPointer

    init(count: Int) {
        bytes = .allocate(byteCount: count, alignment: 8)
        bytes.initializeMemory(as: UInt8.self, repeating: 0)
    }

    deinit {
        bytes.deallocate()
    }
}
