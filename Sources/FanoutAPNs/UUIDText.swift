/// A UUID in canonical text, as `apns-id` and `apns-unique-id` carry it: 32 hex digits in groups
/// of 8-4-4-4-12, 36 bytes. The one writer of the sender's ids, the sink's answers and timed ids.
///
/// ```
///   high: 64 bits ──► xxxxxxxx-xxxx-Vxxx          V: the version nibble (bits 12–15 of high)
///   low:  64 bits ──►               -Yxxx-xxxxxxxxxxxx   Y: the variant (top 2 bits of low: 10)
/// ```
public enum UUIDText {
    /// Bytes of the canonical text.
    public static let count = 36

    /// `bits` with the version set to 4 and the variant to RFC 9562's (10xx): a random UUID.
    @inlinable
    public static func version4(_ bits: (high: UInt64, low: UInt64)) -> (high: UInt64, low: UInt64) {
        (bits.high & ~0xF000 | 0x4000, bits.low & ~(0xC000_0000_0000_0000 as UInt64) | 0x8000_0000_0000_0000)
    }

    /// Writes `bits` as they are (no version set) into the first 36 bytes of `out`, lowercase
    /// unless `uppercase` (APNs writes its own ids in uppercase): each 32 bits become 8 digits
    /// at once (`digits(_:letters:)`), stored between the dashes of 8-4-4-4-12.
    @inlinable
    public static func write(
        _ bits: (high: UInt64, low: UInt64),
        uppercase: Bool = false,
        into out: UnsafeMutableRawBufferPointer
    ) {
        precondition(out.count >= count, "a UUID's text is 36 bytes")
        let letters: UInt64 = uppercase ? 7 : 39
        let text = out.baseAddress!
        let dash = UInt8(ascii: "-")
        //   0        8 9   13 14  18 19  23 24          36
        //   hhhhhhhh - hhhh - hhhh - llll - llllllllllll
        let lowDigits = digits(UInt32(truncatingIfNeeded: bits.low >> 32), letters: letters)
        text.storeBytes(of: digits(UInt32(truncatingIfNeeded: bits.high >> 32), letters: letters), as: UInt64.self)
        text.storeBytes(of: dash, toByteOffset: 8, as: UInt8.self)
        let high = halves(digits(UInt32(truncatingIfNeeded: bits.high), letters: letters))
        text.storeBytes(of: high.first, toByteOffset: 9, as: UInt32.self)
        text.storeBytes(of: dash, toByteOffset: 13, as: UInt8.self)
        text.storeBytes(of: high.second, toByteOffset: 14, as: UInt32.self)
        text.storeBytes(of: dash, toByteOffset: 18, as: UInt8.self)
        let low = halves(lowDigits)
        text.storeBytes(of: low.first, toByteOffset: 19, as: UInt32.self)
        text.storeBytes(of: dash, toByteOffset: 23, as: UInt8.self)
        text.storeBytes(of: low.second, toByteOffset: 24, as: UInt32.self)
        text.storeBytes(
            of: digits(UInt32(truncatingIfNeeded: bits.low), letters: letters),
            toByteOffset: 28,
            as: UInt64.self
        )
    }

    /// The first four and the last four digits of `digits(_:letters:)`'s word, each as the
    /// bytes of a 32-bit word stored in memory, on either byte order.
    @inlinable
    static func halves(_ digits: UInt64) -> (first: UInt32, second: UInt32) {
        #if _endian(little)
        (UInt32(truncatingIfNeeded: digits), UInt32(truncatingIfNeeded: digits >> 32))
        #else
        (UInt32(truncatingIfNeeded: digits >> 32), UInt32(truncatingIfNeeded: digits))
        #endif
    }

    /// The 8 hex digits of `value` as the bytes of a word stored in memory, most significant
    /// digit first: each nibble spread to a byte of its own, then '0' added, and `letters`
    /// more ('a' − '0' − 10 = 39, 'A' − '0' − 10 = 7) where the nibble is 10 or more.
    @inlinable
    static func digits(_ value: UInt32, letters: UInt64) -> UInt64 {
        var spread = UInt64(value)
        spread = (spread | spread << 16) & 0x0000_FFFF_0000_FFFF
        spread = (spread | spread << 8) & 0x00FF_00FF_00FF_00FF
        spread = (spread | spread << 4) & 0x0F0F_0F0F_0F0F_0F0F  // byte i holds nibble i
        let ordered = UInt64(bigEndian: spread)  // nibble 7, the most significant, at the lowest address
        let isLetter = (ordered &+ 0x0606_0606_0606_0606) >> 4 & 0x0101_0101_0101_0101
        return ordered &+ 0x3030_3030_3030_3030 &+ isLetter &* letters
    }
}
