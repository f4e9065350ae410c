import FanoutAPNs
import FanoutNotation

/// The bytes of a template file and its name, turning byte offsets into line and column.
///
/// Locations are computed only when something needs reporting, so parsing stays a plain walk
/// over bytes.
struct SourceText: Sendable {
    let file: String
    let bytes: [UInt8]

    func location(of offset: Int) -> TemplateLocation {
        var line = 1
        var column = 1
        var index = 0
        let end = min(offset, bytes.count)
        while index < end {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\n") {
                line += 1
                column = 1
            } else if byte & 0xC0 != 0x80 {
                // Continuation bytes belong to the scalar their lead byte started.
                column += 1
            }
            index += 1
        }
        return TemplateLocation(file: file, line: line, column: column)
    }

    /// A short, printable description of the byte at `offset` for error messages.
    func describeByte(at offset: Int) -> String {
        guard offset < bytes.count else { return "end of file" }
        if bytes[offset] == UInt8(ascii: "\n") { return "end of line" }
        return ByteDescription.describe(bytes[offset])
    }
}
