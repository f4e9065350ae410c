import NIOCore

/// HPACK's static Huffman code (RFC 7541 §5.2, Appendix B).
///
/// The code is canonical (codes of one length are consecutive and ordered by symbol), so
/// decoding compares the next bits against one limit per length instead of walking a tree.
enum Huffman {
    /// Symbols sorted by (code length, symbol), and per length the first code and its position.
    private static let decodeTable: (symbols: [UInt16], firstCode: [UInt32], firstIndex: [Int], limit: [UInt32]) = {
        let order = (0..<257).sorted { (huffmanCodes[$0].length, $0) < (huffmanCodes[$1].length, $1) }
        var firstCode = [UInt32](repeating: 0, count: 32)
        var firstIndex = [Int](repeating: 0, count: 32)
        var limit = [UInt32](repeating: 0, count: 32)
        var index = 0
        for length in 1...30 {
            firstIndex[length] = index
            let start = index
            while index < order.count && Int(huffmanCodes[order[index]].length) == length { index += 1 }
            if index > start { firstCode[length] = huffmanCodes[order[start]].code }
            limit[length] = firstCode[length] + UInt32(index - start)
        }
        return (order.map(UInt16.init), firstCode, firstIndex, limit)
    }()

    /// The lengths that occur, shortest first.
    private static let lengths: [Int] = Array(Set(huffmanCodes.map { Int($0.length) })).sorted()

    /// How many bytes `bytes` takes Huffman-coded.
    static func encodedLength(_ bytes: UnsafeRawBufferPointer) -> Int {
        var bits = 0
        for byte in bytes { bits += Int(huffmanCodes[Int(byte)].length) }
        return (bits + 7) / 8
    }

    /// Appends `bytes` Huffman-coded, padded to a byte with the high bits of EOS (all ones).
    static func encode(_ bytes: UnsafeRawBufferPointer, into buffer: inout ByteBuffer) {
        var accumulator: UInt64 = 0
        var bits = 0
        for byte in bytes {
            let entry = huffmanCodes[Int(byte)]
            accumulator = accumulator << UInt64(entry.length) | UInt64(entry.code)
            bits += Int(entry.length)
            while bits >= 8 {
                bits -= 8
                buffer.writeInteger(UInt8(truncatingIfNeeded: accumulator >> UInt64(bits)))
            }
        }
        if bits > 0 {
            let padding = 8 - bits
            buffer.writeInteger(
                UInt8(truncatingIfNeeded: (accumulator << UInt64(padding)) | ((1 << UInt64(padding)) - 1))
            )
        }
    }

    /// Decodes `bytes` into `out`, which has room for `bytes.count * 8 / 5` bytes (the shortest
    /// code is five bits); returns the decoded length.
    static func decode(_ bytes: UnsafeRawBufferPointer, into out: UnsafeMutableRawPointer) throws(HPACKError) -> Int {
        let table = decodeTable
        var accumulator: UInt64 = 0  // bits not yet decoded, aligned to the low end
        var available = 0
        var written = 0
        var index = 0
        while true {
            while available <= 56 && index < bytes.count {
                accumulator = accumulator << 8 | UInt64(bytes[index])
                available += 8
                index += 1
            }
            if available == 0 { return written }
            var matched = false
            for length in lengths where length <= available {
                let code = UInt32(
                    truncatingIfNeeded: (accumulator >> UInt64(available - length)) & ((1 << UInt64(length)) - 1)
                )
                if code < table.limit[length] {
                    let symbol = table.symbols[table.firstIndex[length] + Int(code - table.firstCode[length])]
                    if symbol == 256 { throw .invalidHuffman }
                    out.storeBytes(of: UInt8(symbol), toByteOffset: written, as: UInt8.self)
                    written += 1
                    available -= length
                    matched = true
                    break
                }
            }
            if !matched {
                // What is left must be padding: fewer than eight bits, all ones.
                let mask: UInt64 = (1 << UInt64(available)) - 1
                guard index == bytes.count, available < 8, accumulator & mask == mask else { throw .invalidHuffman }
                return written
            }
        }
    }
}
