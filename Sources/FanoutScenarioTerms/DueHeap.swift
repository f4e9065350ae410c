/// An entry of a `DueHeap`: something that goes out at its time.
@usableFromInline
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
///
/// `@usableFromInline`, as every package type with inlinable members must be: without it the
/// members' bodies do not reach other modules, and each `push` was a call to the unspecialized
/// generic (metadata looked up a call: 4.5% of the sink's loop with media downloads, measured
/// by `perf record -e cpu-clock`).
@usableFromInline
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

    /// Appends `entry` and moves the hole it leaves up past every parent due after it, each
    /// parent moved down once (no `swapAt`: called through `MutableCollection`'s generic
    /// witness, it allocated its accessor's frame, 0.19 mallocs a return event measured by
    /// scripts/cost.sh --engagement).
    @inlinable
    package mutating func push(_ entry: Entry) {
        heap.append(entry)
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard entry.due < heap[parent].due else { break }
            heap[child] = heap[parent]
            child = parent
        }
        heap[child] = entry
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

    /// Moves the entry at `start` down past every child due before it, the hole way `push` does.
    @inlinable
    mutating func siftDown(from start: Int) {
        let entry = heap[start]
        var parent = start
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var smallest = left
            if right < heap.count && heap[right].due < heap[left].due { smallest = right }
            guard left < heap.count, heap[smallest].due < entry.due else { break }
            heap[parent] = heap[smallest]
            parent = smallest
        }
        heap[parent] = entry
    }
}
