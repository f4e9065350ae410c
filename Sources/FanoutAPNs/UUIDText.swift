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
    /// unless `uppercase` (APNs writes its own ids in uppercase).
    @inlinable
    public static func write(
        _ bits: (high: UInt64, low: UInt64),
        uppercase: Bool = false,
        into out: UnsafeMutableRawBufferPointer
    ) {
        precondition(out.count >= count, "a UUID's text is 36 bytes")
        let digits: StaticString = uppercase ? "0123456789ABCDEF" : "0123456789abcdef"
        var position = 0
        for nibble in 0..<32 {
            if nibble == 8 || nibble == 12 || nibble == 16 || nibble == 20 {
                out[position] = UInt8(ascii: "-")
                position += 1
            }
            let word = nibble < 16 ? bits.high : bits.low
            out[position] = digits.utf8Start[Int(word >> (60 - 4 * UInt64(nibble % 16)) & 0xF)]
            position += 1
        }
    }
}
