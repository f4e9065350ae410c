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
    var headers: SlotBytes
    /// Body bytes received so far, when they come in more than one DATA frame.
    var body: SlotBytes
    /// Body bytes waiting for flow-control window; END_STREAM goes with the last of them.
    var pending: ByteBuffer
    /// In the connection's queue of streams waiting for the connection window.
    var queued = false
    /// When the peer opened it (`HTTP2Connection.now` at its HEADERS; server side): the
    /// request deadline counts from it.
    var openedAt: UInt64 = 0

    init(allocator: ByteBufferAllocator) {
        headers = SlotBytes(capacity: 512)
        body = SlotBytes(capacity: 0)
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
        headers.removeAll()
        body.removeAll()
        if pending.writerIndex > 0 { pending.clear() }
        queued = false
    }

    /// Frees the slot's memory: the table calls it once, when it goes.
    func deallocate() {
        headers.deallocate()
        body.deallocate()
    }
}

/// Bytes a stream slot owns (its decoded header list; a body that came in more than one DATA
/// frame): plain memory, grown when a write does not fit, kept from stream to stream. A message
/// hands them to the application as views; nothing else shares them, so writing needs no
/// copy-on-write check. Copyable so that slots can move, but exactly one slot holds each, and
/// its table frees it (`HTTP2Stream.deallocate()`).
struct SlotBytes {
    private var start: UnsafeMutableRawPointer
    private var capacity: Int
    private(set) var count = 0

    init(capacity: Int) {
        self.capacity = capacity
        start = .allocate(byteCount: capacity, alignment: 1)
    }

    /// The bytes written, a view valid until the next write.
    var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: start, count: count) }

    mutating func removeAll() {
        count = 0
    }

    /// Appends `bytes`.
    mutating func append(_ bytes: UnsafeRawBufferPointer) {
        guard bytes.count > 0 else { return }
        if capacity - count < bytes.count { grow(toAtLeast: count + bytes.count) }
        (start + count).copyMemory(from: bytes.baseAddress!, byteCount: bytes.count)
        count += bytes.count
    }

    @inline(never)
    private mutating func grow(toAtLeast needed: Int) {
        let larger = UnsafeMutableRawPointer.allocate(byteCount: max(needed, 2 * capacity), alignment: 1)
        larger.copyMemory(from: start, byteCount: count)
        start.deallocate()
        start = larger
        capacity = max(needed, 2 * capacity)
    }

    func deallocate() {
        start.deallocate()
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
/// (`HTTP2Message`) is a view of the slot's header list, and a client opens its next stream
/// while it still reads the response (`LoadConnection` sends more as it handles an answer).
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
        for slot in 0..<slotCount { slots[slot].deallocate() }
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
