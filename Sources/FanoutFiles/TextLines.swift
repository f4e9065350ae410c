/// The lines of a text file, as Fanout reads every file it takes a line at a time (settings and
/// scenario files, thresholds, token lists, latency samples, interval logs): LF, CRLF and a
/// lone CR each end a line, so a file saved on Windows (or an old Mac) reads as it shows.
///
/// ```
///   p99 < 25ms␍␊        line 1
///   errors < 1%␊        line 2
///   ␍                   line 3 (empty)
///   max < 1s            line 4 (no line end at the end of the file)
/// ```
///
/// Swift reads `"\r\n"` as one `Character`, so `text.split(separator: "\n")` keeps a CRLF file
/// whole as its first line; this walks the UTF-8 bytes instead. The lines are substrings of the
/// text (no copy) and carry their 1-based number for `FILE:LINE` messages.
public struct TextLines: Sequence, Sendable {
    public struct Line: Sendable, Equatable {
        /// 1 for the first line.
        public var number: Int
        /// The line without its line end.
        public var text: Substring
    }

    public var text: String

    public init(_ text: String) { self.text = text }

    public func makeIterator() -> Iterator { Iterator(text: text) }

    public struct Iterator: IteratorProtocol, Sendable {
        let text: String
        var position: String.Index
        var number = 0
        var finished = false

        init(text: String) {
            self.text = text
            position = text.startIndex
        }

        public mutating func next() -> Line? {
            guard !finished else { return nil }
            let utf8 = text.utf8
            var end = position
            while end < utf8.endIndex {
                let byte = utf8[end]
                if byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\r") { break }
                end = utf8.index(after: end)
            }
            number += 1
            let line = Line(number: number, text: text[position..<end])
            if end == utf8.endIndex {
                finished = true
                // A final line end ends the last line; it does not start an empty one.
                if line.text.isEmpty && number > 1 { return nil }
                return line
            }
            var next = utf8.index(after: end)
            if utf8[end] == UInt8(ascii: "\r"), next < utf8.endIndex, utf8[next] == UInt8(ascii: "\n") {
                next = utf8.index(after: next)
            }
            position = next
            return line
        }
    }

    /// A line as a message quotes it: whole when short, else its first `limit` characters and
    /// how long it was (a bad line of a 6 MB file is not echoed whole).
    public static func quoted(_ line: some StringProtocol, limit: Int = 80) -> String {
        guard line.count > limit else { return String(line) }
        return "\(line.prefix(limit))… (\(line.utf8.count) bytes)"
    }
}
