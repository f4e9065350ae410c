/// UTF-8 well-formedness (Unicode 15, table 3-7) checked one sequence at a time, in place.
///
/// ```
///  lead       second     third      fourth
///  C2..DF     80..BF
///  E0         A0..BF     80..BF                 (no overlong forms)
///  E1..EC     80..BF     80..BF
///  ED         80..9F     80..BF                 (no surrogates)
///  EE..EF     80..BF     80..BF
///  F0         90..BF     80..BF     80..BF      (no overlong forms)
///  F1..F3     80..BF     80..BF     80..BF
///  F4         80..8F     80..BF     80..BF      (nothing above U+10FFFF)
/// ```
enum UTF8Validation {
    /// The length of the well-formed multi-byte sequence at `start`, whose lead byte is 0x80 or
    /// above, or 0 when the bytes there are not UTF-8. `available` bounds how far it may read.
    @inline(__always)
    static func sequenceLength(at start: UnsafeRawPointer, available: Int) -> Int {
        let lead = start.load(as: UInt8.self)
        let length: Int
        var secondRange: ClosedRange<UInt8> = 0x80...0xBF
        switch lead {
        case 0xC2...0xDF: length = 2
        case 0xE0:
            length = 3
            secondRange = 0xA0...0xBF
        case 0xE1...0xEC, 0xEE...0xEF: length = 3
        case 0xED:
            length = 3
            secondRange = 0x80...0x9F
        case 0xF0:
            length = 4
            secondRange = 0x90...0xBF
        case 0xF1...0xF3: length = 4
        case 0xF4:
            length = 4
            secondRange = 0x80...0x8F
        default: return 0
        }
        guard available >= length else { return 0 }
        guard secondRange.contains(start.load(fromByteOffset: 1, as: UInt8.self)) else { return 0 }
        var offset = 2
        while offset < length {
            guard start.load(fromByteOffset: offset, as: UInt8.self) & 0xC0 == 0x80 else { return 0 }
            offset += 1
        }
        return length
    }

    /// The same check over an array, for the template parser.
    static func sequenceLength(_ bytes: [UInt8], at index: Int) -> Int {
        bytes.withUnsafeBytes { buffer in
            sequenceLength(at: buffer.baseAddress! + index, available: buffer.count - index)
        }
    }
}
