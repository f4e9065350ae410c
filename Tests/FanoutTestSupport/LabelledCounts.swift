/// The counts a console summary prints one a line, `label: 1,234` (the sink's counters,
/// indented or not), by label; a line whose value is not a whole number is left out, and the
/// first line of a label wins.
public func labelledCounts(_ text: String) -> [String: Int] {
    var counts: [String: Int] = [:]
    for line in text.split(separator: "\n") {
        guard let colon = line.lastIndex(of: ":") else { continue }
        let label = String(line[..<colon].drop { $0 == " " })
        let figure = line[line.index(after: colon)...].drop { $0 == " " }
        guard !label.isEmpty, !figure.isEmpty, figure.allSatisfy({ $0.isNumber || $0 == "," }),
            let value = Int(figure.filter(\.isNumber))
        else { continue }
        if counts[label] == nil { counts[label] = value }
    }
    return counts
}
