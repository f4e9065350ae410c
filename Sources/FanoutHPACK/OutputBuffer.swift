/// Bytes being written out — a header block being encoded, frames waiting for the socket — in
/// one allocation its owner keeps and reuses, so a write is plain stores, with none of the
/// copy-on-write checks and reference counting a `ByteBuffer` write costs (a response's fields
/// and frame took ten such checks before, counted with callgrind on the cost workload). Grows
/// when a write does not fit.
///
/// ```
///   memory ┌──────────── count ─────────────┬────── room ──────┐
///          │ written bytes (fields, frames)  │                  │
///          └────────────────────────────────┴──────────────────┘
/// ```
/// Not copyable: it owns its memory, which `bytes` lends until the next write or `clear()`.
public struct OutputBuffer: ~Copyable {
    private var memory: UnsafeMutableRawBufferPointer
    /// The bytes written since the last `clear()`.
    public private(set) var count = 0

    /// An empty buffer with room for `capacity` bytes before it first grows.
    public init(capacity: Int = 1024) {
        memory = .allocate(byteCount: max(capacity, 64), alignment: 8)
    }

    deinit {
        memory.deallocate()
    }

    /// The bytes so far: valid until the next write or `clear()`.
    public var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(rebasing: memory[..<count]) }

    /// Empties the buffer, keeping its memory.
    public mutating func clear() {
        count = 0
    }

    /// Writes at most `maximum` bytes at the end with plain stores through `body`, which returns
    /// how many it wrote: one capacity check for the lot; the closure is inlined.
    @inline(__always)
    public mutating func writeRaw(maximum: Int, _ body: (UnsafeMutableRawPointer) -> Int) {
        if memory.count - count < maximum { grow(toAtLeast: count + maximum) }
        let written = body(memory.baseAddress! + count)
        precondition(written >= 0 && written <= maximum, "wrote \(written) bytes of at most \(maximum)")
        count += written
    }

    /// Writes `bytes` at the end.
    @inline(__always)
    public mutating func write(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        writeRaw(maximum: bytes.count) { out in
            out.copyMemory(from: base, byteCount: bytes.count)
            return bytes.count
        }
    }

    @inline(never)
    private mutating func grow(toAtLeast needed: Int) {
        let larger = UnsafeMutableRawBufferPointer.allocate(byteCount: max(needed, 2 * memory.count), alignment: 8)
        larger.baseAddress!.copyMemory(from: memory.baseAddress!, byteCount: count)
        memory.deallocate()
        memory = larger
    }
}

extension UnsafeMutableRawPointer {
    /// Stores `value` big-endian at `offset`.
    ///
    /// The hot path's small writes (frame headers, HPACK integers) are plain stores like this
    /// into an `OutputBuffer`, not NIO's `writeInteger`: NIO's integer writers end in an
    /// outlined setter that the linker takes from NIOCore, compiled with exclusivity checks, so
    /// each integer cost ~200 instructions (callgrind, `scripts/cost.sh`).
    @inlinable @inline(__always)
    public func storeBigEndian<T: FixedWidthInteger>(_ value: T, at offset: Int) {
        storeBytes(of: value.bigEndian, toByteOffset: offset, as: T.self)
    }
}
