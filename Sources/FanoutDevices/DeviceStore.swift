#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What APNs keeps for one device: its one stored notification (the most recent), and whether
/// its token is known to be unregistered. All zeros is an empty slot.
struct DeviceStoreEntry {
    /// The token's `TokenList.hash` (never 0: `DeviceStore.key(_:)`); 0: the slot is empty.
    var key: UInt64 = 0
    /// The stored notification's arrival, when the device can take it, when it expires, and its
    /// collapse id's hash (0: none). Meaningful while `isStored`.
    var arrivedAt: UInt64 = 0
    var dueAt: UInt64 = 0
    var expiresAt: UInt64 = 0
    var collapse: UInt32 = 0
    /// The stored notification's place in the shard's `DeliveryHistory` plus one (0: none).
    ///
    /// In an entry keyed by its message (`message`), `collapse` and `history` hold its device's
    /// key instead, high half and low half: that entry's key already is its collapse key's, and
    /// FCM's messages carry no apns-id to keep a history of. Read them through `device`,
    /// `collapsedBy(_:)` and `historyPlace`, which know which.
    var history: UInt32 = 0
    /// When APNs learnt that the app is gone (0: it has not).
    var unregisteredSince: UInt64 = 0
    /// When the device's background-push budget window ends (0: no window open), and the
    /// background pushes delivered in it.
    var budgetUntil: UInt64 = 0
    /// The entry's place in the store's heap plus one (0: not in it: nothing stored, no budget window).
    var heapPosition: UInt32 = 0
    // The two small fields last, behind the 4-byte one: 63 bytes, a 64-byte stride.
    var budgetUsed: UInt16 = 0
    var flags: UInt8 = 0

    static let stored: UInt8 = 1
    /// Stored for power considerations (a low-power device), not because the device is offline.
    static let forPower: UInt8 = 2
    /// The device's app state (`DeviceProfile.App`), kept so that a wake-up need not draw it again.
    static let disabled: UInt8 = 4
    static let uninstalled: UInt8 = 8
    /// The stored notification is not an alert (background, VoIP, a Live Activity…): never stale.
    static let notAlert: UInt8 = 16
    /// The entry is keyed by its message, not its device (FCM's store: `DeviceFleetSettings
    /// .service`): the device's own entry, if any, is elsewhere.
    static let message: UInt8 = 32

    var isStored: Bool { flags & Self.stored != 0 }
    var isMessage: Bool { flags & Self.message != 0 }

    /// The device the entry is for: its key, or a message entry's device.
    var device: UInt64 { isMessage ? UInt64(collapse) << 32 | UInt64(history) : key }

    /// The stored notification's place in the history (-1: none kept).
    var historyPlace: Int { isMessage ? -1 : Int(history) - 1 }

    /// Whether a newer notification with collapse id (or key) `collapse` (0: none) that lands
    /// here replaces the stored one as its collapse: a message entry is its collapse key's.
    func collapsedBy(_ collapse: UInt32) -> Bool {
        collapse != 0 && (isMessage || self.collapse == collapse)
    }

    /// The two fields a message entry keeps `device` in.
    static func deviceFields(_ device: UInt64) -> (collapse: UInt32, history: UInt32) {
        (UInt32(truncatingIfNeeded: device >> 32), UInt32(truncatingIfNeeded: device))
    }
    /// When the store must look at it next: its stored notification is delivered at `dueAt` or
    /// discarded at `expiresAt`; with nothing stored, its budget window ends.
    var nextEvent: UInt64 { isStored ? min(dueAt, expiresAt) : budgetUntil }
}

