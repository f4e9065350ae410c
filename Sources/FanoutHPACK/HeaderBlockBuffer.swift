/// A header block being encoded: bytes in one allocation its owner keeps from block to block,
/// so encoding a field is plain stores, with none of the copy-on-write checks and reference
/// counting a `ByteBuffer` write costs (a response's fields and frame took ten such checks
/// before, counted with callgrind on the cost workload). Grows when a field does not fit.
///
/// ```
///   memory ┌──────────── count ─────────────┬────── room ──────┐
///          │ size update? │ field │ field │ │                  │
///          └────────────────────────────────┴──────────────────┘
/// ```
/// Not copyable: it owns its memory, which `bytes` lends until the next write or `clear()`.
public struct HeaderBlockBuffer: ~Copyable {
    private var memory: UnsafeMutableRawBufferPointer
    /// The bytes written since the last `clear()`.
    public private(set) var count = 0

    /// An empty block with room for `capacity` bytes before it first grows.
    public init(capacity: Int = 1024) {
        memory = .allocate(byteCount: max(capacity, 64), alignment: 8)
    }

    deinit {
        memory.deallocate()
    }

    /// The block so far: valid until the next write or `clear()`.
    public var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(rebasing: memory[..<count]) }

    /// Empties the block, keeping its memory.
    public mutating func clear() {
        count = 0
    }

    /// Writes at most `maximum` bytes at the end with plain stores through `body`, which returns
    /// how many it wrote (as `ByteBuffer.writeRaw`).
    @inline(__always)
    public mutating func writeRaw(maximum: Int, _ body: (UnsafeMutableRawPointer) -> Int) {
        if memory.count - count < maximum { grow(toAtLeast: count + maximum) }
        let written = body(memory.baseAddress! + count)
        precondition(written >= 0 && written <= maximum, "wrote \(written) bytes of at most \(maximum)")
        count += written
    }

    @inline(never)
    private mutating func grow(toAtLeast needed: Int) {
        let larger = UnsafeMutableRawBufferPointer.allocate(byteCount: max(needed, 2 * memory.count), alignment: 8)
        larger.baseAddress!.copyMemory(from: memory.baseAddress!, byteCount: count)
        memory.deallocate()
        memory = larger
    }
}
