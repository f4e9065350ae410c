import FanoutHPACK
import NIOCore

/// A decoded header list: a view of bytes the connection keeps in the stream's slot, valid
/// while the application handles the event that carries it (copy what must outlive that). No
/// `String` per field, no reference counting.
///
/// ```
///  +----------------+-----------------+------------+-------------+
///  | name length 16 | value length 16 | name bytes | value bytes | ... next field
///  +----------------+-----------------+------------+-------------+
/// ```
/// Lengths are bounded by SETTINGS_MAX_HEADER_LIST_SIZE, which the connection keeps under 64 KiB.
public struct HTTP2HeaderList {
    let storage: UnsafeRawBufferPointer

    init(viewing storage: UnsafeRawBufferPointer) {
        self.storage = storage
    }

    /// The bytes a field's record takes.
    @inline(__always)
    static func recordLength(name: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) -> Int {
        4 + name.count + value.count
    }

    /// Writes one field record at `out`, which has room for `recordLength(name:value:)` bytes;
    /// returns that length.
    @inline(__always)
    static func writeRecord(
        name: UnsafeRawBufferPointer,
        value: UnsafeRawBufferPointer,
        at out: UnsafeMutableRawPointer
    ) -> Int {
        out.storeBytes(of: UInt8(truncatingIfNeeded: name.count >> 8), as: UInt8.self)
        (out + 1).storeBytes(of: UInt8(truncatingIfNeeded: name.count), as: UInt8.self)
        (out + 2).storeBytes(of: UInt8(truncatingIfNeeded: value.count >> 8), as: UInt8.self)
        (out + 3).storeBytes(of: UInt8(truncatingIfNeeded: value.count), as: UInt8.self)
        if name.count > 0 { (out + 4).copyMemory(from: name.baseAddress!, byteCount: name.count) }
        if value.count > 0 { (out + 4 + name.count).copyMemory(from: value.baseAddress!, byteCount: value.count) }
        return recordLength(name: name, value: value)
    }

    /// Walks the records in `bytes`: `body` gets each name, where its value starts and how long
    /// it is, and returns false to stop.
    @inline(__always)
    private static func walk(
        _ bytes: UnsafeRawBufferPointer,
        _ body: (_ name: UnsafeRawBufferPointer, _ valueOffset: Int, _ valueLength: Int) -> Bool
    ) {
        var offset = 0
        while offset + 4 <= bytes.count {
            let nameLength = Int(bytes[offset]) << 8 | Int(bytes[offset + 1])
            let valueLength = Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3])
            let valueOffset = offset + 4 + nameLength
            guard body(UnsafeRawBufferPointer(rebasing: bytes[(offset + 4)..<valueOffset]), valueOffset, valueLength)
            else { return }
            offset = valueOffset + valueLength
        }
    }

    /// Calls `body` with each field's name and value, in order; the views are valid during the call.
    public func forEach(_ body: (_ name: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) -> Void) {
        Self.walk(storage) { name, valueOffset, valueLength in
            body(name, UnsafeRawBufferPointer(rebasing: storage[valueOffset..<(valueOffset + valueLength)]))
            return true
        }
    }

    /// Calls `body` with each field's name and where its value lies in `withUnsafeBytes`'s
    /// view, in order: for callers that keep a value's place past the call.
    public func forEachOffset(_ body: (_ name: UnsafeRawBufferPointer, _ valueOffset: Int, _ valueLength: Int) -> Void)
    {
        Self.walk(storage) { name, valueOffset, valueLength in
            body(name, valueOffset, valueLength)
            return true
        }
    }

    /// Calls `body` with the list's bytes (the layout above).
    public func withUnsafeBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try body(storage)
    }

    /// The value of the first field named `name` (lowercase), a view of the list's bytes.
    public func first(_ name: StaticString) -> UnsafeRawBufferPointer? {
        first(UnsafeRawBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount))
    }

    /// The value of the first field named `name` (lowercase), a view of the list's bytes.
    public func first(_ name: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer? {
        var found: UnsafeRawBufferPointer?
        Self.walk(storage) { fieldName, valueOffset, valueLength in
            guard sameBytes(fieldName, name) else { return true }
            found = UnsafeRawBufferPointer(rebasing: storage[valueOffset..<(valueOffset + valueLength)])
            return false
        }
        return found
    }

    /// The value of the first field named `name`, as text: for tools and tests.
    public subscript(name: String) -> String? {
        let name = Array(name.utf8)
        return name.withUnsafeBytes { first($0) }.map { String(decoding: $0, as: UTF8.self) }
    }

    /// Every field as text, in order: for tools and tests.
    public var fields: [(name: String, value: String)] {
        var fields: [(String, String)] = []
        forEach { name, value in
            fields.append((String(decoding: name, as: UTF8.self), String(decoding: value, as: UTF8.self)))
        }
        return fields
    }

    /// Whether the list has no fields.
    public var isEmpty: Bool { storage.isEmpty }

    /// A field value read as a non-negative decimal number (digits only, at most 18), or `nil`.
    public static func decimal(_ bytes: UnsafeRawBufferPointer) -> Int? {
        guard !bytes.isEmpty, bytes.count <= 18 else { return nil }
        var value = 0
        for byte in bytes {
            guard byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") else { return nil }
            value = value * 10 + Int(byte - UInt8(ascii: "0"))
        }
        return value
    }
}

