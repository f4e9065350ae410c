/// The cells of a line of a table laid out in columns for a terminal: the parts of `text` two
/// spaces or more apart (a cell may hold single spaces).
public func textColumns(_ text: some StringProtocol) -> [String] {
    var columns: [String] = []
    var current = ""
    var spaces = 0
    for character in text {
        if character == " " {
            spaces += 1
            continue
        }
        if spaces >= 2, !current.isEmpty {
            columns.append(current)
            current = ""
        } else if spaces == 1, !current.isEmpty {
            current.append(" ")
        }
        spaces = 0
        current.append(character)
    }
    if !current.isEmpty { columns.append(current) }
    return columns
}

/// The table rows of `text` laid out in columns (`textColumns`), by their first cell: the first
/// row of each name.
public func textRows(_ text: String) -> [String: [String]] {
    var rows: [String: [String]] = [:]
    for line in text.split(separator: "\n") {
        let cells = textColumns(line)
        if let name = cells.first, rows[name] == nil { rows[name] = cells }
    }
    return rows
}
