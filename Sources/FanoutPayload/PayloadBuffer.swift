/// Memory a sender encodes each notification's payload into, reused from one to the next: the
/// encoder writes in place and hands back a view of the bytes (`PayloadEncoder.encode(_:into:)`),
/// and the memory grows, rarely, only when a notification needs more. No `ByteBuffer`, so the
/// hot path reads no class property and pays no runtime exclusivity check.
///
/// A value: a copy is a buffer of its own. Copies share the memory until one is written, which
/// then takes memory of its own (copy on write), so encoding into one never changes the bytes
/// another handed out.
public struct PayloadBuffer {
    /// The allocation; replaced whole to grow or when shared.
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

    /// Memory of at least `byteCount` bytes to write, grown if need be, and this buffer's own.
    mutating func memory(atLeast byteCount: Int) -> UnsafeMutableRawBufferPointer {
        if byteCount > storage.bytes.count || !isKnownUniquelyReferenced(&storage) {
            storage = Storage(byteCount: max(byteCount, storage.bytes.count))
        }
        return storage.bytes
    }
}
