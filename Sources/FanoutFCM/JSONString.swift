import NIOCore

/// A JSON string as RFC 8259 §7 writes it: quoted, with `"`, `\` and the control characters
/// escaped (`\n`, `\t`, … and `\u00XX` for the rest); other text as its UTF-8 bytes.
enum JSONString {
    static func write(_ text: String, into buffer: inout ByteBuffer) {
        buffer.writeStaticString("\"")
        var plain = text.utf8.startIndex
        for index in text.utf8.indices {
            let byte = text.utf8[index]
            guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
            buffer.writeBytes(text.utf8[plain..<index])
            switch byte {
            case UInt8(ascii: "\""): buffer.writeStaticString(#"\""#)
            case UInt8(ascii: "\\"): buffer.writeStaticString(#"\\"#)
            case UInt8(ascii: "\n"): buffer.writeStaticString(#"\n"#)
            case UInt8(ascii: "\r"): buffer.writeStaticString(#"\r"#)
            case UInt8(ascii: "\t"): buffer.writeStaticString(#"\t"#)
            default:
                buffer.writeStaticString(#"\u00"#)
                buffer.writeInteger(hexDigit(byte >> 4))
                buffer.writeInteger(hexDigit(byte & 0xF))
            }
            plain = text.utf8.index(after: index)
        }
        buffer.writeBytes(text.utf8[plain...])
        buffer.writeStaticString("\"")
    }

    private static func hexDigit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") + nibble - 10
    }
}
