import FanoutAPNs
import FanoutNotation

/// A JSON value as it stood in a template file, with the byte offset where it began.
///
/// Offsets become line and column only when an error is reported (see `SourceText`).
struct SourceNode: Sendable {
    indirect enum Value: Sendable {
        case null
        case bool(Bool)
        case integer(Int)
        case number(Double)
        /// A string's decoded text; `verbatim` says it had no escapes, so offsets within the
        /// text match offsets in the file.
        case string(String, verbatim: Bool)
        case array([SourceNode])
        case object([Member])
    }

    struct Member: Sendable {
        let key: String
        let keyOffset: Int
        let value: SourceNode
    }

    let offset: Int
    let value: Value

    /// "an integer", "a string"…: how error messages name what was found.
    var kindDescription: String {
        switch value {
        case .null: "null"
        case .bool: "a boolean"
        case .integer: "an integer"
        case .number: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }
}

/// A strict RFC 8259 parser for template files that reports errors by line and column.
///
/// Strict on purpose: it validates UTF-8, rejects lone surrogates, duplicate keys, trailing
/// commas and leading zeros, and bounds nesting so that no input can exhaust the stack. A UTF-8
/// byte order mark at the start is skipped, as editors on some systems write one.
struct JSONSourceParser {
    /// Deeper nesting than this is refused rather than recursed into.
    static let maximumDepth = 64

    private let source: SourceText
    private var index: Int

    init(_ source: SourceText) {
        self.source = source
        self.index = 0
    }

    static func parse(_ source: SourceText) throws(PayloadTemplateError) -> SourceNode {
        var parser = JSONSourceParser(source)
        return try parser.parseDocument()
    }

    private var bytes: [UInt8] { source.bytes }

    private mutating func parseDocument() throws(PayloadTemplateError) -> SourceNode {
        if bytes.count >= 3 && bytes[0] == 0xEF && bytes[1] == 0xBB && bytes[2] == 0xBF { index = 3 }
        skipWhitespace()
        if index == bytes.count { throw error(.malformedJSON, "the file is empty; expected a JSON object") }
        let node = try parseValue(depth: 0)
        skipWhitespace()
        if index < bytes.count {
            throw error(.malformedJSON, "unexpected \(source.describeByte(at: index)) after the JSON value")
        }
        return node
    }

    private mutating func parseValue(depth: Int) throws(PayloadTemplateError) -> SourceNode {
        skipWhitespace()
        guard index < bytes.count else { throw error(.malformedJSON, "expected a JSON value, found end of file") }
        let start = index
        switch bytes[index] {
        case UInt8(ascii: "{"):
            return SourceNode(offset: start, value: .object(try parseObject(depth: depth + 1)))
        case UInt8(ascii: "["):
            return SourceNode(offset: start, value: .array(try parseArray(depth: depth + 1)))
        case UInt8(ascii: "\""):
            let (text, verbatim) = try parseString()
            return SourceNode(offset: start, value: .string(text, verbatim: verbatim))
        case UInt8(ascii: "t"):
            try expectLiteral("true")
            return SourceNode(offset: start, value: .bool(true))
        case UInt8(ascii: "f"):
            try expectLiteral("false")
            return SourceNode(offset: start, value: .bool(false))
        case UInt8(ascii: "n"):
            try expectLiteral("null")
            return SourceNode(offset: start, value: .null)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return SourceNode(offset: start, value: try parseNumber())
        default:
            throw error(.malformedJSON, "expected a JSON value, found \(source.describeByte(at: index))")
        }
    }

    private mutating func parseObject(depth: Int) throws(PayloadTemplateError) -> [SourceNode.Member] {
        try checkDepth(depth)
        index += 1  // {
        var members: [SourceNode.Member] = []
        skipWhitespace()
        if peek(UInt8(ascii: "}")) {
            index += 1
            return members
        }
        while true {
            skipWhitespace()
            guard peek(UInt8(ascii: "\"")) else {
                if peek(UInt8(ascii: "}")) && !members.isEmpty {
                    throw error(.malformedJSON, "trailing comma before '}'; JSON allows none")
                }
                throw error(
                    .malformedJSON,
                    "expected an object key in double quotes, found \(source.describeByte(at: index))"
                )
            }
            let keyOffset = index
            let (key, _) = try parseString()
            if let first = members.first(where: { $0.key == key }) {
                throw error(
                    .malformedJSON,
                    "duplicate key \"\(key)\" (first at \(source.location(of: first.keyOffset)))",
                    at: keyOffset
                )
            }
            skipWhitespace()
            guard peek(UInt8(ascii: ":")) else {
                throw error(
                    .malformedJSON,
                    "expected ':' after the key \"\(key)\", found \(source.describeByte(at: index))"
                )
            }
            index += 1
            let value = try parseValue(depth: depth)
            members.append(SourceNode.Member(key: key, keyOffset: keyOffset, value: value))
            skipWhitespace()
            if peek(UInt8(ascii: ",")) {
                index += 1
                continue
            }
            if peek(UInt8(ascii: "}")) {
                index += 1
                return members
            }
            throw error(.malformedJSON, "expected ',' or '}' in the object, found \(source.describeByte(at: index))")
        }
    }

