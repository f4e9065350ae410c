/// A cursor over JSON bytes (RFC 8259) with the few steps a validator takes: what the next
/// value is, a string's raw contents, a member's key, a value skipped whole. It reads in place
/// and allocates nothing; a step that meets malformed JSON returns `nil` or `false`. FCM's send
/// check walks a request with it, and the device fleet a payload (`NotificationOffer`).
package struct JSONCursor {
    package let bytes: UnsafeRawBufferPointer
    package private(set) var index = 0
    /// Whether the last string read (`string()`, `key()`) held an escape.
    private(set) var lastStringEscaped = false
    /// Containers nested deeper than this below the value `skipValue` starts at are refused
    /// (`PayloadSyntax` refuses a payload 64 deep from its root).
    static let maximumDepth = 64

    package init(_ bytes: UnsafeRawBufferPointer, at index: Int = 0) {
        self.bytes = bytes
        self.index = index
    }

    /// What a value is, by its first byte.
    package enum Kind: Equatable { case object, array, string, number, bool, null }

    /// The kind of the value at the cursor (after spaces); `nil` when none starts there.
    package mutating func kind() -> Kind? {
        skipSpaces()
        guard index < bytes.count else { return nil }
        switch bytes[index] {
        case UInt8(ascii: "{"): return .object
        case UInt8(ascii: "["): return .array
        case UInt8(ascii: "\""): return .string
        case UInt8(ascii: "t"), UInt8(ascii: "f"): return .bool
        case UInt8(ascii: "n"): return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number
        default: return nil
        }
    }

    /// Whether the input holds nothing but spaces from the cursor on.
    package mutating func atEnd() -> Bool {
        skipSpaces()
        return index == bytes.count
    }

    /// Reads a string; the range of its contents as written (escapes not decoded).
    package mutating func string() -> Range<Int>? {
        skipSpaces()
        guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { return nil }
        let start = index + 1
        var at = start
        lastStringEscaped = false
        while at < bytes.count {
            switch bytes[at] {
            case UInt8(ascii: "\""):
                index = at + 1
                return start..<at
            case UInt8(ascii: "\\"):
                lastStringEscaped = true
                guard at + 1 < bytes.count else { return nil }
                switch bytes[at + 1] {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
                    UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                    at += 2
                case UInt8(ascii: "u"):
                    guard at + 6 <= bytes.count, (at + 2..<at + 6).allSatisfy({ Self.isHexDigit(bytes[$0]) }) else {
                        return nil
                    }
                    at += 6
                default: return nil
                }
            case 0..<0x20: return nil
            default: at += 1
            }
        }
        return nil
    }

    /// Reads `true` or `false`.
    package mutating func bool() -> Bool? {
        skipSpaces()
        if literal("true") { return true }
        if literal("false") { return false }
        return nil
    }

    /// Enters an object: `{`, and whether it is empty (then its `}` is read too).
    package mutating func enterObject() -> (entered: Bool, empty: Bool) {
        enter(UInt8(ascii: "{"), closedBy: UInt8(ascii: "}"))
    }

    /// A member's key and its colon; the cursor is then at the value.
    package mutating func key() -> Range<Int>? {
        guard let key = string() else { return nil }
        skipSpaces()
        guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { return nil }
        index += 1
        return key
    }

    /// After a member's value: `true` when another member follows (its `,` read), `false` at
    /// the object's `}` (read), `nil` when neither comes.
    package mutating func nextMember() -> Bool? { next(closedBy: UInt8(ascii: "}")) }

    /// Enters an array: `[`, and whether it is empty (then its `]` is read too).
    package mutating func enterArray() -> (entered: Bool, empty: Bool) {
        enter(UInt8(ascii: "["), closedBy: UInt8(ascii: "]"))
    }

    /// After an element: `true` when another follows (its `,` read), `false` at the array's `]`
    /// (read), `nil` when neither comes.
    package mutating func nextElement() -> Bool? { next(closedBy: UInt8(ascii: "]")) }

    /// Enters the container that `open` begins and `close` ends.
    private mutating func enter(_ open: UInt8, closedBy close: UInt8) -> (entered: Bool, empty: Bool) {
        skipSpaces()
        guard index < bytes.count, bytes[index] == open else { return (false, false) }
        index += 1
        skipSpaces()
        if index < bytes.count, bytes[index] == close {
            index += 1
            return (true, true)
        }
        return (true, false)
    }

    /// After a value in the container that `close` ends: `,` (another follows) or `close`.
    private mutating func next(closedBy close: UInt8) -> Bool? {
        skipSpaces()
        guard index < bytes.count else { return nil }
        switch bytes[index] {
        case UInt8(ascii: ","):
            index += 1
            return true
        case close:
            index += 1
            return false
        default: return nil
        }
    }

    /// Skips the value at the cursor, whatever it is; `false` when it is malformed.
    package mutating func skipValue(depth: Int = 0) -> Bool {
        guard depth < Self.maximumDepth, let kind = kind() else { return false }
        switch kind {
        case .string: return string() != nil
        case .bool: return bool() != nil
        case .null: return literal("null")
        case .number: return number()
        case .object:
            let (_, empty) = enterObject()
            if empty { return true }
            while true {
                guard key() != nil, skipValue(depth: depth + 1), let more = nextMember() else { return false }
                if !more { return true }
            }
        case .array:
            let (_, empty) = enterArray()
            if empty { return true }
            while true {
                guard skipValue(depth: depth + 1), let more = nextElement() else { return false }
                if !more { return true }
            }
        }
    }

    /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`
    private mutating func number() -> Bool {
        if index < bytes.count, bytes[index] == UInt8(ascii: "-") { index += 1 }
        guard index < bytes.count, Self.isDigit(bytes[index]) else { return false }
        if bytes[index] == UInt8(ascii: "0") { index += 1 } else { digits() }
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            guard index < bytes.count, Self.isDigit(bytes[index]) else { return false }
            digits()
        }
        if index < bytes.count, bytes[index] | 0x20 == UInt8(ascii: "e") {
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
                index += 1
            }
            guard index < bytes.count, Self.isDigit(bytes[index]) else { return false }
            digits()
        }
        return true
    }

    private mutating func digits() {
        while index < bytes.count, Self.isDigit(bytes[index]) { index += 1 }
    }

    private mutating func literal(_ word: StaticString) -> Bool {
        let count = word.utf8CodeUnitCount
        guard index + count <= bytes.count else { return false }
        for offset in 0..<count where bytes[index + offset] != word.utf8Start[offset] { return false }
        index += count
        return true
    }

    private mutating func skipSpaces() {
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: " "), UInt8(ascii: "\n"), UInt8(ascii: "\r"), UInt8(ascii: "\t"): index += 1
            default: return
            }
        }
    }

    static func isDigit(_ byte: UInt8) -> Bool { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) }

    static func isHexDigit(_ byte: UInt8) -> Bool {
        isDigit(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte | 0x20)
    }

    // MARK: A string's contents decoded

    /// Whether a string's contents (as `string()` returns them) hold an escape.
    static func hasEscape(_ bytes: UnsafeRawBufferPointer, _ contents: Range<Int>) -> Bool {
        contents.contains { bytes[$0] == UInt8(ascii: "\\") }
    }

    /// The UTF-8 length of a string's contents once its escapes are decoded: a simple escape is
    /// one byte; `\uXXXX` one to three, and a surrogate pair four. Contents `string()` accepted.
    static func decodedLength(_ bytes: UnsafeRawBufferPointer, _ contents: Range<Int>) -> Int {
        var length = 0
        var at = contents.lowerBound
        while at < contents.upperBound {
            guard bytes[at] == UInt8(ascii: "\\") else {
                length += 1
                at += 1
                continue
            }
            guard bytes[at + 1] == UInt8(ascii: "u") else {
                length += 1
                at += 2
                continue
            }
            let unit = codeUnit(bytes, at + 2)
            if (0xD800..<0xDC00).contains(unit), at + 12 <= contents.upperBound, bytes[at + 6] == UInt8(ascii: "\\"),
                bytes[at + 7] == UInt8(ascii: "u"), (0xDC00..<0xE000).contains(codeUnit(bytes, at + 8))
            {
                length += 4
                at += 12
            } else {
                length += unit < 0x80 ? 1 : unit < 0x800 ? 2 : 3
                at += 6
            }
        }
        return length
    }

    /// A string's contents decoded to UTF-8 (a lone surrogate as U+FFFD). It allocates: for the
    /// rare key written with escapes, which is then compared decoded.
    static func decoded(_ bytes: UnsafeRawBufferPointer, _ contents: Range<Int>) -> [UInt8] {
        var scalars = String.UnicodeScalarView()
        var utf8: [UInt8] = []
        var at = contents.lowerBound
        func flush() {
            utf8 += Array(String(scalars).utf8)
            scalars = String.UnicodeScalarView()
        }
        while at < contents.upperBound {
            guard bytes[at] == UInt8(ascii: "\\") else {
                flush()
                utf8.append(bytes[at])
                at += 1
                continue
            }
            let escaped = bytes[at + 1]
            guard escaped == UInt8(ascii: "u") else {
                flush()
                switch escaped {
                case UInt8(ascii: "b"): utf8.append(0x08)
                case UInt8(ascii: "f"): utf8.append(0x0C)
                case UInt8(ascii: "n"): utf8.append(0x0A)
                case UInt8(ascii: "r"): utf8.append(0x0D)
                case UInt8(ascii: "t"): utf8.append(0x09)
                default: utf8.append(escaped)
                }
                at += 2
                continue
            }
            var unit = UInt32(codeUnit(bytes, at + 2))
            at += 6
            if (0xD800..<0xDC00).contains(unit), at + 6 <= contents.upperBound, bytes[at] == UInt8(ascii: "\\"),
                bytes[at + 1] == UInt8(ascii: "u"), (0xDC00..<0xE000).contains(codeUnit(bytes, at + 2))
            {
                unit = 0x10000 + ((unit - 0xD800) << 10) + (UInt32(codeUnit(bytes, at + 2)) - 0xDC00)
                at += 6
            }
            scalars.append(Unicode.Scalar(unit) ?? "\u{FFFD}")
        }
        flush()
        return utf8
    }

    /// The four hex digits at `at` as a UTF-16 code unit.
    private static func codeUnit(_ bytes: UnsafeRawBufferPointer, _ at: Int) -> UInt16 {
        var unit: UInt16 = 0
        for offset in 0..<4 {
            let byte = bytes[at + offset]
            let digit = isDigit(byte) ? byte - UInt8(ascii: "0") : (byte | 0x20) - UInt8(ascii: "a") + 10
            unit = unit << 4 | UInt16(digit)
        }
        return unit
    }
}
