import CFanoutSIMD
import FanoutAPNs

/// Finds where hex ends in a line.
///
/// A device-token line is hex up to the first tab (or the end); the scan finds that boundary and
/// checks the hex in the same pass. On x86-64 it is SSE2, sixteen bytes a step
/// (`fanout_hex_prefix_length`); `swarHexPrefixLength` is the same scan in plain Swift, eight
/// bytes a word, kept as the reference the tests hold both to.
enum HexScanner {
    /// The length of the run of ASCII hex digits (`0-9a-fA-F`) at the start of `bytes`.
    @inline(__always)
    static func hexPrefixLength(_ bytes: UnsafeRawBufferPointer) -> Int {
        guard let base = bytes.baseAddress else { return 0 }
        return fanout_hex_prefix_length(base.assumingMemoryBound(to: UInt8.self), bytes.count)
    }

    /// The same scan in portable Swift, eight bytes a word.
    static func swarHexPrefixLength(_ bytes: UnsafeRawBufferPointer) -> Int {
        guard let base = bytes.baseAddress else { return 0 }
        let count = bytes.count
        var offset = 0
        // Four independent words a step: a 64-character token is two steps.
        while offset &+ 32 <= count {
            let first = validLanes(base.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
            let second = validLanes(base.loadUnaligned(fromByteOffset: offset &+ 8, as: UInt64.self))
            let third = validLanes(base.loadUnaligned(fromByteOffset: offset &+ 16, as: UInt64.self))
            let fourth = validLanes(base.loadUnaligned(fromByteOffset: offset &+ 24, as: UInt64.self))
            if first & second & third & fourth != lanesHigh { break }
            offset &+= 32
        }
        while offset &+ 8 <= count {
            let valid = validLanes(base.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
            if valid != lanesHigh {
                // The first lane without its high bit, counted from the lowest (first) byte.
                return offset &+ ((~valid & lanesHigh).trailingZeroBitCount >> 3)
            }
            offset &+= 8
        }
        while offset < count && isHexDigit(base.load(fromByteOffset: offset, as: UInt8.self)) {
            offset &+= 1
        }
        return offset
    }

    static let lanesHigh: UInt64 = 0x8080_8080_8080_8080

    /// The high bit of every byte of `word` that is an ASCII hex digit.
    ///
    /// ```
    ///  digit:  x = b ^ 0x30          x in 0...9   ⇔  x + 0x76 < 0x80
    ///  letter: y = (b | 0x20) ^ 0x60 y in 1...6   ⇔  y + 0x7F ≥ 0x80  and  y + 0x79 < 0x80
    /// ```
    /// Each lane's sum stays below 0x100 for ASCII bytes, so no carry crosses lanes; bytes of
    /// 0x80 and above are masked out first.
    @inline(__always)
    static func validLanes(_ word: UInt64) -> UInt64 {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let ascii = ~word & lanesHigh
        let low = word & ~lanesHigh
        let x = low ^ (ones &* 0x30)
        let digit = ~(x &+ ones &* 0x76) & lanesHigh
        let y = (low | ones &* 0x20) ^ (ones &* 0x60)
        let letter = (y &+ ones &* 0x7F) & ~(y &+ ones &* 0x79) & lanesHigh
        return (digit | letter) & ascii
    }

    @inline(__always)
    static func isHexDigit(_ byte: UInt8) -> Bool {
        DeviceTokenFormat.isHexDigit(byte)
    }
}
