/// Encodes header blocks with HPACK (RFC 7541) into a caller's `OutputBuffer`.
///
/// A field that matches a table entry exactly costs one byte; one whose name matches costs the
/// name's index and the value. With incremental indexing, fields repeated on every request
/// (topic, push type, authorization) cost a byte each after the first.
public struct HPACKEncoder {
    private var table: HPACKDynamicTable
    private let staticTable = HPACKStaticTable.view
    private var pendingSizeUpdates: [Int] = []
    /// When strings are Huffman-coded.
    public var huffman: HuffmanPolicy

    /// When to Huffman-code a string.
    public enum HuffmanPolicy: Sendable, Hashable {
        /// When that is shorter (the usual choice).
        case whenShorter
        /// Always, even at equal length (as RFC 7541's Huffman examples do).
        case always
        /// Never.
        case never
    }

    /// How a field may be indexed.
    public enum Indexing: Sendable, Hashable {
        /// Add it to the dynamic table (§6.2.1).
        case incremental
        /// Do not add it (§6.2.2).
        case withoutIndexing
        /// Do not add it, and ask intermediaries never to (§6.2.3): for secrets.
        case neverIndexed
    }

    /// Creates an encoder whose dynamic table may hold `maximumTableSize` bytes.
    public init(maximumTableSize: Int = 4096, huffman: HuffmanPolicy = .whenShorter) {
        table = HPACKDynamicTable(maximumSize: maximumTableSize)
        self.huffman = huffman
    }

    /// The dynamic table's current size.
    public var dynamicTableSize: Int { table.size }

    /// Changes the table size (for instance after the peer's SETTINGS_HEADER_TABLE_SIZE); the
    /// update is signalled at the start of the next block.
    public mutating func setMaximumTableSize(_ size: Int) {
        table.resize(to: size)
        pendingSizeUpdates.append(size)
    }

    /// Starts a block: writes any pending table size updates (§4.2).
    public mutating func beginBlock(into block: inout OutputBuffer) {
        // Only the smallest and the final size matter. (Most blocks have none: the array is
        // left alone then, not even checked for sharing.)
        guard let smallest = pendingSizeUpdates.min(), let last = pendingSizeUpdates.last else { return }
        block.writeRaw(maximum: 2 * HPACKInteger.maximumLength) { out in
            let written = smallest < last ? HPACKInteger.store(smallest, prefixBits: 5, flags: 0x20, at: out) : 0
            return written + HPACKInteger.store(last, prefixBits: 5, flags: 0x20, at: out + written)
        }
        pendingSizeUpdates.removeAll(keepingCapacity: true)
    }

    /// Appends one field; `huffman` overrides the encoder's policy for this field (a value that
    /// changes every time, like a device's `:path`, is cheaper sent raw than Huffman-coded).
    public mutating func encode(
        name: UnsafeRawBufferPointer,
        value: UnsafeRawBufferPointer,
        indexing: Indexing = .incremental,
        huffman: HuffmanPolicy? = nil,
        into block: inout OutputBuffer
    ) {
        let (full, nameIndex) = find(name: name, value: value)
        if let full, indexing != .neverIndexed {
            block.writeRaw(maximum: HPACKInteger.maximumLength) { out in
                HPACKInteger.store(full, prefixBits: 7, flags: 0x80, at: out)
            }
            return
        }
        let (flags, prefixBits): (UInt8, Int) =
            switch indexing {
            case .incremental: (0x40, 6)
            case .withoutIndexing: (0x00, 4)
            case .neverIndexed: (0x10, 4)
            }
        // The whole field in one write (one capacity check, not one an integer and a string):
        //   index or 0 ─ [name: length, bytes] ─ value: length, bytes
        let policy = huffman ?? self.huffman
        let nameCoding = nameIndex == nil ? StringCoding(name, policy) : nil
        let valueCoding = StringCoding(value, policy)
        let maximum = 3 * HPACKInteger.maximumLength + (nameCoding?.length ?? 0) + valueCoding.length
        block.writeRaw(maximum: maximum) { out in
            var written = HPACKInteger.store(nameIndex ?? 0, prefixBits: prefixBits, flags: flags, at: out)
            if let nameCoding { written += nameCoding.store(name, at: out + written) }
            return written + valueCoding.store(value, at: out + written)
        }
        if indexing == .incremental { table.insert(name: name, value: value) }
    }