/// The devices that have something kept for them, in memory allocated once for `capacity`
/// devices: an open-addressing table (linear probing, at most half full) of `DeviceStoreEntry`
/// by token hash, and a binary min-heap of the table's slots by their next event, so that a
/// wake-up finds what fell due in O(log n) each. Nothing is allocated after `init`; a device that
/// finds the store full is refused (`insert` returns `nil`) and the caller counts it.
///
/// ```
///   table (2^k slots ≥ 2·capacity, zeroed pages until used)      heap (capacity × UInt32)
///   ┌──────┬──────┬──────┬──────┬──────┐                         ┌────┬────┬────┐
///   │ empty│ A    │ B    │ empty│ C    │ ◄─── slot indices ───── │ 4  │ 1  │ …  │  ordered by
///   └──────┴──────┴──────┴──────┴──────┘   heapPosition ───────► └────┴────┴────┘  min(due, expiry)
/// ```
/// Memory: `bytesPerDevice` (a 64-byte entry in a table at most half full, and 4 heap bytes)
/// times the capacity, reserved up front; the table comes from `calloc`, so its pages take
/// room only once a device lands on them.
struct DeviceStore: ~Copyable {
    private let slots: UnsafeMutablePointer<DeviceStoreEntry>
    private let heap: UnsafeMutablePointer<UInt32>
    private let mask: Int
    /// The most devices kept at once.
    let capacity: Int
    /// Devices kept now, and how many of them are in the heap (have a notification stored or a
    /// budget window open).
    private(set) var count = 0
    private(set) var heapCount = 0

    /// The memory the store reserves per device of its capacity, in bytes.
    static let bytesPerDevice = 2 * MemoryLayout<DeviceStoreEntry>.stride + MemoryLayout<UInt32>.stride

    init(capacity: Int) {
        self.capacity = max(1, capacity)
        var size = 16
        while size < 2 * self.capacity { size <<= 1 }
        mask = size - 1
        guard let memory = calloc(size, MemoryLayout<DeviceStoreEntry>.stride) else {
            fatalError("cannot allocate the device store: \(size) slots")
        }
        slots = memory.bindMemory(to: DeviceStoreEntry.self, capacity: size)
        heap = .allocate(capacity: self.capacity)
    }

    deinit {
        free(slots)
        heap.deallocate()
    }

    /// The home slot of `key` in a table of `mask + 1` slots: token hashes are FNV-1a, whose
    /// low bits alone spread poorly, so they are mixed first (MurmurHash3's finaliser, half).
    @inline(__always)
    private static func home(_ key: UInt64, _ mask: Int) -> Int {
        let z = (key ^ (key >> 33)) &* 0xFF51_AFD7_ED55_8CCD
        return Int(truncatingIfNeeded: z ^ (z >> 33)) & mask
    }

    /// The table key of a token hash: 0 marks an empty slot.
    @inline(__always)
    static func key(_ token: UInt64) -> UInt64 { token == 0 ? 1 : token }

    /// The slot holding `token`'s entry, if it has one.
    func find(_ token: UInt64) -> Int? {
        let key = Self.key(token)
        var index = Self.home(key, mask)
        while slots[index].key != 0 {
            if slots[index].key == key { return index }
            index = (index + 1) & mask
        }
        return nil
    }

    /// The slot for `token`: its entry, else a new empty one (`nil`: the store is full).
    mutating func findOrInsert(_ token: UInt64) -> Int? {
        let key = Self.key(token)
        var index = Self.home(key, mask)
        while slots[index].key != 0 {
            if slots[index].key == key { return index }
            index = (index + 1) & mask
        }
        guard count < capacity else { return nil }
        count += 1
        slots[index] = DeviceStoreEntry(key: key)
        return index
    }

    subscript(slot: Int) -> DeviceStoreEntry {
        get { slots[slot] }
    }

    /// Stores a notification in `slot` (replacing any), to be looked at by `nextEvent`.
    mutating func store(
        in slot: Int,
        arrivedAt: UInt64,
        dueAt: UInt64,
        expiresAt: UInt64,
        collapse: UInt32,
        history: UInt32,
        flags: UInt8
    ) {
        slots[slot].arrivedAt = arrivedAt
        slots[slot].dueAt = dueAt
        slots[slot].expiresAt = expiresAt
        slots[slot].collapse = collapse
        slots[slot].history = history
        slots[slot].flags = DeviceStoreEntry.stored | flags
        schedule(slot)
    }

    /// Opens or counts `slot`'s background-push budget window: `used` pushes until `until`.
    mutating func setBudget(_ slot: Int, until: UInt64, used: UInt16) {
        slots[slot].budgetUntil = max(1, until)
        slots[slot].budgetUsed = used
        schedule(slot)
    }

    /// Closes `slot`'s budget window; the entry goes when nothing else is kept for it.
    mutating func endBudget(_ slot: Int) {
        slots[slot].budgetUntil = 0
        slots[slot].budgetUsed = 0
        if slots[slot].isStored { return }
        unschedule(slot)
        if slots[slot].unregisteredSince == 0 { remove(slot) }
    }

