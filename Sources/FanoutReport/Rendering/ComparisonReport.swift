import FanoutResults
import Foundation

/// `fanout compare --report FILE`: the comparison as one self-contained page — the change of
/// each metric as a dot, what is known of it (its 95% interval, or the change ± the noise) as a
/// bar, the band within `--min-effect` shaded, the verdict in its colour; then the table
/// `compare` prints, and the warnings.
///
/// ```
///              −10%   −5%    0    +5%   +10%
///   throughput          ░░░░░│░░●━━━━━━┥      better
///   p99          ┝━━━●━━░░░░░│░░░░░           within noise
/// ```
public struct ComparisonReport: Sendable {
    /// What `fanout compare` printed, as figures.
    public var comparison: RunComparison

    /// The page of `comparison`.
    public init(comparison: RunComparison) {
        self.comparison = comparison
    }

    /// The colours the chart draws with.
    public enum Colour {
        public static let worse = HTMLReport.Colour.failed
        public static let better = HTMLReport.Colour.throughput
        public static let neutral = "#7f7f7f"
        public static let band = "#bbbbbb"
    }

    static func format(_ value: Double, _ metric: RunMetric) -> String {
        switch metric {
        case .throughput: grouped(Int(value.rounded())) + "/s"
        case .errors, .sent, .accepted, .failed, .rejected: grouped(Int(value))
        default: millisecondsWithUnit(value)
        }
    }

    /// The page: each metric's change as a dot with its interval, against the --min-effect
    /// band, its verdict beside it, and an invalid side said; self-contained.
    public var html: String {
        let comparison = comparison
        var body = "<h1>Fanout compare</h1>\n"
        body +=
            "<p>baseline: \(ChartFrame.escape(comparison.baseline.directory)) (\(comparison.baseline.runs.count) run\(comparison.baseline.runs.count == 1 ? "" : "s")); current: \(ChartFrame.escape(comparison.current.directory)) (\(comparison.current.runs.count) run\(comparison.current.runs.count == 1 ? "" : "s"))</p>\n"
        for (name, set) in [("baseline", comparison.baseline), ("current", comparison.current)] where !set.valid {
            body += set.invalidReasons.map {
                "<p class=\"invalid\">INVALID \(name): \(ChartFrame.escape($0.description)) (no verdict stands)</p>\n"
            }.joined()
        }
        body += comparison.differences.map {
            "<p class=\"invalid\">WARNING the sides differ in \(ChartFrame.escape($0))</p>\n"
        }.joined()
        body += "<h2>Change by metric</h2>\n" + chart()
        body += "<h2>Table</h2>\n<table><tr><th>metric</th><th>baseline</th><th>current</th><th>change</th>"
        body += "<th>noise</th><th>95% interval</th><th>verdict</th></tr>"
        for row in comparison.rows {
            let cells = [
                row.metric.rawValue, Self.format(row.baseline, row.metric), Self.format(row.current, row.metric),
                row.change.map { String(format: "%+.1f%%", $0 * 100) } ?? "-",
                row.noise.map { String(format: "±%.1f%%", $0 * 100) } ?? "-",
                row.interval.map { String(format: "%+.1f%% … %+.1f%%", $0.lowerBound * 100, $0.upperBound * 100) }
                    ?? "-",
                row.verdictText,
            ]
            body += "<tr>" + cells.map { "<td>\(ChartFrame.escape($0))</td>" }.joined() + "</tr>"
        }
        body += "</table>\n"
        return ChartFrame.page(title: "Fanout compare", body: body)
    }

    /// A row a metric with a relative change: x is the change (symmetric around 0, wide enough
    /// for every known range and twice `--min-effect`).
    private func chart() -> String {
        let rows = comparison.rows.filter { $0.change != nil }
        guard !rows.isEmpty else { return "<p>No metric has a relative change (every baseline is 0).</p>\n" }
        let effect = comparison.minimumEffect
        let widest =
            rows.flatMap { row -> [Double] in
                let known = row.known ?? (row.change!...row.change!)
                return [abs(known.lowerBound), abs(known.upperBound)]
            }.max() ?? 0
        let span = ChartFrame.niceCeiling(max(2 * effect, widest) * 100) / 100
        let left = 110.0
        let right = ChartFrame.width - 260
        let rowHeight = 30.0
        let height = rowHeight * Double(rows.count) + 40
        func x(_ change: Double) -> Double { left + (right - left) * (change + span) / (2 * span) }
        var svg =
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"\(Int(ChartFrame.width))\" height=\"\(Int(height))\" role=\"img\" aria-label=\"change by metric\">"
        svg += String(
            format:
                "<rect class=\"min-effect\" x=\"%.1f\" y=\"5\" width=\"%.1f\" height=\"%.1f\" fill=\"%@\" opacity=\"0.3\"><title>within ±%g%%: --min-effect</title></rect>",
            x(-effect),
            x(effect) - x(-effect),
            height - 35,
            Colour.band,
            effect * 100
        )
        for step in -2...2 {
            let value = span * Double(step) / 2
            svg +=
                "<line x1=\"\(x(value))\" x2=\"\(x(value))\" y1=\"5\" y2=\"\(height - 30)\" stroke=\"\(step == 0 ? "#888" : "#e4e4e4")\"/>"
            svg +=
                "<text x=\"\(x(value))\" y=\"\(height - 15)\" text-anchor=\"middle\">\(String(format: "%+g%%", value * 100))</text>"
        }
        for (index, row) in rows.enumerated() {
            let y = 5 + rowHeight * (Double(index) + 0.5)
            let colour =
                switch row.verdict {
                case .worse: Colour.worse
                case .better: Colour.better
                case .same, .withinNoise: Colour.neutral
                }
            let change = row.change!
            svg += "<text x=\"\(left - 10)\" y=\"\(y + 4)\" text-anchor=\"end\">\(row.metric.rawValue)</text>"
            if let known = row.known {
                svg += String(
                    format:
                        "<line class=\"known\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"%@\" stroke-width=\"3\"/>",
                    x(known.lowerBound),
                    x(known.upperBound),
                    y,
                    y,
                    colour
                )
            }
            let tip =
                "\(row.metric.rawValue): \(Self.format(row.baseline, row.metric)) → \(Self.format(row.current, row.metric)), "
                + String(format: "%+.1f%%", change * 100) + "; \(row.verdictText)"
            svg += String(
                format:
                    "<circle class=\"change\" cx=\"%.1f\" cy=\"%.1f\" r=\"5\" fill=\"%@\"><title>%@</title></circle>",
                x(change),
                y,
                colour,
                ChartFrame.escape(tip)
            )
            svg +=
                "<text x=\"\(right + 12)\" y=\"\(y + 4)\" fill=\"\(colour)\">\(ChartFrame.escape(row.verdictText))</text>"
        }
        return svg + "</svg>\n"
    }

    /// Writes the page to `path`.
    public func write(to path: String) throws {
        try Data(html.utf8).write(to: URL(fileURLWithPath: path))
    }
}
