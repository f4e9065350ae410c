import Testing

@testable import FanoutAPNs

/// Channel ids as APNs writes them: base64 of 16 bytes, read back without allocating.
@Suite struct ChannelIDTests {
    static func parse(_ text: String) -> ChannelID.Parsed {
        Array(text.utf8).withUnsafeBytes { ChannelID.parse($0) }
    }

    @Test func itsTextIs24CharactersOfBase64ThatParseBack() {
        for (high, low) in [(UInt64(0), UInt64(0)), (.max, .max), (0x0123_4567_89AB_CDEF, 0xFEDC_BA98_7654_3210)] {
            let id = ChannelID(high: high, low: low)
            #expect(id.text.count == ChannelID.textLength)
            #expect(id.text.hasSuffix("=="))
            #expect(Self.parse(id.text) == .id(id))
        }
        // "this-is-a-channe" is 16 bytes.
        #expect(
            Self.parse("dGhpcy1pcy1hLWNoYW5uZQ==")
                == .id(ChannelID(high: 0x7468_6973_2D69_732D, low: 0x612D_6368_616E_6E65))
        )
        #expect(Self.parse("dGhpcy1pcy1hLWNoYW5uZQ") == Self.parse("dGhpcy1pcy1hLWNoYW5uZQ=="))
    }

    @Test(arguments: ["", "not base64!", "dGhpcy1pcy1hLWNoYW5uZQ=", "a", "====", String(repeating: "A", count: 68)])
    func malformedIDsAreBadChannelIds(_ text: String) {
        #expect(Self.parse(text) == .malformed)
    }

    @Test func wellFormedIDsOfAnotherLengthAreForeign() {
        #expect(Self.parse("c2hvcnQ=") == .foreign)
        #expect(Self.parse(String(repeating: "A", count: 64)) == .foreign)
    }
}
