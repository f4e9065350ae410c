/// HPACK's static Huffman code (RFC 7541 §5.2, Appendix B).
///
/// Decoding reads the input twelve bits at a time through one table (`DecodeTables.fast`, 4096
/// entries, 16 KB): the codes of HPACK's common bytes are 5 to 8 bits long, so most looks give
/// a symbol and many give two (a device token's hex digits are 5 and 6 bits: two a look, where
/// a state machine over nibbles takes about three steps for the same two). A code longer than twelve
/// bits (rare bytes, EOS) is walked bit by bit through the code tree (`DecodeTables.tree`):
///
/// ```
///   accumulator: | next 12 bits | …                   (MSB first, refilled eight bytes at a time)
///   fast[next 12 bits] ──► first symbol │ second symbol │ first's length │ both lengths
///                          (first's length 0: the code is longer than 12 bits → the tree)
/// ```
///
/// The input's end is read with the same table, a code counting only when all its bits are the
/// input's: what is left where no code ends must be padding (RFC 7541 §5.2: at most seven bits,
/// the high bits of EOS, all ones). EOS itself in the string is a decoding error.
enum Huffman {
    /// The decoder's two tables in one block, made once and kept for the process's life, so
    /// that a decoder can hold it (one pointer) and reach no lazily made global per string.
    struct DecodeTables: @unchecked Sendable {
        private let base: UnsafeRawPointer

        init(fast: UnsafeMutablePointer<UInt32>) {
            base = UnsafeRawPointer(fast)
        }

        /// Where the tree begins in the block, after the fast table (a constant: no lazy global).
        static var treeOffset: Int { (1 << fastBits) * MemoryLayout<UInt32>.stride }

        /// Per 12-bit pattern: `first | second << 8 | firstLength << 16 | totalLength << 21`.
        var fast: UnsafePointer<UInt32> { base.assumingMemoryBound(to: UInt32.self) }
        /// The code tree's 256 internal nodes, two children each (`node << 1 | bit`): an internal
        /// node's index (≥ 0) or a leaf, `-(symbol + 1)`.
        var tree: UnsafePointer<Int16> { (base + Self.treeOffset).assumingMemoryBound(to: Int16.self) }
    }

    /// The bits a look takes (a constant: no lazy global on the decoding path).
    static var fastBits: Int { 12 }

    static let decodeTables: DecodeTables = {
        // The code tree: children[node][bit] is an internal node (> 0) or a leaf, -(symbol + 1).
        var children: [[Int]] = [[0, 0]]
        for symbol in 0..<257 {
            let (code, length) = (huffmanCodes[symbol].code, Int(huffmanCodes[symbol].length))
            var node = 0
            for position in stride(from: length - 1, through: 0, by: -1) {
                let bit = Int(code >> UInt32(position)) & 1
                if position == 0 {
                    children[node][bit] = -(symbol + 1)
                } else {
                    if children[node][bit] == 0 {
                        children.append([0, 0])
                        children[node][bit] = children.count - 1
                    }
                    node = children[node][bit]
                }
            }
        }
        precondition(children.count == 256, "HPACK's code tree has 256 internal nodes")
        let block = UnsafeMutableRawPointer.allocate(
            byteCount: DecodeTables.treeOffset + 512 * MemoryLayout<Int16>.stride,
            alignment: MemoryLayout<UInt32>.alignment
        )
        let tree = (block + DecodeTables.treeOffset).bindMemory(to: Int16.self, capacity: 512)
        for node in 0..<256 {
            for bit in 0..<2 { tree[node << 1 | bit] = Int16(children[node][bit]) }
        }
        let fast = block.bindMemory(to: UInt32.self, capacity: 1 << fastBits)
        for pattern in 0..<(1 << fastBits) {
            // Up to two codes ending within the pattern's bits (the shortest is five: a third
            // would need fifteen).
            var found: [(symbol: Int, end: Int)] = []
            var node = 0
            for position in 0..<fastBits where found.count < 2 {
                let child = children[node][(pattern >> (fastBits - 1 - position)) & 1]
                if child > 0 {
                    node = child
                } else {
                    found.append((-child - 1, position + 1))
                    node = 0
                }
            }
            var entry: UInt32 = 0
            if let first = found.first {
                let second = found.count > 1 ? found[1] : (symbol: 0, end: first.end)
                entry =
                    UInt32(first.symbol) | UInt32(second.symbol) << 8 | UInt32(first.end) << 16
                    | UInt32(second.end) << 21
            }
            fast[pattern] = entry
        }
        return DecodeTables(fast: fast)
    }()

    /// How many bytes `bytes` takes Huffman-coded.
    static func encodedLength(_ bytes: UnsafeRawBufferPointer) -> Int {
        var bits = 0
        for byte in bytes { bits += Int(huffmanCodes[Int(byte)].length) }
        return (bits + 7) / 8
    }

    /// Appends `bytes` Huffman-coded, padded to a byte with the high bits of EOS (all ones).
    static func encode(_ bytes: UnsafeRawBufferPointer, into buffer: inout OutputBuffer) {
        buffer.writeRaw(maximum: encodedLength(bytes)) { out in encode(bytes, to: out) }
    }

