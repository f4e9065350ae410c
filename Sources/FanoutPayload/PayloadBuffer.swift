/// Memory a sender encodes each notification's payload into, reused from one to the next: the
/// encoder writes in place and hands back a view of the bytes (`PayloadEncoder.encode(_:into:)`),
/// and the memory grows, rarely, only when a notification needs more. No `ByteBuffer`, so the
/// hot path reads no class property and pays no runtime exclusivity check.
public struct PayloadBuffer {
    /// The allocation; replaced whole to grow or when shared with a copy.
    final class Storage {
        let bytes: UnsafeMutableRawBufferPointer

        init(byteCount: Int) {
            bytes = .allocate(byteCount: byteCount, alignment: 16)
        }

        deinit {
            bytes.deallocate()
        }
    }

    var storage: Storage

    /// Room for `byteCount` bytes to start with.
    public init(byteCount: Int) {
        storage = Storage(byteCount: max(1, byteCount))
    }

    /// Memory of at least `byteCount` bytes, grown if need be (what it held is not kept).
    /// Copy-on-write: a copy of the buffer (a value) gets memory of its own at its first
    /// encoding, so two copies never write into each other's bytes. One uniqueness check a
    /// notification; the owner's buffer is never copied in practice.
    mutating func memory(atLeast byteCount: Int) -> UnsafeMutableRawBufferPointer {
        if byteCount > storage.bytes.count || !isKnownUniquelyReferenced(&storage) {
            storage = Storage(byteCount: max(byteCount, storage.bytes.count))
        }
        return storage.bytes
    }
}
