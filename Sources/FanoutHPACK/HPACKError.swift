/// Why a header block could not be decoded. Every case is a connection error of type
/// COMPRESSION_ERROR (RFC 9113 §4.3), except `headerListTooLarge`, which a server answers per
/// stream.
public enum HPACKError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The block ended inside a field.
    case truncated
    /// An integer is larger than HPACK's limit here (2^31).
    case integerOverflow
    /// An index points at no entry: 0, or beyond the static and dynamic tables.
    case invalidIndex(Int)
    /// A Huffman string is malformed: EOS inside it, or padding that is not all ones or over 7 bits.
    case invalidHuffman
    /// A dynamic table size update over the limit our SETTINGS allow.
    case tableSizeTooLarge(Int, limit: Int)
    /// A table size update after the first field of a block.
    case misplacedTableSizeUpdate
    /// The decoded header list is larger than the limit (name + value + 32 per field).
    case headerListTooLarge(limit: Int)

    public var description: String {
        switch self {
        case .truncated: "the header block ends inside a field"
        case .integerOverflow: "an HPACK integer is over 2^31"
        case .invalidIndex(let index): "header index \(index) is not in the static or dynamic table"
        case .invalidHuffman: "a Huffman-coded string is malformed"
        case .tableSizeTooLarge(let size, let limit):
            "a dynamic table size update to \(size) is over the \(limit) allowed"
        case .misplacedTableSizeUpdate: "a dynamic table size update comes after a header field"
        case .headerListTooLarge(let limit): "the header list is larger than \(limit) bytes"
        }
    }
}
