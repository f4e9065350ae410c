import NIOCore

extension ByteBuffer {
    /// Writes at most `maximum` bytes at the writer index with plain stores through `body`,
    /// which returns how many it wrote: one capacity check for the lot.
    ///
    /// The hot path's small writes (frame headers, HPACK integers, Huffman bytes) go through
    /// here rather than `writeInteger`: NIO's integer writers end in an outlined setter that the
    /// linker takes from NIOCore, compiled with exclusivity checks, so each integer cost ~200
    /// instructions (callgrind, `scripts/cost.sh`). The closure is inlined into the caller.
    @inlinable @inline(__always)
    public mutating func writeRaw(maximum: Int, _ body: (UnsafeMutableRawPointer) -> Int) {
        writeWithUnsafeMutableBytes(minimumWritableBytes: maximum) { bytes in body(bytes.baseAddress!) }
    }
}

extension UnsafeMutableRawPointer {
    /// Stores `value` big-endian at `offset`.
    @inlinable @inline(__always)
    public func storeBigEndian<T: FixedWidthInteger>(_ value: T, at offset: Int) {
        storeBytes(of: value.bigEndian, toByteOffset: offset, as: T.self)
    }
}