/// Checks a header list as it is decoded, against RFC 9113 §8.2 and §8.3: lowercase names,
/// pseudo-header fields first and only the ones the message kind has, each once, no
/// connection-specific fields, `te` only as "trailers". A problem makes the message malformed:
/// a stream error of type PROTOCOL_ERROR.
///
/// Decoding a list makes one of these per header block, so it holds only plain values: a
/// `String` reason cost a reference-counting call per block even when there was no problem.
struct HeaderListValidator {
    enum Kind {
        case request
        case response
        case trailers
    }

    /// What makes a list malformed (RFC 9113 §8.2, §8.3).
    enum Problem: Hashable {
        case emptyName
        case pseudoHeaderAfterRegularField
        case pseudoHeaderNotAllowedHere
        case pseudoHeaderTwice
        case emptyPath
        case statusNotThreeDigits
        case uppercaseName
        case teOtherThanTrailers
        case connectionSpecificField
        case contentLengthNotANumber
        case conflictingContentLengths
        case requestWithoutMethodSchemeAndPath
        case responseWithoutStatus
    }

    let kind: Kind
    private var seenRegular = false
    private var pseudo: UInt8 = 0  // bits: 1 method, 2 scheme, 4 path, 8 authority, 16 status
    private(set) var status: Int = 0
    private(set) var contentLength: Int?
    private(set) var problem: Problem?

    init(kind: Kind) {
        self.kind = kind
    }

    mutating func check(name: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) {
        guard problem == nil else { return }
        guard let first = name.first else { return fail(.emptyName) }
        if first == UInt8(ascii: ":") {
            guard !seenRegular else { return fail(.pseudoHeaderAfterRegularField) }
            guard kind != .trailers, let bit = Self.pseudoBit(name), (bit == 16) == (kind == .response) else {
                return fail(.pseudoHeaderNotAllowedHere)
            }
            guard pseudo & bit == 0 else { return fail(.pseudoHeaderTwice) }
            pseudo |= bit
            if bit == 4 && value.isEmpty { return fail(.emptyPath) }
            if bit == 16 {
                guard value.count == 3, let code = HTTP2HeaderList.decimal(value) else {
                    return fail(.statusNotThreeDigits)
                }
                status = code
            }
            return
        }
        seenRegular = true
        for byte in name where byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") {
            return fail(.uppercaseName)
        }
        switch name.count {
        case 2 where sameBytes(name, Self.te) && !sameBytes(value, Self.trailers):
            fail(.teOtherThanTrailers)
        case 7 where sameBytes(name, Self.upgrade), 10 where sameBytes(name, Self.connection),
            10 where sameBytes(name, Self.keepAlive), 16 where sameBytes(name, Self.proxyConnection),
            17 where sameBytes(name, Self.transferEncoding):
            fail(.connectionSpecificField)
        case 14 where sameBytes(name, Self.contentLengthName):
            guard let length = HTTP2HeaderList.decimal(value) else { return fail(.contentLengthNotANumber) }
            if let contentLength, contentLength != length { return fail(.conflictingContentLengths) }
            contentLength = length
        default: break
        }
    }

    /// The problem with the whole list, once every field is seen.
    mutating func finish() -> Problem? {
        if problem == nil {
            switch kind {
            case .request where pseudo & 0b111 != 0b111:
                fail(.requestWithoutMethodSchemeAndPath)
            case .response where pseudo & 16 == 0:
                fail(.responseWithoutStatus)
            default: break
            }
        }
        return problem
    }

    private mutating func fail(_ problem: Problem) {
        self.problem = problem
    }

    private static func pseudoBit(_ name: UnsafeRawBufferPointer) -> UInt8? {
        switch name.count {
        case 7 where sameBytes(name, method): 1
        case 7 where sameBytes(name, scheme): 2
        case 5 where sameBytes(name, path): 4
        case 10 where sameBytes(name, authority): 8
        case 7 where sameBytes(name, statusName): 16
        default: nil
        }
    }

    private static func view(_ text: StaticString) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount)
    }

    static var method: UnsafeRawBufferPointer { view(":method") }
    static var scheme: UnsafeRawBufferPointer { view(":scheme") }
    static var path: UnsafeRawBufferPointer { view(":path") }
    static var authority: UnsafeRawBufferPointer { view(":authority") }
    static var statusName: UnsafeRawBufferPointer { view(":status") }
    static var te: UnsafeRawBufferPointer { view("te") }
    static var trailers: UnsafeRawBufferPointer { view("trailers") }
    static var upgrade: UnsafeRawBufferPointer { view("upgrade") }
    static var connection: UnsafeRawBufferPointer { view("connection") }
    static var keepAlive: UnsafeRawBufferPointer { view("keep-alive") }
    static var proxyConnection: UnsafeRawBufferPointer { view("proxy-connection") }
    static var transferEncoding: UnsafeRawBufferPointer { view("transfer-encoding") }
    static var contentLengthName: UnsafeRawBufferPointer { view("content-length") }
}
