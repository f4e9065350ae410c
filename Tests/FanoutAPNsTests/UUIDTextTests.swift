import FanoutAPNs
import Foundation
import Testing

/// The one UUID writer: canonical groups, either case, and version 4 when asked — checked
/// against Foundation's own parser and formatter.
struct UUIDTextTests {
    static func text(_ bits: (high: UInt64, low: UInt64), uppercase: Bool = false) -> String {
        var bytes = [UInt8](repeating: 0, count: UUIDText.count)
        bytes.withUnsafeMutableBytes { UUIDText.write(bits, uppercase: uppercase, into: $0) }
        return String(decoding: bytes, as: UTF8.self)
    }

    @Test func bitsAreWrittenInCanonicalGroups() {
        let bits: (UInt64, UInt64) = (0x0123_4567_89AB_CDEF, 0xFEDC_BA98_7654_3210)
        #expect(Self.text(bits) == "01234567-89ab-cdef-fedc-ba9876543210")
        #expect(Self.text(bits, uppercase: true) == "01234567-89AB-CDEF-FEDC-BA9876543210")
    }

    @Test func version4SetsTheVersionAndVariantAndKeepsTheRest() throws {
        for seed: UInt64 in [0, .max, 0x5555_5555_5555_5555, 0xDEAD_BEEF_0BAD_F00D] {
            let bits = UUIDText.version4((seed, ~seed))
            let text = Self.text(bits, uppercase: true)
            let parsed = try #require(UUID(uuidString: text), "\(text)")
            #expect(parsed.uuidString == text)
            #expect(Array(text)[14] == "4")
            #expect("89AB".contains(Array(text)[19]))
            #expect(bits.high | 0xF000 == seed | 0xF000)
            #expect(bits.low << 2 == (~seed) << 2)
        }
    }

    /// Every nibble in every place, both cases: the text is the bits' hex digits in 8-4-4-4-12.
    @Test func anyBitsAreTheirHexDigits() {
        var state: UInt64 = 0x65
        for _ in 0..<2000 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let bits = (high: state, low: state.byteSwapped ^ 0x5A5A_5A5A_5A5A_5A5A)
            let reference = [bits.high, bits.low].map { word in
                let digits = String(word, radix: 16)
                return String(repeating: "0", count: 16 - digits.count) + digits
            }.joined()
            let groups = [0..<8, 8..<12, 12..<16, 16..<20, 20..<32].map { range in
                String(Array(reference)[range])
            }
            #expect(Self.text(bits) == groups.joined(separator: "-"))
            #expect(Self.text(bits, uppercase: true) == groups.joined(separator: "-").uppercased())
        }
    }
}
