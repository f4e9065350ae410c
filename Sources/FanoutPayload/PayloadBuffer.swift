/// Memory a sender encodes each notification's payload into, reused from one to the next: the
/// encoder writes in place and hands back a view of the bytes (`PayloadEncoder.encode(_:into:)`),
/// and the memory grows, rarely, only when a notification needs more. No `ByteBuffer`, so the
/// hot path reads no class property and pays no runtime exclusivity check.
public struct PayloadBuffer {
    /// The allocation; replaced whole to grow. Copies of the buffer share it until one grows
    /// (no copy on write): each sender owns one buffer and encodes into it alone.
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

    /// Memory of at least `byteCount` bytes, grown if need be.
    mutating func memory(atLeast byteCount: Int) -> UnsafeMutableRawBufferPointer {
        if byteCount > storage.bytes.count { storage = Storage(byteCount: byteCount) }
        return storage.bytes
    }
}
