import FanoutHPACK
import NIOCore

/// Something that writes a message's header fields into a header block: the caller decides
/// where the bytes come from, so the hot path never builds a `String` or an array per request.
/// Pseudo-header fields come first (RFC 9113 §8.3).
public protocol HTTP2HeaderFields {
    /// Appends each field with `encoder`, e.g. `encoder.encode(name:value:indexing:into:)`.
    func encode(with encoder: inout HPACKEncoder, into block: inout OutputBuffer)
}

/// A fixed list of fields, converted to bytes once and encoded as often as needed: a response
/// the sink repeats, or the fields every request of a run shares.
///
/// All names and values lie in one byte array, each field's value right after its name, so an
/// encode reaches the bytes once (one retain) instead of once per name and value; a field is
/// where its name starts and the two lengths.
/// ```
///   bytes:  | :status | 200 | apns-id | 6E1F…1A2B | …
///   fields:   (0, 7, 3, .incremental), (10, 7, 36, …), …
/// ```
public struct HTTP2Fields: HTTP2HeaderFields, Sendable {
    private struct Field: Sendable {
        var nameStart: Int32
        var nameCount: Int32
        var valueCount: Int32
        var valueStart: Int32 { nameStart + nameCount }
        var indexing: HPACKEncoder.Indexing
    }

    private var bytes: [UInt8] = []
    private var fields: [Field] = []

    /// Creates the list; pseudo-header fields must come first.
    public init(_ fields: [(name: String, value: String)], indexing: HPACKEncoder.Indexing = .incremental) {
        for field in fields { append(name: field.name, value: field.value, indexing: indexing) }
    }

    /// Appends one field.
    public mutating func append(name: String, value: String, indexing: HPACKEncoder.Indexing = .incremental) {
        let nameStart = bytes.count
        bytes += name.utf8
        let valueStart = bytes.count
        bytes += value.utf8
        fields.append(
            Field(
                nameStart: Int32(nameStart),
                nameCount: Int32(valueStart - nameStart),
                valueCount: Int32(bytes.count - valueStart),
                indexing: indexing
            )
        )
    }

    /// The number of fields.
    public var count: Int { fields.count }

    public func encode(with encoder: inout HPACKEncoder, into block: inout OutputBuffer) {
        bytes.withUnsafeBytes { bytes in
            fields.withUnsafeBufferPointer { fields in
                for field in fields {
                    encoder.encode(
                        name: UnsafeRawBufferPointer(
                            rebasing: bytes[Int(field.nameStart)..<Int(field.nameStart + field.nameCount)]
                        ),
                        value: UnsafeRawBufferPointer(
                            rebasing: bytes[Int(field.valueStart)..<Int(field.valueStart + field.valueCount)]
                        ),
                        indexing: field.indexing,
                        into: &block
                    )
                }
            }
        }
    }
}
