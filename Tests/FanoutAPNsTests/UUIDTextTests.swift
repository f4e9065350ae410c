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
}
