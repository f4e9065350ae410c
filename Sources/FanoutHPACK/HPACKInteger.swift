/// HPACK's prefixed integers (RFC 7541 §5.1).
///
/// ```
///   0   1   2   3   4   5   6   7
/// +---+---+---+---+---+---+---+---+
/// | ? | ? | ? |       Value       |     value < 2^N − 1: in the prefix
/// +---+---+---+-------------------+
/// | ? | ? | ? | 1   1   1   1   1 |     otherwise: all ones, then
/// +---+---------------------------+
/// | 1 |    Value − (2^N − 1) LSB  |     seven bits at a time, low first,
/// +---+---------------------------+     the high bit saying more follow
/// | 0 |    Value MSB              |
/// +---+---------------------------+
/// ```
enum HPACKInteger {
    /// The largest value decoded: HPACK's indices, lengths and sizes never need more.
    static let limit = 1 << 31

    /// The most bytes an integer takes: up to 2^31, what is past the prefix takes five groups
    /// of seven bits.
    static let maximumLength = 6

    /// Stores `value` at `out`, which has room for `maximumLength` bytes; returns the bytes stored.
    @inline(__always)
    static func store(_ value: Int, prefixBits: Int, flags: UInt8, at out: UnsafeMutableRawPointer) -> Int {
        precondition(value >= 0 && value <= limit, "an HPACK integer is at most 2^31")
        let maximum = (1 << prefixBits) - 1
        if value < maximum {
            out.storeBytes(of: flags | UInt8(value), as: UInt8.self)
            return 1
        }
        out.storeBytes(of: flags | UInt8(maximum), as: UInt8.self)
        var rest = value - maximum
        var count = 1
        while rest >= 128 {
            out.storeBytes(of: UInt8(rest & 0x7F) | 0x80, toByteOffset: count, as: UInt8.self)
            rest >>= 7
            count += 1
        }
        out.storeBytes(of: UInt8(rest), toByteOffset: count, as: UInt8.self)
        return count + 1
    }

    /// Reads an integer whose first byte is at `offset`, moving `offset` past it.
    @inline(__always)
    static func read(
        _ bytes: UnsafeRawBufferPointer,
        at offset: inout Int,
        prefixBits: Int
    ) throws(HPACKError) -> Int {
        guard offset < bytes.count else { throw .truncated }
        let maximum = (1 << prefixBits) - 1
        var value = Int(bytes[offset]) & maximum
        offset += 1
        if value < maximum { return value }
        var shift = 0
        while true {
            guard offset < bytes.count else { throw .truncated }
            let byte = bytes[offset]
            offset += 1
            value += Int(byte & 0x7F) << shift
            if value > limit || shift > 28 { throw .integerOverflow }
            if byte & 0x80 == 0 { return value }
            shift += 7
        }
    }
}
