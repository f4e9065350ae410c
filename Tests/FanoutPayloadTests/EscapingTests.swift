import FanoutPayload
import FanoutTestSupport
import Foundation
import NIOCore
import PropertyBased
import Testing

/// RFC 8259 string escaping, checked on literal text (compiled once) and on field values
/// (escaped per notification), which take different code paths to the same writer.
@Suite struct EscapingTests {
    static let expectedEscapes: [(UInt8, String)] = (0..<0x20).map { byte in
        let short: [UInt8: String] = [0x08: #"\b"#, 0x0C: #"\f"#, 0x0A: #"\n"#, 0x0D: #"\r"#, 0x09: #"\t"#]
        let hex = String(byte, radix: 16)
        return (UInt8(byte), short[UInt8(byte)] ?? #"\u00"# + (hex.count == 1 ? "0" : "") + hex)
    }

    @Test func everyControlCharacterIsEscaped() throws {
        for (byte, escape) in Self.expectedEscapes {
            let text = String(decoding: [byte], as: UTF8.self)
            let literal = try PayloadTemplate(
                payload: APNsPayload(aps: APNsPayload.APS(alert: .text(TemplateText(text))))
            )
            #expect(try render(literal) == #"{"aps":{"alert":"\#(escape)"}}"#, "byte \(byte) in literal text")
            // A tab separates fields, so it cannot travel inside one.
            if byte != 0x09 {
                let field = try template(#"{"aps":{"alert":"{{field.1}}"}}"#)
                #expect(
                    try render(field, fields: [text]) == #"{"aps":{"alert":"\#(escape)"}}"#,
                    "byte \(byte) in a field"
                )
            }
        }
    }

    @Test func quoteAndBackslashAreEscapedSlashAndDeleteAreNot() throws {
        let payload = APNsPayload(aps: APNsPayload.APS(alert: .text(TemplateText(#"a"b\c/d"# + "\u{7F}"))))
        #expect(try render(PayloadTemplate(payload: payload)) == #"{"aps":{"alert":"a\"b\\c/d"# + "\u{7F}\"}}")
    }

    @Test func validUTF8PassesThroughUnescaped() throws {
        let text = "é ü € 𝄞 中文 \u{2028}\u{2029} 👩‍👩‍👧"
        let t = try template(#"{"aps":{"alert":"{{field.1}}"}}"#)
        #expect(try render(t, fields: [text]) == #"{"aps":{"alert":"\#(text)"}}"#)
    }

    /// The writer checks eight bytes at a time: put the character that needs work at every
    /// position of words and tails of every length.
    @Test func escapesAtEveryPositionOfAWord() throws {
        let t = try template(#"{"aps":{"alert":"{{field.1}}"}}"#)
        for length in 1...24 {
            for position in 0..<length {
                for (special, escaped) in [
                    ("\"", #"\""#), ("\\", #"\\"#), ("\n", #"\n"#), ("é", "é"), ("\u{1}", #"\u0001"#),
                ] {
                    var characters = Array(repeating: "x", count: length)
                    characters[position] = special
                    var expected = Array(repeating: "x", count: length)
                    expected[position] = escaped
                    #expect(
                        try render(t, fields: [characters.joined()]) == #"{"aps":{"alert":"\#(expected.joined())"}}"#,
                        "length \(length), position \(position)"
                    )
                }
            }
        }
    }

    @Test(
        arguments: [
            [0x80], [0xBF], [0xC0, 0x80], [0xC1, 0xBF], [0xC2], [0xE0, 0x80, 0x80], [0xED, 0xA0, 0x80],
            [0xF0, 0x80, 0x80, 0x80], [0xF4, 0x90, 0x80, 0x80], [0xF5, 0x80, 0x80, 0x80], [0xFF], [0xE2, 0x82],
        ] as [[UInt8]]
    )
    func malformedUTF8IsRefused(sequence: [UInt8]) throws {
        let t = try template(#"{"aps":{"alert":"{{field.1}}"}}"#)
        let encoder = PayloadEncoder(template: t)
        var buffer = ByteBuffer()
        // Long enough that the bad bytes land in the word loop as well as in the tail.
        let fields: [UInt8] = [UInt8(ascii: "\t")] + Array("abcdefgh".utf8) + sequence + Array("ijklmnop".utf8)
        let token = Array(sampleToken.utf8)
        _ = token.withUnsafeBytes { token in
            fields.withUnsafeBytes { fields in
                #expect(throws: PayloadEncodingError.invalidUTF8(.field(1))) {
                    try encoder.encode(NotificationInput(token: token, sequence: 0, fields: fields), into: &buffer)
                }
            }
        }
        // The template parser refuses the same bytes in a file, naming the place.
        let file = Array(#"{"aps":{"alert":"ab"#.utf8) + sequence + Array(#""}}"#.utf8)
        let error = loadError(bytes: file)
        #expect(error?.code == .invalidUTF8)
        #expect(error?.location?.column == 20)
    }
}

/// Random text, every control character and non-ASCII included, must come back unchanged
/// through Foundation's JSON parser, whichever way it entered the payload.
@Suite struct EscapingProperties {
    /// Characters weighted towards the ones that need care.
    static let character = Gen<UInt32>.value(in: 0...0x10FFFF).map { value -> Character in
        let scalar: UInt32
        switch value % 6 {
        case 0: scalar = value % 0x20
        case 1: scalar = [0x22, 0x5C, 0x2F, 0x7F, 0x7B, 0x7D][Int(value / 6 % 6)]
        case 2: scalar = 0x20 + value % 0x5F
        case 3: scalar = 0x80 + value % 0x780
        case 4:
            let bmp = 0x800 + value % 0xF7FF
            scalar = (0xD800...0xDFFF).contains(bmp) ? 0xFFFD : bmp
        default: scalar = 0x10000 + value % 0x100000
        }
        return Character(Unicode.Scalar(scalar)!)
    }

    static func decodeAlert(_ json: String) throws -> String? {
        // The oracle is Foundation's JSONDecoder. A raw U+FEFF is escaped first: swift-corelibs-
        // foundation's JSONSerialization drops one inside a string (it reads the bytes EF BB BF
        // as a byte-order mark wherever they are), and the same JSON text escaped reads the same
        // in either.
        let text = json.replacingOccurrences(of: "\u{FEFF}", with: #"\uFEFF"#)
        struct Alerted: Decodable {
            struct APS: Decodable { var alert: String? }
            var aps: APS?
        }
        return try JSONDecoder().decode(Alerted.self, from: Data(text.utf8)).aps?.alert
    }

    @Test func literalTextRoundTrips() async {
        await propertyCheck(count: 300, input: Self.character.string(of: 0...40)) { text in
            let payload = APNsPayload(aps: APNsPayload.APS(alert: .text(TemplateText(text))))
            let json = try render(PayloadTemplate(payload: payload))
            #expect(try Self.decodeAlert(json) == text)
        }
    }

    @Test func fieldTextRoundTrips() async throws {
        let t = try template(#"{"aps":{"alert":"<{{field.1}}>"}}"#)
        await propertyCheck(count: 300, input: Self.character.string(of: 0...40)) { text in
            let field = text.replacing("\t", with: " ")
            let json = try render(t, fields: [field])
            #expect(try Self.decodeAlert(json) == "<\(field)>")
        }
    }

    @Test(arguments: ["\u{FEFF}", "a\u{FEFF}b", "\u{FEFF}\u{FEFF}"])
    func zeroWidthNoBreakSpacesSurvive(literal: String) throws {
        // The property check below found this: U+FEFF inside a string is text, not a byte-order
        // mark, and Fanout keeps it byte for byte.
        let file = try JSONSerialization.data(withJSONObject: ["aps": ["alert": literal]])
        let json = try render(try PayloadTemplate(json: Array(file), file: "bom.json"))
        #expect(json.utf8.count == String(decoding: file, as: UTF8.self).utf8.count)
        #expect(try Self.decodeAlert(json) == literal)
    }

    @Test func templateFileTextRoundTrips() async {
        await propertyCheck(count: 300, input: Self.character.string(of: 0...40)) { text in
            // Foundation writes the template file; Fanout reads it and writes the payload.
            let literal = text.replacing("{{", with: "{ {")
            let file = try JSONSerialization.data(withJSONObject: ["aps": ["alert": literal]])
            let t = try PayloadTemplate(json: Array(file), file: "random.json")
            let json = try render(t)
            #expect(try Self.decodeAlert(json) == literal)
        }
    }

    @Test func doublesAreWrittenInShortestRoundTripForm() async throws {
        for (value, text) in [
            (0.5, "0.5"), (0.1, "0.1"), (1e-7, "1e-07"), (1.0, "1.0"), (Double.leastNonzeroMagnitude, "5e-324"),
            (1.7976931348623157e308, "1.7976931348623157e+308"), (-0.0, "-0.0"), (123456.789, "123456.789"),
        ] {
            let t = try PayloadTemplate(
                payload: APNsPayload(aps: APNsPayload.APS(), customKeys: [JSONMember("v", .number(value))])
            )
            #expect(try render(t) == #"{"aps":{},"v":\#(text)}"#)
        }
        await propertyCheck(count: 300, input: Gen<UInt64>.value(in: 0...UInt64.max)) { bits in
            let value = Double(bitPattern: bits)
            guard value.isFinite else { return }
            let t = try PayloadTemplate(
                payload: APNsPayload(aps: APNsPayload.APS(), customKeys: [JSONMember("v", .number(value))])
            )
            let json = try render(t)
            // Foundation must accept it as JSON; its Linux parser reads some numbers as
            // NSDecimalNumber and loses digits, so exactness is checked with Double(_:).
            #expect((try? JSONDecoder().decode(JSONKeys.self, from: Data(json.utf8))) != nil, "\(json)")
            let written = String(json.dropFirst(#"{"aps":{},"v":"#.count).dropLast())
            #expect(written.wholeMatch(of: /-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?/) != nil, "\(written)")
            #expect(Double(written) == value, "\(written)")
        }
    }

    @Test func nanAndInfinityAreRefused() {
        for value in [Double.nan, .infinity, -.infinity] {
            let payload = APNsPayload(aps: APNsPayload.APS(), customKeys: [JSONMember("v", .number(value))])
            #expect(throws: PayloadTemplateError.self) { try PayloadTemplate(payload: payload) }
            do {
                _ = try PayloadTemplate(payload: payload)
            } catch {
                #expect(error.code == .unrepresentableNumber)
            }
            let score = APNsPayload(aps: APNsPayload.APS(relevanceScore: .literal(value)))
            #expect(throws: PayloadTemplateError.self) { try PayloadTemplate(payload: score) }
        }
    }
}
