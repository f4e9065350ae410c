import NIOCore

/// APNs' error response body (docs/apns.md, "Response"): the sink writes it, the sender
/// reads it.
///
/// ```
///   {"reason":"BadDeviceToken"}
///   {"reason":"Unregistered","timestamp":1700000000000}     410 only: when the token stopped
///                                                            being valid, UNIX milliseconds
/// ```
public enum APNsErrorBody {
    /// Writes `reason`'s body (with `timestamp` in UNIX milliseconds, for 410s) into `buffer`,
    /// after what it holds.
    public static func write(_ reason: APNsReason, timestamp: Int64? = nil, into buffer: inout ByteBuffer) {
        buffer.writeStaticString(#"{"reason":""#)
        buffer.writeString(reason.rawValue)
        if let timestamp {
            buffer.writeStaticString(#"","timestamp":"#)
            buffer.writeString(String(timestamp))
            buffer.writeStaticString("}")
        } else {
            buffer.writeStaticString(#""}"#)
        }
    }

    /// The reason in `body`, read in place; `nil` when there is none or it is not one APNs
    /// sends. Tolerates spaces around the colon, as other servers write them.
    public static func reason(in body: UnsafeRawBufferPointer) -> APNsReason? {
        guard let value = stringValue(of: reasonKey, in: body) else { return nil }
        return reasons.first { $0.bytes.elementsEqual(value) }?.reason
    }

    /// The 410 timestamp in `body`, if it has one.
    public static func timestamp(in body: UnsafeRawBufferPointer) -> Int64? {
        guard var index = valueStart(of: timestampKey, in: body) else { return nil }
        var value: Int64 = 0
        var digits = 0
        while index < body.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(body[index]), digits < 18 {
            value = value * 10 + Int64(body[index] - UInt8(ascii: "0"))
            index += 1
            digits += 1
        }
        return digits == 0 ? nil : value
    }

    /// Every reason's bytes, made once.
    private static let reasons: [(reason: APNsReason, bytes: [UInt8])] = APNsReason.allCases.map {
        ($0, Array($0.rawValue.utf8))
    }
    private static let reasonKey: [UInt8] = Array(#""reason""#.utf8)
    private static let timestampKey: [UInt8] = Array(#""timestamp""#.utf8)

    /// The bytes of the string value of `key` (quoted, as in the body).
    private static func stringValue(of key: [UInt8], in bytes: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer? {
        guard let index = valueStart(of: key, in: bytes), index < bytes.count, bytes[index] == UInt8(ascii: "\"")
        else { return nil }
        let start = index + 1
        guard let end = bytes[start...].firstIndex(of: UInt8(ascii: "\"")) else { return nil }
        return UnsafeRawBufferPointer(rebasing: bytes[start..<end])
    }

    /// Where the value after `key` and its colon starts.
    private static func valueStart(of key: [UInt8], in bytes: UnsafeRawBufferPointer) -> Int? {
        guard bytes.count > key.count else { return nil }
        var index = 0
        while index + key.count <= bytes.count {
            if bytes[index] == key[0], key.indices.allSatisfy({ bytes[index + $0] == key[$0] }) { break }
            index += 1
        }
        guard index + key.count <= bytes.count else { return nil }
        index += key.count
        while index < bytes.count, bytes[index] == UInt8(ascii: " ") || bytes[index] == UInt8(ascii: ":") {
            index += 1
        }
        return index
    }
}
