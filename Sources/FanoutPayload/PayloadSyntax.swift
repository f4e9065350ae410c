import CFanoutSIMD

/// Checks that received bytes are one JSON object (RFC 8259) in valid UTF-8, in place and
/// without allocating: what the sink needs to answer a malformed payload without building it.
///
/// Recursive descent over the bytes; nesting is bounded (`maximumDepth`), so a hostile payload
/// cannot exhaust the stack.
public enum PayloadSyntax {
    /// The deepest nesting accepted.
    public static let maximumDepth = 64

    /// Where and why `bytes` is not a JSON object, or `nil` when it is one.
    public static func problem(in bytes: UnsafeRawBufferPointer) -> PayloadSyntaxProblem? {
        var scanner = Scanner(bytes: bytes)
        scanner.skipSpace()
        guard scanner.peek == UInt8(ascii: "{") else { return scanner.fail("the payload is not a JSON object") }
        scanner.value(depth: 0)
        if scanner.problem == nil {
            scanner.skipSpace()
            if scanner.offset < bytes.count {
                scanner.problem = .init(offset: scanner.offset, reason: "text after the object")
            }
        }
        return scanner.problem
    }

    private struct Scanner {
        let bytes: UnsafeRawBufferPointer
        var offset = 0
        var problem: PayloadSyntaxProblem?

        init(bytes: UnsafeRawBufferPointer) {
            self.bytes = bytes
        }

        var peek: UInt8? { offset < bytes.count ? bytes[offset] : nil }

        @discardableResult
        mutating func fail(_ reason: String) -> PayloadSyntaxProblem? {
            if problem == nil { problem = PayloadSyntaxProblem(offset: offset, reason: reason) }
            return problem
        }

        mutating func skipSpace() {
            while let byte = peek, byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 { offset += 1 }
        }

        mutating func expect(_ byte: UInt8, _ what: String) -> Bool {
            skipSpace()
            guard peek == byte else {
                fail("expected \(what)")
                return false
            }
            offset += 1
            return true
        }

        mutating func value(depth: Int) {
            guard problem == nil else { return }
            guard depth < PayloadSyntax.maximumDepth else {
                fail("nesting deeper than \(PayloadSyntax.maximumDepth)")
                return
            }
            skipSpace()
            guard let byte = peek else {
                fail("the payload ends where a value should be")
                return
            }
            switch byte {
            case UInt8(ascii: "{"): object(depth: depth)
            case UInt8(ascii: "["): array(depth: depth)
            case UInt8(ascii: "\""): string()
            case UInt8(ascii: "t"): literal("true")
            case UInt8(ascii: "f"): literal("false")
            case UInt8(ascii: "n"): literal("null")
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): number()
            default: fail("expected a value")
            }
        }

        mutating func object(depth: Int) {
            offset += 1
            skipSpace()
            if peek == UInt8(ascii: "}") {
                offset += 1
                return
            }
            while problem == nil {
                skipSpace()
                guard peek == UInt8(ascii: "\"") else {
                    fail("expected a key in quotes")
                    return
                }
                string()
                guard problem == nil, expect(UInt8(ascii: ":"), "':' after a key") else { return }
                value(depth: depth + 1)
                guard problem == nil else { return }
                skipSpace()
                switch peek {
                case UInt8(ascii: ","): offset += 1
                case UInt8(ascii: "}"):
                    offset += 1
                    return
                default:
                    fail("expected ',' or '}'")
                    return
                }
            }
        }

        mutating func array(depth: Int) {
            offset += 1
            skipSpace()
            if peek == UInt8(ascii: "]") {
                offset += 1
                return
            }
            while problem == nil {
                value(depth: depth + 1)
                guard problem == nil else { return }
                skipSpace()
                switch peek {
                case UInt8(ascii: ","): offset += 1
                case UInt8(ascii: "]"):
                    offset += 1
                    return
                default:
                    fail("expected ',' or ']'")
                    return
                }
            }
        }

        mutating func string() {
            offset += 1  // the opening quote
            while offset < bytes.count {
                // The plain run (what `default` below takes a byte at a time), sixteen bytes a step.
                offset += fanout_plain_json_prefix_length(
                    bytes.baseAddress!.assumingMemoryBound(to: UInt8.self) + offset,
                    bytes.count - offset
                )
                guard let byte = peek else { break }
                switch byte {
                case UInt8(ascii: "\""):
                    offset += 1
                    return
                case UInt8(ascii: "\\"):
                    offset += 1
                    switch peek {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"),
                        UInt8(ascii: "f"), UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                        offset += 1
                    case UInt8(ascii: "u"):
                        offset += 1
                        for _ in 0..<4 {
                            guard let digit = peek, isHexDigit(digit) else {
                                fail("\\u needs four hex digits")
                                return
                            }
                            offset += 1
                        }
                    default:
                        fail("an unknown escape")
                        return
                    }
                case 0..<0x20:
                    fail("a control character inside a string")
                    return
                case 0x80...:
                    let length = UTF8Validation.sequenceLength(
                        at: bytes.baseAddress! + offset,
                        available: bytes.count - offset
                    )
                    guard length > 0 else {
                        fail("bytes that are not UTF-8")
                        return
                    }
                    offset += length
                default:
                    offset += 1
                }
            }
            fail("a string without its closing quote")
        }

        mutating func literal(_ word: StaticString) {
            let count = word.utf8CodeUnitCount
            let expected = UnsafeRawBufferPointer(start: word.utf8Start, count: count)
            guard bytes.count - offset >= count,
                UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + count)]).elementsEqual(expected)
            else {
                fail("expected a value")
                return
            }
            offset += count
        }

        mutating func number() {
            if peek == UInt8(ascii: "-") { offset += 1 }
            guard let first = peek, isDigit(first) else {
                fail("a number without digits")
                return
            }
            offset += 1
            if first != UInt8(ascii: "0") { while let byte = peek, isDigit(byte) { offset += 1 } }
            if peek == UInt8(ascii: ".") {
                offset += 1
                guard let byte = peek, isDigit(byte) else {
                    fail("no digits after the decimal point")
                    return
                }
                while let byte = peek, isDigit(byte) { offset += 1 }
            }
            if peek == UInt8(ascii: "e") || peek == UInt8(ascii: "E") {
                offset += 1
                if peek == UInt8(ascii: "+") || peek == UInt8(ascii: "-") { offset += 1 }
                guard let byte = peek, isDigit(byte) else {
                    fail("no digits in the exponent")
                    return
                }
                while let byte = peek, isDigit(byte) { offset += 1 }
            }
        }

        func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

        func isHexDigit(_ byte: UInt8) -> Bool {
            isDigit(byte) || (byte | 0x20 >= UInt8(ascii: "a") && byte | 0x20 <= UInt8(ascii: "f"))
        }
    }
}

/// Why received bytes are not a JSON object, and the byte offset where that shows.
public struct PayloadSyntaxProblem: Error, Sendable, Hashable, CustomStringConvertible {
    public var offset: Int
    public var reason: String

    public var description: String { "\(reason) at byte \(offset)" }
}