    private mutating func parseArray(depth: Int) throws(PayloadTemplateError) -> [SourceNode] {
        try checkDepth(depth)
        index += 1  // [
        var elements: [SourceNode] = []
        skipWhitespace()
        if peek(UInt8(ascii: "]")) {
            index += 1
            return elements
        }
        while true {
            skipWhitespace()
            if peek(UInt8(ascii: "]")) && !elements.isEmpty {
                throw error(.malformedJSON, "trailing comma before ']'; JSON allows none")
            }
            elements.append(try parseValue(depth: depth))
            skipWhitespace()
            if peek(UInt8(ascii: ",")) {
                index += 1
                continue
            }
            if peek(UInt8(ascii: "]")) {
                index += 1
                return elements
            }
            throw error(.malformedJSON, "expected ',' or ']' in the array, found \(source.describeByte(at: index))")
        }
    }

    /// Parses a string at `index` (on its opening quote); returns the decoded text and whether
    /// it had no escapes.
    private mutating func parseString() throws(PayloadTemplateError) -> (String, Bool) {
        let opening = index
        index += 1
        var decoded: [UInt8] = []
        var verbatim = true
        while true {
            guard index < bytes.count else {
                throw error(.malformedJSON, "unterminated string (it opens at \(source.location(of: opening)))")
            }
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                return (String(decoding: decoded, as: UTF8.self), verbatim)
            case UInt8(ascii: "\\"):
                verbatim = false
                try parseEscape(into: &decoded)
            case 0x00..<0x20:
                throw error(
                    .malformedJSON,
                    "control character U+00\(ByteDescription.hex(byte)) in a string must be written as an escape"
                )
            case 0x80...:
                let length = UTF8Validation.sequenceLength(bytes, at: index)
                guard length > 0 else {
                    throw error(
                        .invalidUTF8,
                        "invalid UTF-8: \(source.describeByte(at: index)) cannot start or continue a character here"
                    )
                }
                decoded.append(contentsOf: bytes[index..<index + length])
                index += length
            default:
                decoded.append(byte)
                index += 1
            }
        }
    }

    private mutating func parseEscape(into decoded: inout [UInt8]) throws(PayloadTemplateError) {
        let start = index
        index += 1  // backslash
        guard index < bytes.count else { throw error(.malformedJSON, "unterminated escape at end of file") }
        let byte = bytes[index]
        index += 1
        switch byte {
        case UInt8(ascii: "\""): decoded.append(UInt8(ascii: "\""))
        case UInt8(ascii: "\\"): decoded.append(UInt8(ascii: "\\"))
        case UInt8(ascii: "/"): decoded.append(UInt8(ascii: "/"))
        case UInt8(ascii: "b"): decoded.append(0x08)
        case UInt8(ascii: "f"): decoded.append(0x0C)
        case UInt8(ascii: "n"): decoded.append(0x0A)
        case UInt8(ascii: "r"): decoded.append(0x0D)
        case UInt8(ascii: "t"): decoded.append(0x09)
        case UInt8(ascii: "u"):
            var scalar = try parseHex4(escapeStart: start)
            if (0xD800...0xDBFF).contains(scalar) {
                // A high surrogate must be followed by an escaped low one; together they are one scalar.
                guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u")
                else {
                    throw error(
                        .malformedJSON,
                        "lone surrogate \\u\(hex4(scalar)) has no low surrogate after it",
                        at: start
                    )
                }
                let lowStart = index
                index += 2  // \u
                let low = try parseHex4(escapeStart: lowStart)
                guard (0xDC00...0xDFFF).contains(low) else {
                    throw error(
                        .malformedJSON,
                        "\\u\(hex4(scalar)) must be followed by a low surrogate, found \\u\(hex4(low))",
                        at: lowStart
                    )
                }
                scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
            } else if (0xDC00...0xDFFF).contains(scalar) {
                throw error(.malformedJSON, "lone low surrogate \\u\(hex4(scalar))", at: start)
            }
            // Every value left is a valid scalar.
            decoded.append(contentsOf: Array(String(Character(Unicode.Scalar(scalar)!)).utf8))
        default:
            throw error(
                .malformedJSON,
                ByteDescription.isPrintable(byte)
                    ? "invalid escape '\\\(Character(Unicode.Scalar(byte)))'"
                    : "invalid escape: a backslash followed by \(ByteDescription.describe(byte))",
                at: start
            )
        }
    }

