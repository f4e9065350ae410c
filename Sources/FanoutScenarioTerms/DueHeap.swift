/// An entry of a `DueHeap`: something that goes out at its time.
package protocol DueEntry {
    /// When it is due, in uptime nanoseconds (`NIODeadline`'s).
    var due: UInt64 { get }
}

/// Answers waiting for their time (a sink's injected latency, stalls): a binary min-heap on the
/// due time in one array that keeps its capacity, so holding and releasing an answer allocates
/// nothing once the heap has grown to the connection's most in flight. Both sinks hold their
/// answers in one (the APNs sink's `PendingResponses`, the FCM sink's `FCMHeldAnswers`).
///
/// ```
///   push(e) ─► appended, sifted up          popDue(now) ─► the root when root.due ≤ now,
///                  [ 3 ]                                    the last moved up and sifted down
///                 /     \
///              [ 5 ]   [ 4 ]      a parent is never due after its children
/// ```
package struct DueHeap<Entry: DueEntry> {
    @usableFromInline
    var heap: [Entry] = []

    @inlinable
    package init() {}

    @inlinable
    package var count: Int { heap.count }
    /// When the earliest entry is due.
    @inlinable
    package var earliest: UInt64? { heap.first?.due }

    @inlinable
    package mutating func push(_ entry: Entry) {
        heap.append(entry)
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child].due < heap[parent].due else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    /// Removes every entry `isGone` says no one waits for any more, and restores the heap order
    /// (Floyd's bottom-up build, linear in the entries kept).
    @inlinable
    package mutating func removeAll(where isGone: (Entry) -> Bool) {
        heap.removeAll(where: isGone)
        var parent = heap.count / 2
        while parent > 0 {
            parent -= 1
            siftDown(from: parent)
        }
    }

    /// Removes and returns the earliest entry if it is due at `now`.
    @inlinable
    package mutating func popDue(now: UInt64) -> Entry? {
        guard let first = heap.first, first.due <= now else { return nil }
        let last = heap.removeLast()
        guard !heap.isEmpty else { return first }
        heap[0] = last
        siftDown(from: 0)
        return first
    }

    @inlinable
    mutating func siftDown(from start: Int) {
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
