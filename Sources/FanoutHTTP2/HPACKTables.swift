#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Whether `stored` holds exactly the bytes of `bytes`: lengths first, then one `memcmp`.
@inline(__always)
func sameBytes(_ stored: [UInt8], _ bytes: UnsafeRawBufferPointer) -> Bool {
    guard stored.count == bytes.count else { return false }
    guard let start = bytes.baseAddress, !stored.isEmpty else { return true }
    return stored.withUnsafeBytes { memcmp($0.baseAddress!, start, bytes.count) == 0 }
}

/// HPACK's static table (RFC 7541 Appendix A), indices 1 to 61.
enum HPACKStaticTable {
    static let entries: [(name: [UInt8], value: [UInt8])] = [
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
    ].map { (Array($0.0.utf8), Array($0.1.utf8)) }

    static var count: Int { entries.count }

    /// Positions in `entries` by name length: a lookup compares only names of the right length
    /// (one to four of them) instead of scanning all 61.
    static let positionsByNameLength: [[Int]] = {
        var buckets = [[Int]](repeating: [], count: 32)
        for (position, entry) in entries.enumerated() { buckets[entry.name.count].append(position) }
        return buckets
    }()
}

/// HPACK's dynamic table (RFC 7541 §2.3.2, §4): newest entry first, evicted oldest first to
/// keep the sum of entry sizes (name + value + 32) within the maximum size.
struct HPACKDynamicTable {
    private var entries: [(name: [UInt8], value: [UInt8])] = []  // oldest first
    /// The sum of the entries' sizes.
    private(set) var size = 0
    /// The most `size` may be.
    private(set) var maximumSize: Int

    init(maximumSize: Int) {
        self.maximumSize = maximumSize
    }

    var count: Int { entries.count }

    /// Entry `index`, from 0 for the newest.
    subscript(index: Int) -> (name: [UInt8], value: [UInt8]) {
        entries[entries.count - 1 - index]
    }

    static func entrySize(nameLength: Int, valueLength: Int) -> Int { nameLength + valueLength + 32 }

    mutating func insert(name: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) {
        let entrySize = Self.entrySize(nameLength: name.count, valueLength: value.count)
        evict(toFit: entrySize)
        // An entry larger than the table empties it and is not added (§4.4).
        guard entrySize <= maximumSize else { return }
        // Each entry owns its bytes: simple and correct, but an allocation per insertion. The
        // hot path (issue 4) wants one byte ring of `maximumSize` bytes instead.
        entries.append((Array(name), Array(value)))
        size += entrySize
    }

    mutating func resize(to maximumSize: Int) {
        self.maximumSize = maximumSize
        evict(toFit: 0)
    }

    private mutating func evict(toFit incoming: Int) {
        var removed = 0
        while size + incoming > maximumSize && removed < entries.count {
            size -= Self.entrySize(nameLength: entries[removed].name.count, valueLength: entries[removed].value.count)
            removed += 1
        }
        if removed > 0 { entries.removeFirst(removed) }
    }

    /// The index (from 0, newest first) of an entry with this name and value, and of one with
    /// this name only.
    func find(name: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) -> (full: Int?, name: Int?) {
        var nameOnly: Int?
        for position in stride(from: entries.count - 1, through: 0, by: -1) {
            let entry = entries[position]
            guard sameBytes(entry.name, name) else { continue }
            let index = entries.count - 1 - position
            if sameBytes(entry.value, value) { return (index, index) }
            if nameOnly == nil { nameOnly = index }
        }
        return (nil, nameOnly)
    }
}
