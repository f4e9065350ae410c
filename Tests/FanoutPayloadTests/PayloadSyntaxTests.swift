import Testing

@testable import FanoutPayload

/// The sink's JSON check skips a string's plain run sixteen bytes a step (SSE2); every byte it
/// must stop at, placed at every position around those steps, gets the verdict — offset and
/// reason — that a byte-at-a-time reading gives.
@Suite struct PayloadSyntaxTests {
    static func problem(_ bytes: [UInt8]) -> PayloadSyntaxProblem? {
        bytes.withUnsafeBytes { PayloadSyntax.problem(in: $0) }
    }

    /// `{"k":"` then `run` plain bytes: the string's content starts at byte 6.
    static func prefix(_ run: Int) -> [UInt8] {
        Array(#"{"k":""#.utf8) + Array(repeating: UInt8(ascii: "a"), count: run)
    }

    @Test(arguments: 0..<40)
    func everyStopByteIsFoundWhereverItFalls(run: Int) {
        let at = 6 + run
        let close = Array(#""}"#.utf8)
        #expect(Self.problem(Self.prefix(run) + close) == nil)
        for control in [0x00, 0x01, 0x0A, 0x1F] as [UInt8] {
            #expect(
                Self.problem(Self.prefix(run) + [control] + close)
                    == PayloadSyntaxProblem(offset: at, reason: "a control character inside a string")
            )
        }
        // Non-ASCII: a valid two-, three- and four-byte sequence is taken whole; a lone
        // continuation byte or 0xFF is not UTF-8.
        for valid in [[0xC3, 0xA9], [0xE2, 0x82, 0xAC], [0xF0, 0x9F, 0x98, 0x80]] as [[UInt8]] {
            #expect(Self.problem(Self.prefix(run) + valid + Array(repeating: 0x62, count: 20) + close) == nil)
        }
        for invalid in [0x80, 0xFF] as [UInt8] {
            #expect(
                Self.problem(Self.prefix(run) + [invalid] + close)
                    == PayloadSyntaxProblem(offset: at, reason: "bytes that are not UTF-8")
            )
        }
        // Escapes: known ones pass, an unknown one is named at the byte after the backslash.
        #expect(Self.problem(Self.prefix(run) + Array(#"\"\\\/\u00e9x"#.utf8) + close) == nil)
        #expect(
            Self.problem(Self.prefix(run) + Array(#"\x"#.utf8) + close)
                == PayloadSyntaxProblem(offset: at + 1, reason: "an unknown escape")
        )
        // The quote ends the string where it falls; what follows is checked as JSON.
        #expect(
            Self.problem(Self.prefix(run) + Array(#""x"}"#.utf8))
                == PayloadSyntaxProblem(offset: at + 1, reason: "expected ',' or '}'")
        )
        // No closing quote: the problem is at the end, however long the run.
        let open = Self.prefix(run)
        #expect(
            Self.problem(open) == PayloadSyntaxProblem(offset: open.count, reason: "a string without its closing quote")
        )
    }
}
