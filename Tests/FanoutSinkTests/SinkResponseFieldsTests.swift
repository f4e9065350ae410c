import FanoutAPNs
import FanoutHPACK
import Testing

@testable import FanoutSink

/// The hot path's hand-written lookups, checked against what they replace: the push type's
/// raw values, and the status digits as `String(status)`.
@Suite struct SinkResponseFieldsTests {
    @Test(arguments: APNsPushType.allCases)
    func everyPushTypeIsFoundByItsName(_ type: APNsPushType) {
        let name = Array(type.rawValue.utf8)
        name.withUnsafeBytes { #expect(APNsPushType(bytes: $0) == type) }
        // Its name with one byte more, one byte fewer, or in capitals is no type.
        (name + [UInt8(ascii: "s")]).withUnsafeBytes { #expect(APNsPushType(bytes: $0) == nil) }
        name.dropLast().withUnsafeBytes { #expect(APNsPushType(bytes: $0) == nil) }
        Array(type.rawValue.uppercased().utf8).withUnsafeBytes { #expect(APNsPushType(bytes: $0) == nil) }
    }

    @Test func anEmptyPushTypeIsNoType() {
        #expect(APNsPushType(bytes: UnsafeRawBufferPointer(start: nil, count: 0)) == nil)
    }

    @Test func everyStatusIsWrittenAsItsThreeDigits() throws {
        let id = Array("3F2504E0-4F89-41D3-9A0C-0305E82C3301".utf8)
        for status in [99, 100, 200, 204, 400, 403, 404, 405, 410, 413, 429, 500, 503, 599, 600] {
            var encoder = HPACKEncoder()
            var decoder = HPACKDecoder()
            var block = OutputBuffer()
            id.withUnsafeBytes { apnsID in
                SinkResponseFields(status: status, apnsID: apnsID, isError: false).encode(with: &encoder, into: &block)
            }
            var fields: [(String, String)] = []
            try decoder.decode(block.bytes) { name, value, _ in
                fields.append((String(decoding: name, as: UTF8.self), String(decoding: value, as: UTF8.self)))
            }
            // Outside 100...599 the status is clamped: a response always has three digits.
            let expected = String(min(max(status, 100), 599))
            #expect(fields.first?.0 == ":status")
            #expect(fields.first?.1 == expected, "status \(status)")
            #expect(fields.count == 2 && fields[1].0 == "apns-id" && fields[1].1 == String(decoding: id, as: UTF8.self))
        }
    }
}
