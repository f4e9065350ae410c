/// A broadcast channel's id: 16 bytes, written as standard base64 (24 characters, two `=`),
/// as the ids APNs hands out look (docs/apns.md, "Broadcast channels"):
///
/// ```
///   bytes   │ 16 random bytes: high (8, big-endian) · low (8, big-endian) │
///   text    │ base64 "A–Z a–z 0–9 + /", padded with "=" to 24 characters    │
///   example   dGhpcy1pcy1hLWNoYW5uZWw=
/// ```
///
/// A request's `apns-channel-id` is read without allocating: `parse` decodes it in place.
package struct ChannelID: Hashable, Sendable {
    package var high: UInt64
    package var low: UInt64

    package init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }

    /// The longest `apns-channel-id` the sink takes as well formed (Fanout's choice: APNs says
    /// only "greater than the allowed length"; its own ids have 24 characters).
    package static let longestText = 64
    package static let textLength = 24

    /// What an `apns-channel-id` value is.
    package enum Parsed: Equatable {
        /// Not base64, or longer than `longestText`: 400 BadChannelId.
        case malformed
        /// Well formed but not 16 bytes: never one the sink made, so never registered.
        case foreign
        case id(ChannelID)
    }

    /// Reads `text` as base64 (padding optional); no allocation.
    package static func parse(_ text: UnsafeRawBufferPointer) -> Parsed {
        guard !text.isEmpty, text.count <= longestText else { return .malformed }
        var padding = 0
        while padding < 2, padding < text.count, text[text.count - 1 - padding] == UInt8(ascii: "=") { padding += 1 }
        let digits = text.count - padding
        if padding > 0 && text.count % 4 != 0 { return .malformed }
        guard digits % 4 != 1 else { return .malformed }
        var bytes = (UInt64(0), UInt64(0))
        var written = 0
        var accumulator: UInt32 = 0
        var bits = 0
        for index in 0..<digits {
            guard let value = sextet(text[index]) else { return .malformed }
            accumulator = accumulator << 6 | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                let byte = UInt64((accumulator >> UInt32(bits)) & 0xFF)
                if written < 8 {
                    bytes.0 = bytes.0 << 8 | byte
                } else if written < 16 {
                    bytes.1 = bytes.1 << 8 | byte
                }
                written += 1
            }
        }
        guard written == 16 else { return .foreign }
        return .id(ChannelID(high: bytes.0, low: bytes.1))
    }

    /// The id as APNs writes it: 24 characters of base64.
    package var text: String {
        var bytes = [UInt8]()
        bytes.reserveCapacity(16)
        for shift in stride(from: 56, through: 0, by: -8) {
            bytes.append(UInt8(truncatingIfNeeded: high >> UInt64(shift)))
        }
        for shift in stride(from: 56, through: 0, by: -8) {
            bytes.append(UInt8(truncatingIfNeeded: low >> UInt64(shift)))
        }
        var out = [UInt8]()
        out.reserveCapacity(Self.textLength)
        var index = 0
        while index < bytes.count {
            let chunk = bytes[index..<min(index + 3, bytes.count)]
            var group: UInt32 = 0
            for (offset, byte) in chunk.enumerated() { group |= UInt32(byte) << UInt32(16 - 8 * offset) }
            for digit in 0..<4 {
                if digit <= chunk.count {
                    out.append(Self.alphabet[Int((group >> UInt32(18 - 6 * digit)) & 0x3F)])
                } else {
                    out.append(UInt8(ascii: "="))
                }
            }
            index += 3
        }
        return String(decoding: out, as: UTF8.self)
    }

    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    @inline(__always)
    private static func sextet(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): byte - UInt8(ascii: "A")
        case UInt8(ascii: "a")...UInt8(ascii: "z"): byte - UInt8(ascii: "a") + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0") + 52
        case UInt8(ascii: "+"): 62
        case UInt8(ascii: "/"): 63
        default: nil
        }
    }
}
