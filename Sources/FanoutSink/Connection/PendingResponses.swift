/// Responses waiting for their time (injected latency, stalls): a binary min-heap on the due
/// time in one array that keeps its capacity, so holding and releasing a response allocates
/// nothing once the queue has grown to the run's in-flight count. An entry is 64 bytes.
struct PendingResponses {
    struct Entry {
        /// Due time, in `NIODeadline` uptime nanoseconds.
        var due: UInt64
        var stream: UInt32
        /// How much earlier than `due` an ideal sink would have answered (µs): the time the
        /// request spent between its send and the sink's read (`TimedAPNsID`), 0 when unknown.
        /// Its lateness is timed from `due` − this.
        var transit: UInt32 = 0
        /// The notification's digest hash, counted when the answer goes out.
        var digestHash: UInt64
        /// The apns-id's 36 bytes.
        var id: (UInt64, UInt64, UInt64, UInt64, UInt32) = (0, 0, 0, 0, 0)
        /// The reason's `APNsReason.index`, or -1 for success (last: the entry
        /// packs into 64 bytes).
        var reason: Int16
    }

    private var heap: [Entry] = []

    var count: Int { heap.count }
    var earliest: UInt64? { heap.first?.due }

    mutating func push(_ entry: Entry) {
        heap.append(entry)
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child].due < heap[parent].due else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    /// Removes every entry `isGone` says no one waits for any more (its stream was reset), and
    /// restores the heap order (Floyd's bottom-up build, linear in the entries kept).
    mutating func removeAll(where isGone: (Entry) -> Bool) {
        heap.removeAll(where: isGone)
        var parent = heap.count / 2
        while parent > 0 {
            parent -= 1
            siftDown(from: parent)
        }
    }

    /// Removes and returns the earliest entry if it is due at `now`.
    mutating func popDue(now: UInt64) -> Entry? {
        guard let first = heap.first, first.due <= now else { return nil }
        let last = heap.removeLast()
        guard !heap.isEmpty else { return first }
        heap[0] = last
        siftDown(from: 0)
        return first
    }

    private mutating func siftDown(from start: Int) {
        var parent = start
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var smallest = parent
            if left < heap.count && heap[left].due < heap[smallest].due { smallest = left }
            if right < heap.count && heap[right].due < heap[smallest].due { smallest = right }
            if smallest == parent { break }
            heap.swapAt(parent, smallest)
            parent = smallest
        }
    }
}
