/// How error messages name a byte: `'x'` for printable ASCII, `a space`, otherwise
/// `byte 0x0A`. Shared so that a template, a token file and a token on the command line
/// describe the same byte the same way.
public enum ByteDescription {
    /// `'x'`, `a space` or `byte 0xNN`.
    public static func describe(_ byte: UInt8) -> String {
        if byte == 0x20 { return "a space" }
        if isPrintable(byte) { return "'\(Character(Unicode.Scalar(byte)))'" }
        return "byte 0x\(hex(byte))"
    }

    /// Two uppercase hex digits.
    public static func hex(_ byte: UInt8) -> String {
        let digits = Array("0123456789ABCDEF".utf8)
        return String(decoding: [digits[Int(byte >> 4)], digits[Int(byte & 0xF)]], as: UTF8.self)
    }

    /// Whether `byte` is visible ASCII, `!` to `~`.
    public static func isPrintable(_ byte: UInt8) -> Bool {
        byte > 0x20 && byte < 0x7F
    }
}
