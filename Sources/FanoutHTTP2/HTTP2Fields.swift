import FanoutHPACK
import NIOCore

/// Something that writes a message's header fields into a header block: the caller decides
/// where the bytes come from, so the hot path never builds a `String` or an array per request.
/// Pseudo-header fields come first (RFC 9113 §8.3).
public protocol HTTP2HeaderFields {
    /// Appends each field with `encoder`, e.g. `encoder.encode(name:value:indexing:into:)`.
    func encode(with encoder: inout HPACKEncoder, into buffer: inout ByteBuffer)
}

/// A fixed list of fields, converted to bytes once and encoded as often as needed: a response
/// the sink repeats, or the fields every request of a run shares.
public struct HTTP2Fields: HTTP2HeaderFields, Sendable {
    private var names: [[UInt8]] = []
    private var values: [[UInt8]] = []
    private var indexing: [HPACKEncoder.Indexing] = []

    /// Creates the list; pseudo-header fields must come first.
    public init(_ fields: [(name: String, value: String)], indexing: HPACKEncoder.Indexing = .incremental) {
        for field in fields { append(name: field.name, value: field.value, indexing: indexing) }
    }

    /// Appends one field.
    public mutating func append(name: String, value: String, indexing: HPACKEncoder.Indexing = .incremental) {
        names.append(Array(name.utf8))
        values.append(Array(value.utf8))
        self.indexing.append(indexing)
    }

    /// The number of fields.
    public var count: Int { names.count }

    public func encode(with encoder: inout HPACKEncoder, into buffer: inout ByteBuffer) {
        for position in names.indices {
            names[position].withUnsafeBytes { name in
                values[position].withUnsafeBytes { value in
                    encoder.encode(name: name, value: value, indexing: indexing[position], into: &buffer)
                }
            }
        }
    }
}

/// A field list followed by more fields: shared fields plus a per-request one.
public struct HTTP2FieldsPair<First: HTTP2HeaderFields, Second: HTTP2HeaderFields>: HTTP2HeaderFields {
    public var first: First
    public var second: Second

    public init(_ first: First, _ second: Second) {
        self.first = first
        self.second = second
    }

    public func encode(with encoder: inout HPACKEncoder, into buffer: inout ByteBuffer) {
        first.encode(with: &encoder, into: &buffer)
        second.encode(with: &encoder, into: &buffer)
    }
}
