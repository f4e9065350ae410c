import CFanoutSIMD

/// The byte-level JSON writers the encoder's hot path is made of.
///
/// Each writes at `out` (which the caller guarantees has room: at most six bytes per input byte
/// for text, twenty for an integer) and returns how many bytes it wrote, or `nil` when the input
/// cannot be written as asked. None allocates.
enum JSONWriting {
    /// Writes `text` as the inside of a JSON string (RFC 8259 §7): `"` and `\` are escaped, as are
    /// the control characters U+0000 to U+001F (with the short forms `\b \f \n \r \t` where they
    /// exist, `\u00xx` otherwise). Everything else, `/` and all valid UTF-8 included, is copied as
    /// it is. Returns `nil` when `text` is not valid UTF-8.
    ///
    /// Device tokens and most field values are plain ASCII, so the common case is one branch-free
    /// scan and one copy; only text that needs escaping or UTF-8 validation goes byte by byte.
    @inline(__always)
    static func escapedText(_ text: UnsafeRawBufferPointer, to out: UnsafeMutableRawPointer) -> Int? {
        guard let source = text.baseAddress else { return 0 }
        if isPlainASCII(text) {
            copy(source, to: out, count: text.count)
            return text.count
        }
        return escapedTextByteByByte(text, to: out)
    }

    /// Whether `text` is all printable ASCII other than `"` and `\`: JSON string content as it is.
    ///
    /// SSE2 on x86-64, sixteen bytes a step (`fanout_is_plain_json_ascii`), where Swift's own
    /// SIMD types do not compile to vector instructions.
    @inline(__always)
    static func isPlainASCII(_ text: UnsafeRawBufferPointer) -> Bool {
        guard let source = text.baseAddress else { return true }
        return fanout_is_plain_json_ascii(source.assumingMemoryBound(to: UInt8.self), text.count)
    }

    /// The high bit of each byte of `word` that is a control character, `"`, `\` or non-ASCII.
    ///
    /// The classic "has a zero byte" test, `(x - 0x01…) & ~x & 0x80…`, applied to `word` (bytes
    /// below 0x20 once 0x20 is subtracted) and to `word` xor-ed with each of the two characters.
    /// A borrow only spreads above a byte that already matched, so the answer is exact as a
    /// yes or no.
    @inline(__always)
    static func needsAttention(_ word: UInt64) -> UInt64 {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let quote = word ^ (ones &* UInt64(UInt8(ascii: "\"")))
        let backslash = word ^ (ones &* UInt64(UInt8(ascii: "\\")))
        let control = (word &- ones &* 0x20) & ~word
        let quoteZero = (quote &- ones) & ~quote
        let backslashZero = (backslash &- ones) & ~backslash
        return (control | quoteZero | backslashZero | word) & (ones &* 0x80)
    }

    /// The slow path of `escapedText`, for text with something to escape or non-ASCII.
    @inline(never)
    static func escapedTextByteByByte(_ text: UnsafeRawBufferPointer, to out: UnsafeMutableRawPointer) -> Int? {
        let source = text.baseAddress!
        let count = text.count
        var read = 0
        var written = 0
        while read < count {
            if read + 8 <= count {
                let word = source.loadUnaligned(fromByteOffset: read, as: UInt64.self)
                if needsAttention(word) == 0 {
                    out.storeBytes(of: word, toByteOffset: written, as: UInt64.self)
                    read += 8
                    written += 8
                    continue
                }
            }
            let byte = source.load(fromByteOffset: read, as: UInt8.self)
            if byte >= 0x80 {
                let length = UTF8Validation.sequenceLength(at: source + read, available: count - read)
                if length == 0 { return nil }
                copy(source + read, to: out + written, count: length)
                read += length
                written += length
                continue
            }
            written += escapedASCII(byte, to: out + written)
            read += 1
        }
        return written
    }

