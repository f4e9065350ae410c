#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Whether two byte views hold the same bytes: lengths first, then one `memcmp`.
@inlinable
package func sameBytes(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Bool {
    guard a.count == b.count else { return false }
    guard a.count > 0 else { return true }
    return memcmp(a.baseAddress!, b.baseAddress!, a.count) == 0
}

/// HPACK's static table (RFC 7541 Appendix A), indices 1 to 61, held as one block of bytes
/// that lives as long as the process, so an entry is two views and never an array.
enum HPACKStaticTable {
    static let texts: [(String, String)] = [
        (":authority", ""), (":method", "GET"), (":method", "POST"), (":path", "/"), (":path", "/index.html"),
        (":scheme", "http"), (":scheme", "https"), (":status", "200"), (":status", "204"), (":status", "206"),
        (":status", "304"), (":status", "400"), (":status", "404"), (":status", "500"), ("accept-charset", ""),
        ("accept-encoding", "gzip, deflate"), ("accept-language", ""), ("accept-ranges", ""), ("accept", ""),
        ("access-control-allow-origin", ""), ("age", ""), ("allow", ""), ("authorization", ""),
        ("cache-control", ""), ("content-disposition", ""), ("content-encoding", ""), ("content-language", ""),
        ("content-length", ""), ("content-location", ""), ("content-range", ""), ("content-type", ""),
        ("cookie", ""), ("date", ""), ("etag", ""), ("expect", ""), ("expires", ""), ("from", ""), ("host", ""),
        ("if-match", ""), ("if-modified-since", ""), ("if-none-match", ""), ("if-range", ""),
        ("if-unmodified-since", ""), ("last-modified", ""), ("link", ""), ("location", ""), ("max-forwards", ""),
        ("proxy-authenticate", ""), ("proxy-authorization", ""), ("range", ""), ("referer", ""), ("refresh", ""),
        ("retry-after", ""), ("server", ""), ("set-cookie", ""), ("strict-transport-security", ""),
        ("transfer-encoding", ""), ("user-agent", ""), ("vary", ""), ("via", ""), ("www-authenticate", ""),
    ]

    /// RFC 7541's 61 (a computed constant: a stored global would be a lazily made one).
    static var count: Int { 61 }

    /// The entries and an index of them by name length, made once: what an encoder and a
    /// decoder hold (`HPACKStaticTable.view`, read when they are made).
    static let view = View()

    /// The static table as pointers into memory that lives as long as the process, so a lookup
    /// through it reaches no lazily made global (`swift_once`) and retains nothing: `entries`,
    /// and per name length its entries' positions, a lookup comparing only names of the right
    /// length (one to four of them) instead of scanning all 61.
    ///
    /// ```
    ///   byLength[n] = (first, count) ──► positions[first ..< first + count] ──► entries[p]
    ///   byLength[7] = (5, 3)             positions[5...7] = 1, 2, 5 (":method" ×2, ":scheme" …)
    /// ```
    struct View: @unchecked Sendable {
        typealias Entry = (name: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer)
        /// Names are shorter than this (the longest, "access-control-allow-origin", has 27).
        static let lengths = 32
        let entries: UnsafePointer<Entry>
        let byLength: UnsafePointer<(first: Int32, count: Int32)>
        let positions: UnsafePointer<Int32>

        fileprivate init() {
            precondition(texts.count == HPACKStaticTable.count)
            // Every name and value in one block, and each entry two views into it.
            let total = texts.reduce(0) { $0 + $1.0.utf8.count + $1.1.utf8.count }
            let storage = UnsafeMutableRawBufferPointer.allocate(byteCount: total, alignment: 1)  // never freed
            var offset = 0
            func place(_ text: String) -> UnsafeRawBufferPointer {
                let start = storage.baseAddress! + offset
                let count = text.utf8.count
                UnsafeMutableRawBufferPointer(start: start, count: count).copyBytes(from: text.utf8)
                offset += count
                return UnsafeRawBufferPointer(start: start, count: count)
            }
            let entries = UnsafeMutablePointer<Entry>.allocate(capacity: texts.count)  // never freed
            for (position, text) in texts.enumerated() {
                (entries + position).initialize(to: (place(text.0), place(text.1)))
            }
            let byLength = UnsafeMutablePointer<(first: Int32, count: Int32)>.allocate(capacity: Self.lengths)
            let positions = UnsafeMutablePointer<Int32>.allocate(capacity: texts.count)
            var next = 0
            for length in 0..<Self.lengths {
                let first = next
                for (position, text) in texts.enumerated() where text.0.utf8.count == length {
                    positions[next] = Int32(position)
                    next += 1
                }
                byLength[length] = (Int32(first), Int32(next - first))
            }
            precondition(next == texts.count, "a static name is \(Self.lengths) bytes or longer")
            self.entries = UnsafePointer(entries)
            self.byLength = UnsafePointer(byLength)
            self.positions = UnsafePointer(positions)
        }

        /// The best static match for a field: `full` when name and value match an entry, else
        /// `name` when a name does (1-based indices).
        @inline(__always)
        func find(name: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) -> (full: Int?, name: Int?) {
            guard name.count < Self.lengths else { return (nil, nil) }
            let (first, count) = byLength[name.count]
            var nameMatch: Int?
            for slot in Int(first)..<Int(first + count) {
                let position = Int(positions[slot])
                let entry = entries[position]
                guard sameBytes(entry.name, name) else { continue }
                if sameBytes(entry.value, value) { return (position + 1, position + 1) }
                if nameMatch == nil { nameMatch = position + 1 }
            }
            return (nil, nameMatch)
        }
    }
}

/// HPACK's dynamic table (RFC 7541 §2.3.2, §4): newest entry first, evicted oldest first to
/// keep the sum of entry sizes (name + value + 32) within the maximum size.
///
/// Entries live in one byte ring allocated when the table is made or resized, so inserting
/// and evicting never allocate. Each entry's name and value are contiguous; an entry that does
/// not fit before the ring's end starts again at 0:
/// ```
///   0                                                               capacity
///   | e4 name+value | e5 |   free    | e1 | e2 name+value | e3 |  waste  |
///                        ^ tail      ^ head (oldest)
/// ```
/// The ring is twice the maximum size. Live bytes never exceed the maximum size, so when
/// neither the end nor the start has room (waste left by wrapping), the live entries are
/// copied to the start of a spare ring of the same size: rare, and still no allocation.
struct HPACKDynamicTable {
    private struct Entry {
        var offset: Int32
        var nameLength: Int32
        var valueLength: Int32
        var end: Int { Int(offset) + Int(nameLength) + Int(valueLength) }
    }

    private var storage: Storage
    /// The sum of the entries' sizes in HPACK's accounting.
    private(set) var size = 0
    /// The most `size` may be.
    private(set) var maximumSize: Int

    init(maximumSize: Int) {
        self.maximumSize = maximumSize
        storage = Storage(maximumSize: maximumSize)
    }

    var count: Int { storage.count }

    /// Entry `index`, from 0 for the newest: views valid until the table next changes.
    subscript(index: Int) -> (name: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) {
        let entry = storage.entry(storage.count - 1 - index)
        let start = UnsafeRawPointer(storage.bytes.baseAddress! + Int(entry.offset))
        return (
            UnsafeRawBufferPointer(start: start, count: Int(entry.nameLength)),
            UnsafeRawBufferPointer(start: start + Int(entry.nameLength), count: Int(entry.valueLength))
        )
    }

    static func entrySize(nameLength: Int, valueLength: Int) -> Int { nameLength + valueLength + 32 }

    /// Inserts a field. `name` and `value` must not point into this table.
    mutating func insert(name: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) {
        let entrySize = Self.entrySize(nameLength: name.count, valueLength: value.count)
        makeUnique()
        evict(toFit: entrySize)
        // An entry larger than the table empties it and is not added (§4.4).
        guard entrySize <= maximumSize else { return }
        let length = name.count + value.count
        let offset = storage.place(length: length)
        let start = storage.bytes.baseAddress! + offset
        if name.count > 0 { start.copyMemory(from: name.baseAddress!, byteCount: name.count) }
        if value.count > 0 { (start + name.count).copyMemory(from: value.baseAddress!, byteCount: value.count) }
        storage.append(Entry(offset: Int32(offset), nameLength: Int32(name.count), valueLength: Int32(value.count)))
        size += entrySize
    }

    /// Changes the maximum size, evicting what no longer fits; the ring is reallocated only
    /// when it grows.
    mutating func resize(to maximumSize: Int) {
        makeUnique()
        self.maximumSize = maximumSize
        evict(toFit: 0)
        if maximumSize > storage.maximumSize { storage = storage.regrown(maximumSize: maximumSize) }
    }

    private mutating func makeUnique() {
        if !isKnownUniquelyReferenced(&storage) { storage = storage.regrown(maximumSize: storage.maximumSize) }
    }

    private mutating func evict(toFit incoming: Int) {
        while size + incoming > maximumSize && storage.count > 0 {
            let oldest = storage.entry(0)
            size -= Self.entrySize(nameLength: Int(oldest.nameLength), valueLength: Int(oldest.valueLength))
            storage.removeOldest()
        }
    }

    /// The index (from 0, newest first) of an entry with this name and value, and of one with
    /// this name only. The table holds a handful of entries on APNs traffic.
    func find(name: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) -> (full: Int?, name: Int?) {
        var nameOnly: Int?
        for index in 0..<count {
            let entry = self[index]
            guard sameBytes(entry.name, name) else { continue }
            if sameBytes(entry.value, value) { return (index, index) }
            if nameOnly == nil { nameOnly = index }
        }
        return (nil, nameOnly)
    }

    /// The ring of bytes and the ring of entry descriptors (oldest at `first`).
    private final class Storage {
        let maximumSize: Int
        @exclusivity(unchecked) var bytes: UnsafeMutableRawBufferPointer
        @exclusivity(unchecked) var spare: UnsafeMutableRawBufferPointer
        let entries: UnsafeMutablePointer<Entry>
        /// Each entry takes at least 32 bytes of the maximum size.
        let entryCapacity: Int
        @exclusivity(unchecked) var first = 0
        @exclusivity(unchecked) var count = 0

        init(maximumSize: Int) {
            self.maximumSize = maximumSize
            let byteCapacity = max(64, 2 * maximumSize)
            bytes = .allocate(byteCount: byteCapacity, alignment: 8)
            spare = .allocate(byteCount: byteCapacity, alignment: 8)
            entryCapacity = maximumSize / 32 + 1
            entries = .allocate(capacity: entryCapacity)
        }

        deinit {
            bytes.deallocate()
            spare.deallocate()
            entries.deallocate()
        }

        /// A copy with room for `maximumSize`, holding the same entries.
        func regrown(maximumSize: Int) -> Storage {
            let copy = Storage(maximumSize: Swift.max(maximumSize, self.maximumSize))
            for position in 0..<count {
                let entry = self.entry(position)
                let length = entry.end - Int(entry.offset)
                let offset = copy.place(length: length)
                (copy.bytes.baseAddress! + offset).copyMemory(
                    from: bytes.baseAddress! + Int(entry.offset),
                    byteCount: length
                )
                copy.append(Entry(offset: Int32(offset), nameLength: entry.nameLength, valueLength: entry.valueLength))
            }
            return copy
        }

        func entry(_ position: Int) -> Entry { entries[(first + position) % entryCapacity] }

        func append(_ entry: Entry) {
            entries[(first + count) % entryCapacity] = entry
            count += 1
        }

        func removeOldest() {
            first = (first + 1) % entryCapacity
            count -= 1
        }

        /// Where `length` contiguous bytes go; compacts when the ring has no such gap.
        func place(length: Int) -> Int {
            guard count > 0 else { return 0 }
            let head = Int(entry(0).offset)
            let tail = entry(count - 1).end
            if tail >= head {  // not wrapped: live bytes are head..<tail
                if bytes.count - tail >= length { return tail }
                if head >= length { return 0 }
            } else if head - tail >= length {
                return tail
            }
            return compact()
        }

        /// Moves the live entries, oldest first, to the start of the spare ring and swaps the
        /// rings; returns where the next entry goes.
        private func compact() -> Int {
            var offset = 0
            for position in 0..<count {
                let index = (first + position) % entryCapacity
                let length = entries[index].end - Int(entries[index].offset)
                (spare.baseAddress! + offset).copyMemory(
                    from: bytes.baseAddress! + Int(entries[index].offset),
                    byteCount: length
                )
                entries[index].offset = Int32(offset)
                offset += length
            }
            swap(&spare, &bytes)
            return offset
        }
    }
}
