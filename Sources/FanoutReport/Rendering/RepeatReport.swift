import FanoutResults
import Foundation

/// `report.html` at the top of a `--repeat N` folder: the repeats side by side, a bar each in a
/// chart a metric with the median dashed across, and a table of every repeat's figures, so that
/// the spread `fanout run` prints can be seen (and an outlier named by its folder).
///
/// ```
///   throughput ▲ ┌──┐      ┌──┐
///              │ │  │┌──┐ │  │┌──┐   - - - median
///              │ │  ││  │ │  ││  │
///              └─ 1 ─ 2 ── 3 ─ 4 ──► repeat
/// ```
public struct RepeatReport: Sendable {
    /// The repeats, as `fanout gate` reads them (their medians, each one's validity).
    public var set: RunSet

    /// The page of `set`.
    public init(set: RunSet) {
        self.set = set
    }

    /// The page's name in the set's folder, beside the repeats' own folders.
    public static let fileName = "report.html"

    /// The metrics charted, each with how its value reads.
    static let metrics: [(metric: RunMetric, title: String)] = [
        (.throughput, "Throughput"), (.p50, "p50"), (.p99, "p99"), (.max, "max"),
    ]

    /// The colours the charts draw with.
    public enum Colour {
        public static let valid = HTMLReport.Colour.throughput
        public static let invalid = HTMLReport.Colour.failed
        public static let median = "#222222"
    }

    static func format(_ value: Double, _ metric: RunMetric) -> String {
        metric == .throughput ? grouped(Int(value.rounded())) + "/s" : millisecondsWithUnit(value)
    }

    /// The page: a chart a metric with a bar a repeat and the median across, then a table of
    /// every repeat; self-contained (no script, no outside file).
    public var html: String {
        let runs = set.runs
        var body = "<h1>Fanout repeats: \(runs.count) runs side by side</h1>\n"
        body += "<p>\(ChartFrame.escape(set.directory))</p>\n"
        body += set.invalidReasons.map { "<p class=\"invalid\">INVALID: \(ChartFrame.escape($0.description))</p>\n" }
            .joined()
        body += "<pre>\(ChartFrame.escape(set.spreadText))</pre>\n"
        for (metric, title) in Self.metrics where set.measures(metric) {
            body += "<h2>\(title) by repeat</h2>\n" + chart(metric)
        }
        body += "<h2>Every repeat</h2>\n<table><tr><th>repeat</th><th>valid</th>"
        let columns: [RunMetric] = [.throughput, .p50, .p90, .p99, .p99_9, .max]
        body += columns.map { "<th>\($0.rawValue)</th>" }.joined() + "<th>errors</th><th>why not valid</th></tr>"
        for run in runs {
            let cells =
                [(run.directory as NSString).lastPathComponent, run.valid ? "yes" : "NO"]
                + columns.map { metric in run.metrics[metric].map { Self.format($0, metric) } ?? "—" }
                + [
                    grouped(Int(run.metrics[.errors] ?? 0)),
                    run.invalidReasons.map(\.description).joined(separator: "; "),
                ]
            body += "<tr>" + cells.map { "<td>\(ChartFrame.escape($0))</td>" }.joined() + "</tr>"
        }
        body += "</table>\n"
        return ChartFrame.page(title: "Fanout repeats: \(set.directory)", body: body)
    }

    /// A bar a repeat (red when it is invalid), the median as a dashed line (class `median`).
    private func chart(_ metric: RunMetric) -> String {
        let runs = set.runs
        let values = runs.map { $0.metrics[metric] ?? 0 }
        let median = set.median(metric)
        let top = ChartFrame.niceCeiling(values.max() ?? 1)
        let formatter = { (value: Double) in Self.format(value, metric) }
        var svg = ChartFrame.open("\(metric.rawValue) by repeat") + ChartFrame.yAxis(top: top, format: formatter)
        let slot = ChartFrame.plotWidth / Double(runs.count)
        for (index, run) in runs.enumerated() {
            let height = ChartFrame.plotHeight * values[index] / top
            let name = (run.directory as NSString).lastPathComponent
            svg += String(
                format:
                    "<rect class=\"repeat\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%@\"><title>%@</title></rect>",
                ChartFrame.left + slot * (Double(index) + 0.15),
                ChartFrame.top + ChartFrame.plotHeight - height,
                slot * 0.7,
                height,
                run.valid ? Colour.valid : Colour.invalid,
                ChartFrame.escape("\(name): \(metric.rawValue) \(Self.format(values[index], metric))")
            )
            svg +=
                "<text x=\"\(ChartFrame.left + slot * (Double(index) + 0.5))\" y=\"\(ChartFrame.height - 22)\" text-anchor=\"middle\">\(ChartFrame.escape(name))</text>"
        }
        let y = ChartFrame.top + ChartFrame.plotHeight * (1 - median / top)
        svg += ChartFrame.dashedLine(
            class: "median",
            y: y,
            colour: Colour.median,
            title: "median \(Self.format(median, metric))"
        )
        svg += ChartFrame.legend([("repeat", Colour.valid), ("median " + Self.format(median, metric), Colour.median)])
        return svg + "</svg>\n"
    }

    /// Writes `report.html` into the set's folder.
    public func write() throws {
        try Data(html.utf8).write(to: URL(fileURLWithPath: set.directory + "/" + Self.fileName))
    }
}
