/// Inputs a few bytes from good ones, for checkers compared with a reference: a seed with some
/// bytes replaced, inserted or removed (and, when asked, cut short), each choice drawn from
/// `next`, so a seeded generator gives the same inputs on every run.
public enum ByteMutation {
    /// One of `seeds` with fewer than `edits` edits, each at a position in the bytes: a byte of
    /// `alphabet` put in its place or before it, the byte removed, or (with `cuts`) the bytes
    /// from there on removed.
    public static func mutated(
        _ seeds: [[UInt8]],
        alphabet: [UInt8],
        edits: UInt64,
        cuts: Bool,
        next: () -> UInt64
    ) -> [UInt8] {
        var bytes = seeds[Int(next() % UInt64(seeds.count))]
        for _ in 0..<Int(next() % edits) where !bytes.isEmpty {
            let position = Int(next() % UInt64(bytes.count))
            let byte = alphabet[Int(next() % UInt64(alphabet.count))]
            switch next() % (cuts ? 4 : 3) {
            case 0: bytes[position] = byte
            case 1: bytes.insert(byte, at: position)
            case 2: bytes.remove(at: position)
            default: bytes.removeSubrange(position...)
            }
        }
        return bytes
    }
}
