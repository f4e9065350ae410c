/// HPACK's static Huffman code (RFC 7541 §5.2, Appendix B).
///
/// Decoding is nghttp2's: a state machine over the code tree that takes four bits a step. A
/// state is an internal node of the tree (256 of them; 0 is the root); a step from a state
/// with four bits gives the next state, the symbol completed on the way (at most one: the
/// shortest code is five bits) and whether the input may end there:
///
/// ```
///   state s, bits b3 b2 b1 b0 ──► walk the tree from node s; at a leaf emit its symbol and go
///                                 on from the root; EOS (30 ones) is an error
///   steps[s << 4 | bits]      ──► (next state, symbol, emits | accepts | fails)
/// ```
///
/// A state accepts when it lies on the all-ones path from the root at depth 7 or less: the bits
/// since the last symbol are then valid padding (the high bits of EOS, fewer than eight).
enum Huffman {
    /// One step of the decoder.
    struct DecodeStep {
        var next: UInt8
        var symbol: UInt8
        var flags: UInt8

        static let emits: UInt8 = 1
        static let accepts: UInt8 = 2
        static let fails: UInt8 = 4
    }

    /// The 256 × 16 steps, made once and kept for the process's life, so that a decoder can
    /// hold the pointer and reach no lazily made global per string.
    nonisolated(unsafe) static let decodeSteps: UnsafePointer<DecodeStep> = {
        // The code tree: children[node][bit] is an internal node (≥ 0) or a leaf, -(symbol + 1).
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
        var accepting = [Bool](repeating: false, count: 256)
        var node = 0
        for _ in 0...7 {
            accepting[node] = true
            node = children[node][1]
        }
        let steps = UnsafeMutablePointer<DecodeStep>.allocate(capacity: 256 * 16)
        for state in 0..<256 {
            for bits in 0..<16 {
                var step = DecodeStep(next: 0, symbol: 0, flags: 0)
                var node = state
                for position in stride(from: 3, through: 0, by: -1) {
                    let child = children[node][(bits >> position) & 1]
                    if child >= 0 {
                        node = child
                    } else if child == -257 {
                        step.flags |= DecodeStep.fails
                        break
                    } else {
                        step.symbol = UInt8(-child - 1)
                        step.flags |= DecodeStep.emits
                        node = 0
                    }
                }
                step.next = UInt8(node)
                if accepting[node] { step.flags |= DecodeStep.accepts }
                steps[state << 4 | bits] = step
            }
        }
        return UnsafePointer(steps)
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
    /// shortest code is five bits; each step writes one byte past what it emits), and returns
    /// the decoded length. `steps` is `decodeSteps`, passed by a decoder that holds it.
    static func decode(
        _ bytes: UnsafeRawBufferPointer,
        into out: UnsafeMutableRawPointer,
        steps: UnsafePointer<DecodeStep> = decodeSteps
    ) throws(HPACKError) -> Int {
        var state = 0
        var flags = DecodeStep.accepts
        var written = 0
        for byte in bytes {
            // The symbol is stored whether or not a step emits one: no branch on it.
            let high = steps[state << 4 | Int(byte >> 4)]
            out.storeBytes(of: high.symbol, toByteOffset: written, as: UInt8.self)
            written &+= Int(high.flags & DecodeStep.emits)
            let low = steps[Int(high.next) << 4 | Int(byte & 0x0F)]
            out.storeBytes(of: low.symbol, toByteOffset: written, as: UInt8.self)
            written &+= Int(low.flags & DecodeStep.emits)
            if (high.flags | low.flags) & DecodeStep.fails != 0 { throw .invalidHuffman }
            state = Int(low.next)
            flags = low.flags
        }
        guard flags & DecodeStep.accepts != 0 else { throw .invalidHuffman }
        return written
    }
}
