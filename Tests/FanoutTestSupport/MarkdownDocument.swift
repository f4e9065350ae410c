import Foundation

/// A Markdown page (summary.md and its kin) read into its blocks, for a test to compare a
/// table's cells, a list's items or a line by what it is rather than search the text. It reads
/// what Fanout writes — headings, one-line paragraphs, `- ` lists and pipe tables — and no more.
public struct MarkdownDocument: Sendable, CustomStringConvertible {
    /// A pipe table: its header's cells and its rows' cells, trimmed, the alignment row left out.
    public struct Table: Sendable, Equatable, CustomStringConvertible {
        public var header: [String]
        public var rows: [[String]]

        /// The first row whose first cell is `name`.
        public func row(_ name: String) -> [String]? {
            rows.first { $0.first == name }
        }

        /// The rows as first cell → second cell (the `| outcome | count |` kind of table).
        public var pairs: [String: String] {
            Dictionary(
                rows.compactMap { $0.count >= 2 ? ($0[0], $0[1]) : nil },
                uniquingKeysWith: { first, _ in first }
            )
        }

        public var description: String { ([header] + rows).map { $0.joined(separator: " | ") }.joined(separator: "\n") }
    }

    /// Headings' text without the `#`s, in order.
    public var headings: [String] = []
    /// Lines that are not a heading, a list item or a table row, in order.
    public var lines: [String] = []
    /// List items' text without the `- `, in order.
    public var items: [String] = []
    public var tables: [Table] = []

    public init(_ text: String) {
        var table: Table?
        for raw in text.split(separator: "\n", omittingEmptySubsequences: false) {
            let line = String(raw)
            if line.hasPrefix("|") {
                let cells = Self.cells(line)
                if table == nil {
                    table = Table(header: cells, rows: [])
                } else if !cells.allSatisfy({ cell in !cell.isEmpty && cell.allSatisfy { $0 == "-" || $0 == ":" } }) {
                    table?.rows.append(cells)
                }
                continue
            }
            if let finished = table {
                tables.append(finished)
                table = nil
            }
            if line.hasPrefix("#") {
                headings.append(String(line.drop { $0 == "#" }.drop { $0 == " " }))
            } else if line.hasPrefix("- ") {
                items.append(String(line.dropFirst(2)))
            } else if !line.isEmpty {
                lines.append(line)
            }
        }
        if let table { tables.append(table) }
    }

    /// The first table whose header's first cell is `name`.
    public func table(_ name: String) -> Table? {
        tables.first { $0.header.first == name }
    }

    public var description: String {
        (headings.map { "# " + $0 } + lines + items.map { "- " + $0 } + tables.map(\.description)).joined(
            separator: "\n"
        )
    }

    static func cells(_ line: String) -> [String] {
        var parts = line.split(separator: "|", omittingEmptySubsequences: false).map {
            $0.trimmingCharacters(in: .whitespaces)
        }
        if parts.first == "" { parts.removeFirst() }
        if parts.last == "" { parts.removeLast() }
        return parts
    }
}