    /// Appends one field whose name is in neither table and whose value never repeats (a
    /// response's `apns-id`): a literal without indexing with a new name, both strings as they
    /// are (§6.2.2) — the bytes `encode(name:value:indexing: .withoutIndexing, huffman: .never)`
    /// writes for such a name, without looking it up in the tables first (a third of that
    /// call's cost for the sink's answers). A name that is in a table still decodes right; it
    /// only costs the bytes an index would have saved.
    ///
    /// ```
    ///   0000 0000 │ 0 name length (7+) │ name │ 0 value length (7+) │ value
    /// ```
    public mutating func encodeLiteral(
        name: UnsafeRawBufferPointer,
        value: UnsafeRawBufferPointer,
        into block: inout OutputBuffer
    ) {
        let nameCoding = StringCoding(name, .never)
        let valueCoding = StringCoding(value, .never)
        block.writeRaw(maximum: 1 + 2 * HPACKInteger.maximumLength + name.count + value.count) { out in
            out.storeBytes(of: 0, as: UInt8.self)
            let written = 1 + nameCoding.store(name, at: out + 1)
            return written + valueCoding.store(value, at: out + written)
        }
    }

    /// How a string literal goes on the wire (§5.2): Huffman-coded when that is shorter (or the
    /// policy says always), else as it is.
    ///
    /// ```
    /// +---+---+---+---+---+---+---+---+
    /// | H |    String Length (7+)     |
    /// +---+---------------------------+
    /// |  String Data (Length octets)  |
    /// +-------------------------------+
    /// ```
    private struct StringCoding {
        let length: Int
        let huffman: Bool

        @inline(__always)
        init(_ bytes: UnsafeRawBufferPointer, _ policy: HuffmanPolicy) {
            if policy != .never {
                let coded = Huffman.encodedLength(bytes)
                if coded < bytes.count || policy == .always {
                    (length, huffman) = (coded, true)
                    return
                }
            }
            (length, huffman) = (bytes.count, false)
        }

        /// Stores the literal at `out`, which has room for `HPACKInteger.maximumLength + length`
        /// bytes; returns the bytes stored.
        @inline(__always)
        func store(_ bytes: UnsafeRawBufferPointer, at out: UnsafeMutableRawPointer) -> Int {
            let header = HPACKInteger.store(length, prefixBits: 7, flags: huffman ? 0x80 : 0x00, at: out)
            if huffman { return header + Huffman.encode(bytes, to: out + header) }
            if let base = bytes.baseAddress { (out + header).copyMemory(from: base, byteCount: bytes.count) }
            return header + bytes.count
        }
    }

    /// Appends one field given as text: for tools and tests.
    public mutating func encode(
        name: String,
        value: String,
        indexing: Indexing = .incremental,
        into block: inout OutputBuffer
    ) {
        let name = Array(name.utf8)
        let value = Array(value.utf8)
        name.withUnsafeBytes { name in
            value.withUnsafeBytes { value in encode(name: name, value: value, indexing: indexing, into: &block) }
        }
    }

    /// The best table match: static entries by name length (`HPACKStaticTable.View`), then a
    /// scan of the dynamic table comparing lengths before bytes.
    private func find(name: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) -> (full: Int?, name: Int?) {
        let fromStatic = staticTable.find(name: name, value: value)
        if fromStatic.full != nil { return fromStatic }
        let dynamic = table.find(name: name, value: value)
        if let full = dynamic.full { return (full + HPACKStaticTable.count + 1, nil) }
        return (nil, fromStatic.name ?? dynamic.name.map { $0 + HPACKStaticTable.count + 1 })
    }
}
