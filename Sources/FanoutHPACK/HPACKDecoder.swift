/// Decodes HPACK header blocks (RFC 7541) on bytes in place: each field reaches the caller as
/// two byte views, valid during the call; no `String` is made.
///
/// ```
///  1xxxxxxx            indexed field                    (§6.1)
///  01xxxxxx            literal, incremental indexing    (§6.2.1)
///  001xxxxx            dynamic table size update        (§6.3)
///  0001xxxx            literal, never indexed           (§6.2.3)
///  0000xxxx            literal, without indexing        (§6.2.2)
/// ```
public struct HPACKDecoder {
    private var table: HPACKDynamicTable
    /// The largest dynamic table our SETTINGS_HEADER_TABLE_SIZE allows the peer to use.
    public var maximumTableSizeAllowed: Int
    /// The largest header list accepted (SETTINGS_MAX_HEADER_LIST_SIZE).
    public var maximumHeaderListSize: Int
    /// Huffman-decoded strings are written here, so their views stay valid during the call.
    private let scratch: HPACKScratch
    /// Huffman's decoding tables, held so that no string reaches the lazily made global.
    private let huffmanTables = Huffman.decodeTables
    private let staticTable = HPACKStaticTable.view

    /// Creates a decoder with the table size and header list limit in force.
    public init(maximumTableSize: Int = 4096, maximumHeaderListSize: Int = 16384) {
        table = HPACKDynamicTable(maximumSize: maximumTableSize)
        maximumTableSizeAllowed = maximumTableSize
        self.maximumHeaderListSize = maximumHeaderListSize
        // Huffman-decoded strings (at most 8/5 of their coded length) and names copied out of
        // the table, all bounded by the header list limit.
        scratch = HPACKScratch(byteCount: 3 * maximumHeaderListSize)
    }

    /// The dynamic table's current size, in HPACK's accounting.
    public var dynamicTableSize: Int { table.size }
    /// The entries in the dynamic table.
    public var dynamicTableCount: Int { table.count }

    /// How a field asked to be indexed.
    public enum Indexing: Sendable, Hashable {
        case indexed
        case incremental
        case withoutIndexing
        case neverIndexed
    }

    /// Decodes `block` and calls `field` with each name and value in order.
    public mutating func decode(
        _ block: UnsafeRawBufferPointer,
        field: (_ name: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer, _ indexing: Indexing) -> Void
    ) throws(HPACKError) {
        var offset = 0
        var listSize = 0
        var scratchUsed = 0
        var seenField = false
        let scratch = self.scratch.memory
        while offset < block.count {
            let first = block[offset]
            if first & 0x80 != 0 {
                let index = try HPACKInteger.read(block, at: &offset, prefixBits: 7)
                let (name, value) = try entry(index)
                try account(&listSize, name.count, value.count)
                field(name, value, .indexed)
                seenField = true
                continue
            }
            if first & 0xE0 == 0x20 {
                guard !seenField else { throw .misplacedTableSizeUpdate }
                let size = try HPACKInteger.read(block, at: &offset, prefixBits: 5)
                guard size <= maximumTableSizeAllowed else {
                    throw .tableSizeTooLarge(size, limit: maximumTableSizeAllowed)
                }
                table.resize(to: size)
                continue
            }
            let indexing: Indexing
            let prefixBits: Int
            if first & 0xC0 == 0x40 {
                (indexing, prefixBits) = (.incremental, 6)
            } else if first & 0xF0 == 0x10 {
                (indexing, prefixBits) = (.neverIndexed, 4)
            } else {
                (indexing, prefixBits) = (.withoutIndexing, 4)
            }
            let nameIndex = try HPACKInteger.read(block, at: &offset, prefixBits: prefixBits)
            if nameIndex == 0 {
                let name = try readString(block, &offset, scratch, &scratchUsed)
                let value = try readString(block, &offset, scratch, &scratchUsed)
                try account(&listSize, name.count, value.count)
                field(name, value, indexing)
                if indexing == .incremental { table.insert(name: name, value: value) }
            } else {
                var name = try entry(nameIndex).name
                let value = try readString(block, &offset, scratch, &scratchUsed)
                try account(&listSize, name.count, value.count)
                field(name, value, indexing)
                if indexing == .incremental {
                    // Inserting may evict the entry the name lives in: copy it out first.
                    if nameIndex > HPACKStaticTable.count {
                        name = try copy(name, scratch, &scratchUsed)
                    }
                    table.insert(name: name, value: value)
                }
            }
            seenField = true
        }
    }

    private func account(_ listSize: inout Int, _ nameLength: Int, _ valueLength: Int) throws(HPACKError) {
        listSize += nameLength + valueLength + 32
        if listSize > maximumHeaderListSize { throw .headerListTooLarge(limit: maximumHeaderListSize) }
    }

    /// Copies `bytes` into the scratch memory, so they outlive a change to the table.
    private func copy(
        _ bytes: UnsafeRawBufferPointer,
        _ scratch: UnsafeMutableRawBufferPointer,
        _ scratchUsed: inout Int
    ) throws(HPACKError) -> UnsafeRawBufferPointer {
        guard scratchUsed + bytes.count <= scratch.count else {
            throw .headerListTooLarge(limit: maximumHeaderListSize)
        }
        let start = scratch.baseAddress! + scratchUsed
        if bytes.count > 0 { start.copyMemory(from: bytes.baseAddress!, byteCount: bytes.count) }
        scratchUsed += bytes.count
        return UnsafeRawBufferPointer(start: start, count: bytes.count)
    }

    /// The field at `index`: 1...61 static, then the dynamic table, newest first. The views
    /// are valid until the table next changes.
    private func entry(_ index: Int) throws(HPACKError) -> (name: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer)
    {
        if index >= 1 && index <= HPACKStaticTable.count { return staticTable.entries[index - 1] }
        let dynamic = index - HPACKStaticTable.count - 1
        guard index >= 1 && dynamic < table.count else { throw .invalidIndex(index) }
        return table[dynamic]
    }

    /// A string literal (§5.2): `H | length (7-bit prefix) | bytes`, Huffman-coded when H is set.
    private func readString(
        _ block: UnsafeRawBufferPointer,
        _ offset: inout Int,
        _ scratch: UnsafeMutableRawBufferPointer,
        _ scratchUsed: inout Int
    ) throws(HPACKError) -> UnsafeRawBufferPointer {
        guard offset < block.count else { throw .truncated }
        let huffman = block[offset] & 0x80 != 0
        let length = try HPACKInteger.read(block, at: &offset, prefixBits: 7)
        guard length <= block.count - offset else { throw .truncated }
        let bytes = UnsafeRawBufferPointer(rebasing: block[offset..<(offset + length)])
        offset += length
        guard huffman else { return bytes }
        // Decoded text is at most 8/5 of the coded length; the list limit bounds it overall.
        let room = length * 8 / 5 + 1
        guard scratchUsed + room <= scratch.count else { throw .headerListTooLarge(limit: maximumHeaderListSize) }
        let start = scratch.baseAddress! + scratchUsed
        let decoded = try Huffman.decode(bytes, into: start, tables: huffmanTables)
        scratchUsed += decoded
        return UnsafeRawBufferPointer(start: start, count: decoded)
    }
}

/// Memory for Huffman-decoded strings, owned so that it is freed with the decoder.
final class HPACKScratch {
    let memory: UnsafeMutableRawBufferPointer

    init(byteCount: Int) {
        memory = .allocate(byteCount: byteCount, alignment: 8)
    }

    deinit {
        memory.deallocate()
    }
}
