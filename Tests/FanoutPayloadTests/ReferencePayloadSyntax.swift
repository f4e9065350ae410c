@testable import FanoutPayload

/// The sink's JSON check as it was written in Swift before it moved to C (a recursive descent,
/// a byte at a time): the reference `PayloadSyntax.problem(in:)` is compared with, verdict,
/// offset and words, in PayloadSyntaxTests.
enum ReferencePayloadSyntax {
    static let maximumDepth = 64

    static func problem(in bytes: UnsafeRawBufferPointer) -> (offset: Int, reason: String)? {
        var scanner = Scanner(bytes: bytes)
        scanner.skipSpace()
        guard scanner.peek == UInt8(ascii: "{") else { return scanner.fail("the payload is not a JSON object") }
        scanner.value(depth: 0)
        if scanner.problem == nil {
            scanner.skipSpace()
            if scanner.offset < bytes.count {
                scanner.problem = (scanner.offset, "text after the object")
            }
        }
        return scanner.problem
    }

    private struct Scanner {
        let bytes: UnsafeRawBufferPointer
        var offset = 0
        var problem: (offset: Int, reason: String)?

        init(bytes: UnsafeRawBufferPointer) {
            self.bytes = bytes
        }

        var peek: UInt8? { offset < bytes.count ? bytes[offset] : nil }

        @discardableResult
        mutating func fail(_ reason: String) -> (offset: Int, reason: String)? {
            if problem == nil { problem = (offset, reason) }
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
            guard depth < ReferencePayloadSyntax.maximumDepth else {
                fail("nesting deeper than \(ReferencePayloadSyntax.maximumDepth)")
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
