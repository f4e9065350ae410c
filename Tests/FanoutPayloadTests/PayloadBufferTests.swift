import Testing

@testable import FanoutPayload

/// `PayloadBuffer` is a value: a copy keeps the bytes it had when another copy is written.
@Suite struct PayloadBufferTests {
    static func encode(_ alert: String, into buffer: inout PayloadBuffer) throws -> [UInt8] {
        let encoder = PayloadEncoder(template: try template(#"{"aps":{"alert":"{{field.1}}"}}"#))
        let token = Array(sampleToken.utf8)
        let fields = [UInt8(ascii: "\t")] + Array(alert.utf8)
        return try token.withUnsafeBytes { token in
            try fields.withUnsafeBytes { fields in
                Array(try encoder.encode(NotificationInput(token: token, sequence: 0, fields: fields), into: &buffer))
            }
        }
    }

    @Test func aCopyKeepsItsBytesWhenTheOtherIsWritten() throws {
        var first = PayloadBuffer(byteCount: 256)
        let written = try Self.encode("first", into: &first)
        let kept = first.storage.bytes
        var second = first
        _ = try Self.encode("second!", into: &second)
        #expect(first.storage.bytes.baseAddress == kept.baseAddress)
        #expect(second.storage.bytes.baseAddress != kept.baseAddress)
        #expect(Array(UnsafeRawBufferPointer(rebasing: first.storage.bytes[..<written.count])) == written)
    }

    @Test func aBufferOfItsOwnIsReusedWithoutNewMemory() throws {
        var buffer = PayloadBuffer(byteCount: 256)
        _ = try Self.encode("one", into: &buffer)
        let memory = buffer.storage.bytes.baseAddress
        _ = try Self.encode("two", into: &buffer)
        #expect(buffer.storage.bytes.baseAddress == memory)
    }
}
