/// A row of the side-by-side table `fanout plan --verify` prints (`Verification.row`): a
/// figure's name, its predicted and measured values as printed, the gap, and the remarks after
/// it (`over 10%`, `not the plan's`).
public struct RehearsalRow: Sendable, Equatable, CustomStringConvertible {
    public var name: String
    public var predicted: String
    public var measured: String
    /// The gap as printed, `+9.0%`.
    public var gap: String
    public var remarks: [String]

    public init(name: String, predicted: String, measured: String, gap: String, remarks: [String]) {
        self.name = name
        self.predicted = predicted
        self.measured = measured
        self.gap = gap
        self.remarks = remarks
    }

    public var description: String { ([name, predicted, measured, gap] + remarks).joined(separator: " | ") }

    /// The rows of `text`, by name: every line whose columns past the name's 24 characters are a
    /// predicted figure, a measured one and a gap in percent, each two spaces or more apart.
    public static func rows(_ text: String) -> [String: RehearsalRow] {
        var rows: [String: RehearsalRow] = [:]
        for line in text.split(separator: "\n") where line.count > 24 {
            let name = String(line.prefix(24)).trimmingSpaces
            let columns = textColumns(line.dropFirst(24))
            guard !name.isEmpty, columns.count >= 3, columns[2].last == "%",
                columns[2].first == "+" || columns[2].first == "-"
            else { continue }
            rows[name] = RehearsalRow(
                name: name,
                predicted: columns[0],
                measured: columns[1],
                gap: columns[2],
                remarks: Array(columns.dropFirst(3))
            )
        }
        return rows
    }

}

extension String {
    fileprivate var trimmingSpaces: String {
        String(drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
    }
}