    /// Writes `bytes` Huffman-coded at `out`, which has room for `encodedLength(bytes)`; returns
    /// the bytes written.
    static func encode(_ bytes: UnsafeRawBufferPointer, to out: UnsafeMutableRawPointer) -> Int {
        var accumulator: UInt64 = 0
        var bits = 0
        var written = 0
        for byte in bytes {
            let entry = huffmanCodes[Int(byte)]
            accumulator = accumulator << UInt64(entry.length) | UInt64(entry.code)
            bits += Int(entry.length)
            while bits >= 8 {
                bits -= 8
                out.storeBytes(
                    of: UInt8(truncatingIfNeeded: accumulator >> UInt64(bits)),
                    toByteOffset: written,
                    as: UInt8.self
                )
                written += 1
            }
        }
        if bits > 0 {
            let padding = 8 - bits
            let last = UInt8(truncatingIfNeeded: (accumulator << UInt64(padding)) | ((1 << UInt64(padding)) - 1))
            out.storeBytes(of: last, toByteOffset: written, as: UInt8.self)
            written += 1
        }
        return written
    }

    /// Decodes `bytes` into `out`, which has room for `bytes.count * 8 / 5 + 1` bytes (the
    /// shortest code is five bits; a look writes one byte past what it emits), and returns the
    /// decoded length. `tables` is `decodeTables`, passed by a decoder that holds it.
    static func decode(
        _ bytes: UnsafeRawBufferPointer,
        into out: UnsafeMutableRawPointer,
        tables: DecodeTables = decodeTables
    ) throws(HPACKError) -> Int {
        let fast = tables.fast
        // The next bits, most significant first; `available` of them are the input's.
        var accumulator: UInt64 = 0
        var available = 0
        var index = 0
        var written = 0
        while true {
            if available <= 56 {
                if index &+ 8 <= bytes.count {
                    // Eight bytes loaded, the whole ones that fit taken (at most seven); the bits
                    // of the next byte that also land are its own, the same the next refill lays
                    // over them.
                    let word = UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self))
                    accumulator |= word &>> UInt64(available)
                    let taken = (63 &- available) &>> 3
                    index &+= taken
                    available &+= taken &<< 3
                } else {
                    while available <= 56 && index < bytes.count {
                        accumulator |= UInt64(bytes[index]) &<< UInt64(56 &- available)
                        available &+= 8
                        index &+= 1
                    }
                }
            }
            guard available >= fastBits else { break }
            let entry = fast[Int(truncatingIfNeeded: accumulator &>> UInt64(64 - fastBits))]
            let first = Int(truncatingIfNeeded: entry &>> 16 & 31)
            guard first != 0 else {
                // A code longer than twelve bits; with twelve of the input's bits and more, what
                // does not end in a code is no padding either.
                let (symbol, length) = try longCode(accumulator, available, tables.tree)
                out.storeBytes(of: symbol, toByteOffset: written, as: UInt8.self)
                written &+= 1
                accumulator &<<= UInt64(length)
                available &-= length
                continue
            }
            // Both symbols are stored, the second counted only when the entry holds one: no
            // branch on it.
            let total = Int(truncatingIfNeeded: entry &>> 21 & 31)
            out.storeBytes(of: UInt8(truncatingIfNeeded: entry), toByteOffset: written, as: UInt8.self)
            out.storeBytes(of: UInt8(truncatingIfNeeded: entry &>> 8), toByteOffset: written &+ 1, as: UInt8.self)
            written &+= total > first ? 2 : 1
            accumulator &<<= UInt64(total)
            available &-= total
        }
        // Fewer than twelve of the input's bits are left, and every byte taken: the rest of the
        // look is zeros, and a code counts only when it ends within the input's bits.
        while available > 0 {
            let entry = fast[Int(truncatingIfNeeded: accumulator &>> UInt64(64 - fastBits))]
            let first = Int(truncatingIfNeeded: entry &>> 16 & 31)
            guard first != 0 && first <= available else { break }
            out.storeBytes(of: UInt8(truncatingIfNeeded: entry), toByteOffset: written, as: UInt8.self)
            written &+= 1
            accumulator &<<= UInt64(first)
            available &-= first
        }
        // What is left is padding: at most seven bits, all ones.
        guard available <= 7 else { throw .invalidHuffman }
        let ones: UInt64 = (1 &<< UInt64(available)) &- 1
        guard available == 0 || accumulator &>> UInt64(64 &- available) == ones else { throw .invalidHuffman }
        return written
    }

    /// The code at the top of `accumulator`, longer than twelve bits, walked through the tree:
    /// its symbol and length. EOS, and bits that end no code, are decoding errors.
    private static func longCode(
        _ accumulator: UInt64,
        _ available: Int,
        _ tree: UnsafePointer<Int16>
    ) throws(HPACKError) -> (symbol: UInt8, length: Int) {
        var node = 0
        for position in 0..<min(available, 30) {
            let bit = Int(truncatingIfNeeded: accumulator &>> UInt64(63 &- position) & 1)
            let child = Int(tree[node << 1 | bit])
            guard child < 0 else {
                node = child
                continue
            }
            let symbol = -child - 1
            guard symbol < 256 else { throw .invalidHuffman }  // EOS in the string
            return (UInt8(symbol), position + 1)
        }
        throw .invalidHuffman
    }
}