    /// Copies `count` bytes. Short runs (a badge, a small field) are copied inline, where a call
    /// to `memmove` would cost more than the copy; longer ones go to `memmove`, which moves 32
    /// bytes at a time. Ranges must not overlap.
    @inline(__always)
    static func copy(_ source: UnsafeRawPointer?, to out: UnsafeMutableRawPointer, count: Int) {
        guard let source, count > 0 else { return }
        switch count {
        case 16...:
            out.copyMemory(from: source, byteCount: count)
        case 8..<16:
            // Two words that overlap in the middle.
            out.storeBytes(of: source.loadUnaligned(as: UInt64.self), as: UInt64.self)
            out.storeBytes(
                of: source.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self),
                toByteOffset: count - 8,
                as: UInt64.self
            )
        default:
            for offset in 0..<count {
                out.storeBytes(
                    of: source.load(fromByteOffset: offset, as: UInt8.self),
                    toByteOffset: offset,
                    as: UInt8.self
                )
            }
        }
    }

    /// Writes one ASCII byte, escaped if JSON requires it; returns the bytes written (1, 2 or 6).
    @inline(__always)
    static func escapedASCII(_ byte: UInt8, to out: UnsafeMutableRawPointer) -> Int {
        let short: UInt8
        switch byte {
        case UInt8(ascii: "\""): short = UInt8(ascii: "\"")
        case UInt8(ascii: "\\"): short = UInt8(ascii: "\\")
        case 0x08: short = UInt8(ascii: "b")
        case 0x0C: short = UInt8(ascii: "f")
        case 0x0A: short = UInt8(ascii: "n")
        case 0x0D: short = UInt8(ascii: "r")
        case 0x09: short = UInt8(ascii: "t")
        case 0x00..<0x20:
            let digits: StaticString = "0123456789abcdef"
            out.storeBytes(of: UInt8(ascii: "\\"), toByteOffset: 0, as: UInt8.self)
            out.storeBytes(of: UInt8(ascii: "u"), toByteOffset: 1, as: UInt8.self)
            out.storeBytes(of: UInt8(ascii: "0"), toByteOffset: 2, as: UInt8.self)
            out.storeBytes(of: UInt8(ascii: "0"), toByteOffset: 3, as: UInt8.self)
            out.storeBytes(of: digits.utf8Start[Int(byte >> 4)], toByteOffset: 4, as: UInt8.self)
            out.storeBytes(of: digits.utf8Start[Int(byte & 0xF)], toByteOffset: 5, as: UInt8.self)
            return 6
        default:
            out.storeBytes(of: byte, as: UInt8.self)
            return 1
        }
        out.storeBytes(of: UInt8(ascii: "\\"), toByteOffset: 0, as: UInt8.self)
        out.storeBytes(of: short, toByteOffset: 1, as: UInt8.self)
        return 2
    }

    /// Writes `value` in decimal; returns the digit count (1 to 20).
    @inline(never)
    static func decimal(_ value: UInt64, to out: UnsafeMutableRawPointer) -> Int {
        var digits = 1
        var rest = value
        while rest >= 10 {
            rest /= 10
            digits += 1
        }
        rest = value
        var position = digits
        repeat {
            position -= 1
            out.storeBytes(
                of: UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: rest % 10),
                toByteOffset: position,
                as: UInt8.self
            )
            rest /= 10
        } while rest != 0
        return digits
    }

    /// Whether `text` is a JSON integer: `-?(0|[1-9][0-9]*)`.
    @inline(__always)
    static func isInteger(_ text: UnsafeRawBufferPointer) -> Bool {
        var index = 0
        return scanInteger(text, &index) && index == text.count
    }

    /// Whether `text` is a JSON number (RFC 8259 §6):
    /// `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`.
    @inline(never)
    static func isNumber(_ text: UnsafeRawBufferPointer) -> Bool {
        var index = 0
        guard scanInteger(text, &index) else { return false }
        if index < text.count && text[index] == UInt8(ascii: ".") {
            index += 1
            guard scanDigits(text, &index) else { return false }
        }
        if index < text.count && (text[index] | 0x20) == UInt8(ascii: "e") {
            index += 1
            if index < text.count && (text[index] == UInt8(ascii: "+") || text[index] == UInt8(ascii: "-")) {
                index += 1
            }
            guard scanDigits(text, &index) else { return false }
        }
        return index == text.count
    }

    /// Whether `text` is `true` or `false`.
    @inline(never)
    static func isBoolean(_ text: UnsafeRawBufferPointer) -> Bool {
        text.elementsEqual("true".utf8) || text.elementsEqual("false".utf8)
    }

    @inline(__always)
    private static func scanInteger(_ text: UnsafeRawBufferPointer, _ index: inout Int) -> Bool {
        if index < text.count && text[index] == UInt8(ascii: "-") { index += 1 }
        guard index < text.count else { return false }
        if text[index] == UInt8(ascii: "0") {
            index += 1
            return true
        }
        return scanDigits(text, &index)
    }

    /// Consumes one or more digits; false when there is none.
    @inline(__always)
    private static func scanDigits(_ text: UnsafeRawBufferPointer, _ index: inout Int) -> Bool {
        let start = index
        while index < text.count && text[index] &- UInt8(ascii: "0") < 10 { index += 1 }
        return index > start
    }

    /// Whether the JSON integer `text` (already matched) is within −2^63…2^63−1, so a reader
    /// takes it exactly.
    @inline(never)
    static func fitsInt64(_ text: UnsafeRawBufferPointer) -> Bool {
        let negative = text.first == UInt8(ascii: "-")
        let digits = UnsafeRawBufferPointer(rebasing: text[(negative ? 1 : 0)...])
        if digits.count < 19 { return true }
        if digits.count > 19 { return false }
        let largest = negative ? "9223372036854775808" : "9223372036854775807"
        return !largest.utf8.lexicographicallyPrecedes(digits)
    }

    /// Whether the JSON integer `text` (already matched) is below 0 (`-0` is not).
    @inline(__always)
    static func isNegative(_ text: UnsafeRawBufferPointer) -> Bool {
        text.count > 1 && text[0] == UInt8(ascii: "-") && text[1] != UInt8(ascii: "0")
    }

    /// Whether the JSON number `text` (already matched) is finite as a 64-bit float: `1e999`
    /// is read as infinity by every JSON reader that reads doubles. Decided from the decimal
    /// exponent of its first significant digit; only at 10^308, where the digits decide, is
    /// the text converted.
    @inline(never)
    static func isFiniteDouble(_ text: UnsafeRawBufferPointer) -> Bool {
        var index = text.first == UInt8(ascii: "-") ? 1 : 0
        var leading: Int?  // the power of ten of the first digit that is not 0
        var integerDigits = 0
        while index < text.count, text[index] &- UInt8(ascii: "0") < 10 {
            if leading == nil && text[index] != UInt8(ascii: "0") { leading = integerDigits }
            integerDigits += 1
            index += 1
        }
        var exponentOfLeading = leading.map { integerDigits - $0 - 1 }
        if index < text.count && text[index] == UInt8(ascii: ".") {
            index += 1
            var place = -1
            while index < text.count, text[index] &- UInt8(ascii: "0") < 10 {
                if exponentOfLeading == nil && text[index] != UInt8(ascii: "0") { exponentOfLeading = place }
                place -= 1
                index += 1
            }
        }
        guard let exponentOfLeading else { return true }  // zero
        var exponent = 0
        if index < text.count && (text[index] | 0x20) == UInt8(ascii: "e") {
            index += 1
            var sign = 1
            if index < text.count && (text[index] == UInt8(ascii: "+") || text[index] == UInt8(ascii: "-")) {
                if text[index] == UInt8(ascii: "-") { sign = -1 }
                index += 1
            }
            while index < text.count, text[index] &- UInt8(ascii: "0") < 10 {
                // Held far past any double's range, so a long exponent cannot overflow.
                exponent = min(exponent * 10 + Int(text[index] &- UInt8(ascii: "0")), 1_000_000)
                index += 1
            }
            exponent *= sign
        }
        let magnitude = exponentOfLeading + exponent
        if magnitude < 308 { return true }
        if magnitude > 308 { return false }
        return Double(String(decoding: text, as: UTF8.self))?.isFinite ?? false
    }
}
