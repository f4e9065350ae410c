/// Stream id → slot in the stream table, by Robin Hood open addressing with no hash function:
/// a stream's home bucket is its id halved, masked to the table's size.
///
/// ```
///   id:       1     3     5     7     9    11    13    15    17  …      (a client's streams)
///   home:     0     1     2     3     4     5     6     7     0  …      (id >> 1) & mask, 8 buckets
///
///   buckets:  ┌──────┬──────┬──────┬──────┬──────┬──────┬──────┬──────┐
///             │ 17→4 │  ·   │  ·   │ 7→2  │ 9→0  │ 11→5 │  ·   │ 15→1 │   · = empty (id 0,
///             └──────┴──────┴──────┴──────┴──────┴──────┴──────┴──────┘     never a stream)
/// ```
/// One peer opens its streams with increasing odd ids (RFC 9113 §5.1.1), so the streams open
/// together sit at their homes in consecutive buckets, one long run. Robin Hood keeps each run
/// ordered by home (an insert takes the bucket of an entry nearer its own home, and that entry
/// moves on), so a lookup stops at the first entry nearer its home than the id would be, and a
/// removal shifts back only the entries after it that are away from home: closing the oldest
/// of 1000 streams in flight moves none, where plain linear probing would scan all 1000.
/// The table keeps at most half its buckets full and doubles when it would not; once grown to
/// the streams in flight, opening, finding and closing streams allocate nothing. SipHash, which
/// a `Dictionary` spends on each of those, was ~1.4% of the sink's time under h2load.
///
/// The buckets are one allocation the index owns (it is not copyable): a lookup, an insert or a
/// removal touches them with no copy-on-write check, where an `Array` checks its storage for
/// sharing on every write (two to six per request, measured with callgrind on the cost workload).
struct HTTP2StreamIndex: ~Copyable {
    private struct Entry {
        var id: UInt32
        var slot: UInt32
    }

    private var entries: UnsafeMutablePointer<Entry>
    private var mask: Int
    /// The number of streams in the index.
    private(set) var count = 0

    init(capacity: Int) {
        let buckets = Self.buckets(for: max(capacity, 8))
        entries = Self.emptyBuckets(buckets)
        mask = buckets - 1
    }

    deinit {
        entries.deallocate()
    }

    /// The power of two that holds `count` streams at most half full.
    private static func buckets(for count: Int) -> Int {
        let wanted = 2 * count
        return 1 << (Int.bitWidth - (wanted - 1).leadingZeroBitCount)
    }

    private static func emptyBuckets(_ count: Int) -> UnsafeMutablePointer<Entry> {
        let entries = UnsafeMutablePointer<Entry>.allocate(capacity: count)
        entries.initialize(repeating: Entry(id: 0, slot: 0), count: count)
        return entries
    }

    @inline(__always) private func home(_ id: UInt32) -> Int { Int(id >> 1) & mask }

    /// How far the entry in `bucket` is from its home.
    @inline(__always) private func distance(at bucket: Int) -> Int { (bucket &- home(entries[bucket].id)) & mask }

    /// The bucket of stream `id`, if it is in the index.
    private func bucket(of id: UInt32) -> Int? {
        guard id != 0 else { return nil }
        var bucket = home(id)
        var distance = 0
        while true {
            let found = entries[bucket].id
            if found == id { return bucket }
            // Empty, or an entry nearer its home than `id` would be here: `id` would have
            // taken this bucket.
            if found == 0 || self.distance(at: bucket) < distance { return nil }
            bucket = (bucket + 1) & mask
            distance += 1
        }
    }

    /// The slot of stream `id`, if it is in the index.
    func slot(of id: UInt32) -> Int? { bucket(of: id).map { Int(entries[$0].slot) } }

    /// Adds stream `id` (not 0, not in the index) at `slot`.
    mutating func insert(_ id: UInt32, slot: Int) {
        precondition(id != 0, "stream 0 is the connection, never a stream")
        assert(bucket(of: id) == nil, "stream \(id) is in the index already")
        if 2 * (count + 1) > mask + 1 { grow() }
        var entry = Entry(id: id, slot: UInt32(truncatingIfNeeded: slot))
        var bucket = home(id)
        var distance = 0
        while entries[bucket].id != 0 {
            let theirs = self.distance(at: bucket)
            if theirs < distance {
                swap(&entry, &entries[bucket])
                distance = theirs
            }
            bucket = (bucket + 1) & mask
            distance += 1
        }
        entries[bucket] = entry
        count += 1
    }

    /// Removes stream `id`, if it is in the index.
    mutating func remove(_ id: UInt32) {
        guard var hole = bucket(of: id) else { return }
        // Backward shift: the entries after the hole that are away from home move back one,
        // up to an empty bucket or an entry at its home.
        var next = (hole + 1) & mask
        while entries[next].id != 0 && distance(at: next) > 0 {
            entries[hole] = entries[next]
            hole = next
            next = (next + 1) & mask
        }
        entries[hole] = Entry(id: 0, slot: 0)
        count -= 1
    }

    /// The slots of every stream in the index, in no particular order.
    var slots: [Int] {
        UnsafeBufferPointer(start: entries, count: mask + 1).compactMap { $0.id != 0 ? Int($0.slot) : nil }
    }

    private mutating func grow() {
        let old = entries
        let oldBuckets = mask + 1
        entries = Self.emptyBuckets(oldBuckets * 2)
        mask = oldBuckets * 2 - 1
        count = 0
        for bucket in 0..<oldBuckets where old[bucket].id != 0 {
            insert(old[bucket].id, slot: Int(old[bucket].slot))
        }
        old.deallocate()
    }
}
