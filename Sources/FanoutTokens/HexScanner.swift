import CFanoutSIMD

/// Finds where hex ends in a line.
///
/// A device-token line is hex up to the first tab (or the end); the scan finds that boundary and
/// checks the hex in the same pass: SSE2 on x86-64, sixteen bytes a step, byte by byte elsewhere
/// (`fanout_hex_prefix_length`).
enum HexScanner {
    /// The length of the run of ASCII hex digits (`0-9a-fA-F`) at the start of `bytes`.
    @inline(__always)
    static func hexPrefixLength(_ bytes: UnsafeRawBufferPointer) -> Int {
        guard let base = bytes.baseAddress else { return 0 }
        return fanout_hex_prefix_length(base.assumingMemoryBound(to: UInt8.self), bytes.count)
    }
}