    /// Puts `slot` in the heap, or moves it to its place after its next event changed.
    private mutating func schedule(_ slot: Int) {
        if slots[slot].heapPosition == 0 {
            heap[heapCount] = UInt32(slot)
            heapCount += 1
            slots[slot].heapPosition = UInt32(heapCount)
            siftUp(heapCount - 1)
        } else {
            siftUp(Int(slots[slot].heapPosition) - 1)
            siftDown(Int(slots[slot].heapPosition) - 1)
        }
    }

    /// Takes `slot` out of the heap.
    private mutating func unschedule(_ slot: Int) {
        let position = Int(slots[slot].heapPosition) - 1
        guard position >= 0 else { return }
        heapCount -= 1
        if position != heapCount {
            let moved = Int(heap[heapCount])
            heap[position] = UInt32(moved)
            slots[moved].heapPosition = UInt32(position + 1)
            siftUp(position)
            siftDown(Int(slots[moved].heapPosition) - 1)
        }
        slots[slot].heapPosition = 0
    }

    /// Calls `body` with each entry that has a notification stored.
    func forEachStored(_ body: (DeviceStoreEntry) -> Void) {
        for position in 0..<heapCount where slots[Int(heap[position])].isStored { body(slots[Int(heap[position])]) }
    }

    /// Marks `slot`'s token as unregistered since `time`.
    mutating func markUnregistered(_ slot: Int, since time: UInt64) {
        slots[slot].unregisteredSince = max(1, time)
    }

    /// The slot whose next event is the earliest, and that event's time.
    var earliest: (slot: Int, time: UInt64)? {
        guard heapCount > 0 else { return nil }
        let slot = Int(heap[0])
        return (slot, slots[slot].nextEvent)
    }

    /// Takes `slot`'s stored notification out; the entry stays in the heap while its budget
    /// window is open, and goes when nothing else is kept for it.
    mutating func unstore(_ slot: Int) {
        precondition(slots[slot].isStored, "unstore of a slot with nothing stored")
        slots[slot].flags = 0
        if slots[slot].budgetUntil != 0 {
            schedule(slot)
            return
        }
        unschedule(slot)
        if slots[slot].unregisteredSince == 0 { remove(slot) }
    }

    /// Empties `slot` (backward-shift deletion: the entries after it in its run move up, so a
    /// lookup never stops early at a hole; the heap follows each move).
    private mutating func remove(_ slot: Int) {
        var hole = slot
        var next = slot
        while true {
            next = (next + 1) & mask
            let key = slots[next].key
            if key == 0 { break }
            let home = Self.home(key, mask)
            // The entry at `next` may fill the hole only if its home is not cyclically in (hole, next].
            let stays = hole <= next ? (hole < home && home <= next) : (hole < home || home <= next)
            if stays { continue }
            slots[hole] = slots[next]
            if slots[hole].heapPosition != 0 { heap[Int(slots[hole].heapPosition) - 1] = UInt32(hole) }
            hole = next
        }
        slots[hole] = DeviceStoreEntry()
        count -= 1
    }

    private func time(at position: Int) -> UInt64 { slots[Int(heap[position])].nextEvent }

    private mutating func swapHeap(_ a: Int, _ b: Int) {
        let slotA = heap[a]
        let slotB = heap[b]
        heap[a] = slotB
        heap[b] = slotA
        slots[Int(slotB)].heapPosition = UInt32(a + 1)
        slots[Int(slotA)].heapPosition = UInt32(b + 1)
    }

    private mutating func siftUp(_ start: Int) {
        var position = start
        while position > 0 {
            let parent = (position - 1) / 2
            guard time(at: position) < time(at: parent) else { return }
            swapHeap(position, parent)
            position = parent
        }
    }

    private mutating func siftDown(_ start: Int) {
        var position = start
        while true {
            let left = 2 * position + 1
            guard left < heapCount else { return }
            var smallest = left
            if left + 1 < heapCount && time(at: left + 1) < time(at: left) { smallest = left + 1 }
            guard time(at: smallest) < time(at: position) else { return }
            swapHeap(position, smallest)
            position = smallest
        }
    }
}
