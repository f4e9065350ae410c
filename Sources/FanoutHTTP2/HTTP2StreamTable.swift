import NIOCore

/// One stream's state (RFC 9113 §5.1), kept in a reused slot.
///
/// ```
///              send/recv HEADERS
///    idle ─────────────────────────► open
///                                   │    │
///               send END_STREAM     │    │   recv END_STREAM
///     half-closed (local) ◄─────────┘    └──────────► half-closed (remote)
///              │ recv END_STREAM, RST_STREAM      send END_STREAM, RST_STREAM │
///              └─────────────────────► closed ◄──────────────────────────────┘
/// ```
/// `localOpen` is false once we have sent END_STREAM, `remoteOpen` once the peer has; a stream
/// with both false (or reset) leaves the table and its slot, buffers and all, is reused.
struct HTTP2Stream {
    var id: UInt32 = 0
    var tag: UInt64 = 0
    var localOpen = false
    var remoteOpen = false
    /// The (final) header block has arrived: later HEADERS are trailers.
    var headersReceived = false
    /// What we may still send (may go negative after SETTINGS_INITIAL_WINDOW_SIZE shrinks).
    var sendWindow = 0
    /// What the peer may still send.
    var receiveWindow = 0
    var status = 0
    var contentLength: Int?
    var bodyLength = 0
    /// Decoded fields (`HTTP2HeaderList` layout); reused from stream to stream.
    var headers: ByteBuffer
    /// Body bytes received so far, when they come in more than one DATA frame.
    var body: ByteBuffer
    /// Body bytes waiting for flow-control window; END_STREAM goes with the last of them.
    var pending: ByteBuffer
    /// In the connection's queue of streams waiting for the connection window.
    var queued = false

    init(allocator: ByteBufferAllocator) {
        headers = allocator.buffer(capacity: 512)
        body = allocator.buffer(capacity: 0)
        pending = allocator.buffer(capacity: 0)
    }

    /// Readies a reused slot for stream `id`.
    mutating func reset(id: UInt32, tag: UInt64, sendWindow: Int, receiveWindow: Int) {
        self.id = id
        self.tag = tag
        localOpen = true
        remoteOpen = true
        headersReceived = false
        self.sendWindow = sendWindow
        self.receiveWindow = receiveWindow
        status = 0
        contentLength = nil
        bodyLength = 0
        // Emptied by moving the indices: `clear()` also checks the storage for sharing, which the
        // first write checks again anyway (and copies then, if a message still holds the bytes).
        headers.moveReaderIndex(to: 0)
        headers.moveWriterIndex(to: 0)
        if body.writerIndex > 0 { body.clear() }
        if pending.writerIndex > 0 { pending.clear() }
        queued = false
    }
}

/// The open streams: slots reused from a free list, found by id through an `HTTP2StreamIndex`
/// whose capacity is kept, so opening and closing streams allocates nothing in steady state and
/// costs the same whatever the number of open streams.
///
/// ```
///   slots  ┌────────┬────────┬────────┬────────┬─ ─ ─ ─ ─┐  initialized: `count` of them;
///          │ id 7   │ id 0   │ id 9   │ id 0   │ (room)  │  id 0: closed, in `free` or held
///          └────────┴────────┴────────┴────────┴─ ─ ─ ─ ─┘  back as `closedLast`
///   free   [ 1 ]  (the slot of stream 5, closed before 11)   popped last-in, first-out
///   closedLast 3  (stream 11's, closed last)
/// ```
///
/// The slot closed last is held back until the next close: the message a stream ends with
/// (`HTTP2Message`) shares the slot's header buffer, and a client opens its next stream while
/// it still reads the response (`LoadConnection` sends more as it handles an answer). Reusing
/// that slot at once found the buffer shared, and `ByteBuffer.clear()` allocated a new one
/// for every stream (the cost workload, measured).
///
/// The slots and the free list are allocations the table owns (it is not copyable, nor is the
/// connection holding it): a frame's many reads and writes of its stream's state reach the slot
/// in place, with none of the copy-on-write checks an `Array` makes on each write (sixteen a
/// request between the table and its index, counted with callgrind on the cost workload).
struct HTTP2StreamTable: ~Copyable {
    /// Slots `0..<slotCount` are initialized; room for `capacity`.
    private var slots: UnsafeMutablePointer<HTTP2Stream>
    private var slotCount = 0
    private var capacity: Int
    /// Free slots, `freeCount` of them; room for `capacity` (every slot free at most).
    private var free: UnsafeMutablePointer<Int32>
    private var freeCount = 0
    /// The slot closed last, free from the next close on.
    private var closedLast: Int?
    private var index: HTTP2StreamIndex
    private let allocator = ByteBufferAllocator()

    init(expectedStreams: Int) {
        capacity = max(expectedStreams, 1) + 1
        slots = .allocate(capacity: capacity)
        free = .allocate(capacity: capacity)
        index = HTTP2StreamIndex(capacity: expectedStreams)
    }

    deinit {
        slots.deinitialize(count: slotCount)
        slots.deallocate()
        free.deallocate()
    }

    /// The number of open streams.
    var count: Int { index.count }

    /// The slot of stream `id`, if it is open.
    func slot(of id: UInt32) -> Int? { index.slot(of: id) }

    /// Opens stream `id` and returns its slot.
    mutating func open(id: UInt32, tag: UInt64, sendWindow: Int, receiveWindow: Int) -> Int {
        let slot: Int
        if freeCount > 0 {
            freeCount -= 1
            slot = Int(free[freeCount])
        } else {
            if slotCount == capacity { grow() }
            slot = slotCount
            (slots + slot).initialize(to: HTTP2Stream(allocator: allocator))
            slotCount += 1
        }
        slots[slot].reset(id: id, tag: tag, sendWindow: sendWindow, receiveWindow: receiveWindow)
        index.insert(id, slot: slot)
        return slot
    }

    /// Closes the stream in `slot`.
    mutating func close(slot: Int) {
        precondition(slot >= 0 && slot < slotCount && slots[slot].id != 0, "slot \(slot) is not open")
        index.remove(slots[slot].id)
        slots[slot].id = 0
        if let closedLast {
            free[freeCount] = Int32(truncatingIfNeeded: closedLast)
            freeCount += 1
        }
        closedLast = slot
    }

    subscript(slot: Int) -> HTTP2Stream {
        unsafeAddress {
            precondition(slot >= 0 && slot < slotCount, "slot \(slot) of \(slotCount)")
            return UnsafePointer(slots + slot)
        }
        unsafeMutableAddress {
            precondition(slot >= 0 && slot < slotCount, "slot \(slot) of \(slotCount)")
            return slots + slot
        }
    }

    /// The slots of every open stream (for settings changes and GOAWAY: not per frame).
    var openSlots: [Int] { index.slots }

    /// Doubles the room for slots (and the free list, which may hold every slot but one).
    private mutating func grow() {
        let larger = capacity * 2
        let moved = UnsafeMutablePointer<HTTP2Stream>.allocate(capacity: larger)
        moved.moveInitialize(from: slots, count: slotCount)
        slots.deallocate()
        slots = moved
        let freeMoved = UnsafeMutablePointer<Int32>.allocate(capacity: larger)
        freeMoved.moveInitialize(from: free, count: freeCount)
        free.deallocate()
        free = freeMoved
        capacity = larger
    }
}
