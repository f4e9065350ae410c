/// A synthetic token set defined by a seed: token `i` depends only on the seed, `i` and the
/// length, so the same seed gives the same set byte for byte, and a shard can generate its own
/// tokens without generating the others.
public struct TokenGenerator: Sendable, Hashable {
    /// How many tokens.
    public var count: UInt64
    /// The seed.
    public var seed: UInt64
    /// Bytes per token (64 hex characters for the default 32).
    public var length: Int

    /// The seed when none is given.
    public static let defaultSeed: UInt64 = 1
    /// APNs' device tokens are 32 bytes today.
    public static let defaultLength = 32

    /// Creates a generator of `count` tokens of `length` bytes from `seed`.
    public init(count: UInt64, seed: UInt64 = defaultSeed, length: Int = defaultLength) {
        precondition(length > 0)
        self.count = count
        self.seed = seed
        self.length = length
    }

    /// Writes token `index`'s raw bytes at `out` (`length` bytes).
    ///
    /// Each eight-byte block is SplitMix64's output for a counter made of the seed, the index
    /// and the block number: random-looking, reproducible, and addressable.
    @inline(__always)
    public func writeToken(_ index: UInt64, to out: UnsafeMutableRawPointer) {
        let base = seed &+ index &* 0x9E37_79B9_7F4A_7C15
        var written = 0
        var block: UInt64 = 0
        while written < length {
            block &+= 1
            var z = base ^ (block &* 0xD6E8_FEB8_6659_FD93)
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            z ^= z >> 31
            let take = min(8, length - written)
            withUnsafeBytes(of: z.littleEndian) { word in
                (out + written).copyMemory(from: word.baseAddress!, byteCount: take)
            }
            written += take
        }
    }

    /// Token `index` as lowercase hex, for tools and tests.
    public func token(_ index: UInt64) -> String {
        var raw = [UInt8](repeating: 0, count: length)
        var hex = [UInt8](repeating: 0, count: 2 * length)
        raw.withUnsafeMutableBytes { raw in
            writeToken(index, to: raw.baseAddress!)
            hex.withUnsafeMutableBytes { HexEncoding.write(UnsafeRawBufferPointer(raw), to: $0.baseAddress!) }
        }
        return String(decoding: hex, as: UTF8.self)
    }
}
