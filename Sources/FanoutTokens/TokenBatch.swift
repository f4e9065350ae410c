/// Device tokens parsed in place: the bytes they were read into and where each token and its
/// fields lie in them.
///
/// A reader fills a batch and hands it to one consumer through a `BatchQueue`; the consumer hands
/// it back with `TokenStream.recycle(_:)`. Batches are allocated once, so steady-state reading
/// allocates nothing. One thread owns a batch at a time: the queue's acquire/release ordering is
/// what publishes its contents to the next owner, which is why it may be `@unchecked Sendable`.
public final class TokenBatch: @unchecked Sendable {
    struct Entry {
        var tokenOffset: Int32
        var tokenLength: Int32
        var fieldsOffset: Int32
        var fieldsLength: Int32
        var line: Int
        var sequence: UInt64
    }

    /// The bytes tokens are read into and viewed in.
    let bytes: UnsafeMutableRawBufferPointer
    let entries: UnsafeMutableBufferPointer<Entry>
    /// How many tokens the batch holds.
    public private(set) var count = 0

    /// Creates an empty batch with room for `byteCapacity` bytes of lines and `tokenCapacity`
    /// tokens.
    public init(byteCapacity: Int = 256 * 1024, tokenCapacity: Int = 8192) {
        precondition(byteCapacity > 0 && byteCapacity <= Int(Int32.max) && tokenCapacity > 0)
        bytes = .allocate(byteCount: byteCapacity, alignment: 16)
        entries = .allocate(capacity: tokenCapacity)
    }

    deinit {
        bytes.deallocate()
        entries.deallocate()
    }

    /// The byte capacity.
    public var byteCapacity: Int { bytes.count }
    /// The token capacity.
    public var tokenCapacity: Int { entries.count }
    /// Whether the batch holds no token.
    public var isEmpty: Bool { count == 0 }
    /// Whether another token fits.
    var hasRoom: Bool { count < entries.count }

    /// Token `index` (from 0); its views are valid until the batch is recycled.
    @inlinable
    public subscript(index: Int) -> TokenRecord {
        precondition(index >= 0 && index < count, "token index out of range")
        return record(index)
    }

    @usableFromInline
    func record(_ index: Int) -> TokenRecord {
        let entry = entries[index]
        let base = UnsafeRawPointer(bytes.baseAddress!)
        return TokenRecord(
            token: UnsafeRawBufferPointer(start: base + Int(entry.tokenOffset), count: Int(entry.tokenLength)),
            fields: UnsafeRawBufferPointer(start: base + Int(entry.fieldsOffset), count: Int(entry.fieldsLength)),
            line: entry.line,
            sequence: entry.sequence
        )
    }

    @inline(__always)
    func append(token: Range<Int>, fields: Range<Int>, line: Int, sequence: UInt64) {
        entries[count] = Entry(
            tokenOffset: Int32(truncatingIfNeeded: token.lowerBound),
            tokenLength: Int32(truncatingIfNeeded: token.count),
            fieldsOffset: Int32(truncatingIfNeeded: fields.lowerBound),
            fieldsLength: Int32(truncatingIfNeeded: fields.count),
            line: line,
            sequence: sequence
        )
        count &+= 1
    }

    /// Appends a token given as raw bytes (from a binary file or the generator): its hex goes
    /// at `offset`, which moves past it. It has no fields, and its line is its record number.
    @inline(__always)
    func appendHex(of raw: UnsafeRawBufferPointer, at offset: inout Int, sequence: UInt64) {
        HexEncoding.write(raw, to: bytes.baseAddress! + offset)
        let end = offset &+ 2 &* raw.count
        append(token: offset..<end, fields: end..<end, line: Int(sequence) &+ 1, sequence: sequence)
        offset = end
    }

    /// Empties the batch for reuse.
    func removeAll() {
        count = 0
    }
}

/// One device token and what travels with it, as views into a `TokenBatch`.
public struct TokenRecord {
    /// The token as hex text, validated: hex digits only, of an accepted even length.
    public let token: UnsafeRawBufferPointer
    /// The rest of the line after the token, each field preceded by its tab (`\t3\tAlice`);
    /// empty when there are no fields. This is what `NotificationInput.fields` takes.
    public let fields: UnsafeRawBufferPointer
    /// Where the token came from: its line in a text file, its record number (from 1) in a
    /// binary file or a generated set.
    public let line: Int
    /// Its position among the valid tokens of the whole set, from 0, the same on every shard.
    public let sequence: UInt64

    @usableFromInline
    init(token: UnsafeRawBufferPointer, fields: UnsafeRawBufferPointer, line: Int, sequence: UInt64) {
        self.token = token
        self.fields = fields
        self.line = line
        self.sequence = sequence
    }
}
