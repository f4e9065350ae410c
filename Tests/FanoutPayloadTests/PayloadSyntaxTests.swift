import FanoutRandom
import FanoutTestSupport
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
                    == PayloadSyntaxProblem(offset: at, kind: .controlCharacter)
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
                    == PayloadSyntaxProblem(offset: at, kind: .notUTF8)
            )
        }
        // Escapes: known ones pass, an unknown one is named at the byte after the backslash.
        #expect(Self.problem(Self.prefix(run) + Array(#"\"\\\/\u00e9x"#.utf8) + close) == nil)
        #expect(
            Self.problem(Self.prefix(run) + Array(#"\x"#.utf8) + close)
                == PayloadSyntaxProblem(offset: at + 1, kind: .unknownEscape)
        )
        // The quote ends the string where it falls; what follows is checked as JSON.
        #expect(
            Self.problem(Self.prefix(run) + Array(#""x"}"#.utf8))
                == PayloadSyntaxProblem(offset: at + 1, kind: .expectedCommaOrBrace)
        )
        // No closing quote: the problem is at the end, however long the run.
        let open = Self.prefix(run)
        #expect(
            Self.problem(open) == PayloadSyntaxProblem(offset: open.count, kind: .unclosedString)
        )
    }

    /// Every kind of problem, each where the reference reading puts it: one input per kind, so
    /// a kind the C checker never returns (or returns elsewhere) fails here by name.
    @Test func eachKindIsFoundWhereTheReferenceFindsIt() {
        let cases: [(String, PayloadSyntaxProblem.Kind, Int)] = [
            (" [1]", .notAnObject, 1), (#"{} x"#, .textAfterTheObject, 3),
            (#"{"a":"# + String(repeating: "[", count: 64), .tooDeep, 68), (#"{"a":"#, .endsWhereAValueShouldBe, 5),
            (#"{"a":x}"#, .expectedValue, 5), (#"{"a":tru}"#, .expectedValue, 5), (#"{a:1}"#, .expectedKey, 1),
            (#"{"a" 1}"#, .expectedColon, 5), (#"{"a":1 "b"}"#, .expectedCommaOrBrace, 7),
            (#"{"a":[1 2]}"#, .expectedCommaOrBracket, 8), (#"{"a":"\u12x"}"#, .shortUnicodeEscape, 10),
            (#"{"a":"\q"}"#, .unknownEscape, 7), ("{\"a\":\"\u{1}\"}", .controlCharacter, 6),
            (#"{"a":"x"#, .unclosedString, 7), (#"{"a":-}"#, .numberWithoutDigits, 6),
            (#"{"a":1.}"#, .noFractionDigits, 7), (#"{"a":1e+}"#, .noExponentDigits, 8),
            (#"{"a":[1,]}"#, .expectedValue, 8),
        ]
        for (text, kind, offset) in cases {
            let bytes = Array(text.utf8)
            let problem = Self.problem(bytes)
            #expect(problem == PayloadSyntaxProblem(offset: offset, kind: kind), "\(text)")
            let reference = bytes.withUnsafeBytes { ReferencePayloadSyntax.problem(in: $0) }
            #expect(reference?.offset == problem?.offset && reference?.reason == problem?.reason, "\(text)")
        }
        let lone = Array(#"{"a":""#.utf8) + [0xC3] + Array(#""}"#.utf8)
        #expect(Self.problem(lone) == PayloadSyntaxProblem(offset: 6, kind: .notUTF8))
        let loneReference = lone.withUnsafeBytes { ReferencePayloadSyntax.problem(in: $0) }
        #expect(loneReference?.offset == 6 && loneReference?.reason == PayloadSyntaxProblem.Kind.notUTF8.description)
        #expect(Set(cases.map(\.1)).union([.notUTF8]) == Set(PayloadSyntaxProblem.Kind.allCases))
    }

    static let alphabet =
        Array(#"{}[]":,\ "aps"alert"x0123456789.eE+-truefalsenull\u00e9"#.utf8)
        + [
            0x00, 0x09, 0x0A, 0x1F, 0x7F, 0xC3, 0xA9, 0xE2, 0x82, 0xAC, 0xED, 0xA0, 0xF0, 0x9F, 0x98, 0x80, 0xF4, 0x90,
            0xFF,
        ]

    static let seeds: [[UInt8]] = [
        #"{"aps":{"alert":{"title":"Poll","body":"Do you like the new design?"},"badge":1,"sound":"default","category":"poll","mutable-content":1},"category-actions":[{"name":"OK","type":"url","value":"https://example.com/ok"}]}"#,
        #"{"aps":{"alert":{"title":"é €😀","body":"x\n\u00e9\/"},"badge":-1.5e+3},"a":[true,false,null,{},[],0,-0.0e-0]}"#,
        " { \t\"a\" :\r\n[ 1 , { \"b\" : [ ] } ] } ",
        #"{"a":"# + String(repeating: "[", count: 62) + "1" + String(repeating: "]", count: 62) + "}", "{}",
    ].map { Array($0.utf8) }

    /// A seed with up to four bytes replaced, inserted or removed, or cut short.
    static func mutated(_ random: inout SeededRandom) -> [UInt8] {
        ByteMutation.mutated(seeds, alphabet: alphabet, edits: 5, cuts: true) { random.next() }
    }

    /// 200,000 inputs, most of them a few bytes from a JSON object: the C checker's verdict,
    /// offset and words are the reference reading's, every time.
    @Test func theCheckerAgreesWithTheReferenceReading() {
        var random = SeededRandom(seed: 65)
        var kinds: Set<PayloadSyntaxProblem.Kind> = []
        var objects = 0
        for round in 0..<200_000 {
            let bytes =
                round % 4 == 3
                ? (0..<Int(random.next() % 48)).map { _ in
                    Self.alphabet[Int(random.next() % UInt64(Self.alphabet.count))]
                }
                : Self.mutated(&random)
            let problem = Self.problem(bytes)
            let reference = bytes.withUnsafeBytes { ReferencePayloadSyntax.problem(in: $0) }
            guard problem?.offset == reference?.offset, problem?.reason == reference?.reason else {
                let ours = problem.map(String.init(describing:)) ?? "an object"
                let theirs = reference.map { "\($0.reason) at byte \($0.offset)" } ?? "an object"
                Issue.record("\(bytes): \(ours) where the reference reads \(theirs)")
                return
            }
            if let problem { kinds.insert(problem.kind) } else { objects += 1 }
        }
        // The inputs reach every kind, and objects are well represented.
        #expect(kinds == Set(PayloadSyntaxProblem.Kind.allCases))
        #expect(objects > 20_000)
    }
}