    /// Reads the four hex digits of a `\uXXXX` escape; `index` is on the first digit.
    private mutating func parseHex4(escapeStart: Int) throws(PayloadTemplateError) -> UInt32 {
        var value: UInt32 = 0
        for _ in 0..<4 {
            guard index < bytes.count, let digit = hexValue(bytes[index]) else {
                throw error(.malformedJSON, "\\u must be followed by four hex digits", at: escapeStart)
            }
            value = value << 4 | UInt32(digit)
            index += 1
        }
        return value
    }

    private mutating func parseNumber() throws(PayloadTemplateError) -> SourceNode.Value {
        let start = index
        var isInteger = true
        if peek(UInt8(ascii: "-")) { index += 1 }
        guard index < bytes.count, isDigit(bytes[index]) else {
            throw error(.malformedJSON, "expected a digit after '-', found \(source.describeByte(at: index))")
        }
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
            if index < bytes.count && isDigit(bytes[index]) {
                throw error(.malformedJSON, "numbers may not have leading zeros", at: start)
            }
        } else {
            skipDigits()
        }
        if peek(UInt8(ascii: ".")) {
            isInteger = false
            index += 1
            guard index < bytes.count, isDigit(bytes[index]) else {
                throw error(.malformedJSON, "expected a digit after '.', found \(source.describeByte(at: index))")
            }
            skipDigits()
        }
        if peek(UInt8(ascii: "e")) || peek(UInt8(ascii: "E")) {
            isInteger = false
            index += 1
            if peek(UInt8(ascii: "+")) || peek(UInt8(ascii: "-")) { index += 1 }
            guard index < bytes.count, isDigit(bytes[index]) else {
                throw error(.malformedJSON, "expected a digit in the exponent, found \(source.describeByte(at: index))")
            }
            skipDigits()
        }
        let text = String(decoding: bytes[start..<index], as: UTF8.self)
        if isInteger {
            // Integers are exact (docs/templates.md): one past 64 bits would be written as a
            // rounded double, so it is refused where it stands.
            guard let value = Int(text) else {
                let shown = text.utf8.count > 40 ? "\(text.prefix(24))… (\(text.utf8.count) digits)" : text
                throw error(
                    .unrepresentableNumber,
                    "the integer \(shown) is outside −2^63…2^63−1 and would not be sent exactly; write it as a string",
                    at: start
                )
            }
            return .integer(value)
        }
        guard let value = Double(text), value.isFinite else {
            throw error(.unrepresentableNumber, "the number \(text) is out of range for a 64-bit float", at: start)
        }
        return .number(value)
    }

    private mutating func expectLiteral(_ word: StaticString) throws(PayloadTemplateError) {
        let start = index
        let expected = UnsafeRawBufferPointer(start: word.utf8Start, count: word.utf8CodeUnitCount)
        for byte in expected {
            guard index < bytes.count, bytes[index] == byte else {
                index = start
                throw error(
                    .malformedJSON,
                    "expected a JSON value, found \(source.describeByte(at: start)); did you mean \(word)?"
                )
            }
            index += 1
        }
        if index < bytes.count && isLetter(bytes[index]) {
            throw error(.malformedJSON, "expected a JSON value, found \(source.describeByte(at: start))", at: start)
        }
    }

    private mutating func checkDepth(_ depth: Int) throws(PayloadTemplateError) {
        if depth > JSONSourceParser.maximumDepth {
            throw error(.malformedJSON, "nesting deeper than \(JSONSourceParser.maximumDepth) levels is not accepted")
        }
    }

    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\n"), UInt8(ascii: "\r"): index += 1
            default: return
            }
        }
    }

    private mutating func skipDigits() {
        while index < bytes.count && isDigit(bytes[index]) { index += 1 }
    }

    private func peek(_ byte: UInt8) -> Bool { index < bytes.count && bytes[index] == byte }
    private func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }
    private func isLetter(_ byte: UInt8) -> Bool {
        (byte | 0x20) >= UInt8(ascii: "a") && (byte | 0x20) <= UInt8(ascii: "z")
    }

    private func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    private func hex4(_ value: UInt32) -> String {
        let text = String(value, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, 4 - text.count)) + text
    }

    private func error(
        _ code: PayloadTemplateError.Code,
        _ message: String,
        at offset: Int? = nil
    ) -> PayloadTemplateError {
        PayloadTemplateError(code, message, at: source.location(of: offset ?? index))
    }
}
