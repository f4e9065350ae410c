import FanoutAPNs
import FanoutResults
import Foundation

/// report.html's chart of errors over time: each second's rejections (by APNs reason) and
/// failures (by cause) stacked, a colour a reason, from summary.json's intervals (schema 8).
extension HTMLReport {
    /// The reasons' colours, in the order the reasons are first met (rejections before failures).
    static let reasonPalette = [
        "#9467bd", "#d62728", "#ff7f0e", "#17becf", "#bcbd22", "#e377c2", "#8c564b", "#1f77b4", "#7f7f7f",
    ]

    /// One stacked series: `rejected Unregistered`, `failed Timeout`, with its count each second.
    struct OutcomeSeries {
        var name: String
        var colour: String
        var counts: [Int]
    }

    /// The series of the run's reasons, in the order of summary.json's whole-run counts (by
    /// name); `nil` when the intervals do not say (a folder written before schema 8, or a merge
    /// of shards one of which did not).
    func outcomeSeries() -> [OutcomeSeries]? {
        let intervals = summary.intervals
        guard !intervals.isEmpty, intervals.allSatisfy({ $0.rejected != nil && $0.failed != nil }) else { return nil }
        var names: [(name: String, count: (SummaryDocument.Interval) -> Int)] = []
        var rejected = Set<String>()
        var failed = Set<String>()
        for interval in intervals {
            rejected.formUnion(interval.rejected!.filter { $0.value > 0 }.map(\.key.rawValue))
            failed.formUnion(interval.failed!.filter { $0.value > 0 }.map(\.key.rawValue))
        }
        for reason in rejected.sorted() {
            names.append(("rejected \(reason)", { $0.rejected!.first { $0.key.rawValue == reason }?.value ?? 0 }))
        }
        for cause in failed.sorted() {
            names.append(("failed \(cause)", { $0.failed!.first { $0.key.rawValue == cause }?.value ?? 0 }))
        }
        return names.enumerated().map { index, series in
            OutcomeSeries(
                name: series.name,
                colour: Self.reasonPalette[index % Self.reasonPalette.count],
                counts: intervals.map(series.count)
            )
        }
    }

    /// The section: a stacked bar a second of what was rejected or failed in it, each segment's
    /// and each second's counts on hover; a sentence when nothing was, and the old note when the
    /// intervals do not keep reasons.
    func outcomesPerSecondSection() -> String {
        guard let series = outcomeSeries() else {
            return
                "<p class=\"note\">Outcomes are counted over the whole run: this summary.json (schema \(summary.schemaVersion)) keeps no count by reason per second, so there is no chart of errors over time.</p>\n"
        }
        var html = "<h2>Rejected and failed per second, by reason</h2>\n"
        guard !series.isEmpty else {
            return html + "<p class=\"note\">No notification was rejected or failed in any second.</p>\n"
        }
        let intervals = summary.intervals
        let totals = intervals.indices.map { index in series.reduce(0) { $0 + $1.counts[index] } }
        let top = ChartFrame.niceCeiling(Double(max(1, totals.max() ?? 1)))
        var svg =
            ChartFrame.open("rejected and failed per second")
            + ChartFrame.yAxis(top: top, whole: true) { grouped(Int($0)) }
        let axis = timeAxis
        svg += axis.warmUpBand
        let slot = axis.second
        for (index, interval) in intervals.enumerated() {
            let x = axis.x(Double(index))
            var base = 0
            var parts: [String] = []
            for line in series where line.counts[index] > 0 {
                let count = line.counts[index]
                let y = ChartFrame.top + ChartFrame.plotHeight * (1 - Double(base + count) / top)
                svg += String(
                    format:
                        "<rect class=\"outcome\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%@\"><title>%@</title></rect>",
                    x + slot * 0.1,
                    y,
                    slot * 0.8,
                    ChartFrame.plotHeight * Double(count) / top,
                    line.colour,
                    ChartFrame.escape("second \(interval.second): \(line.name) \(grouped(count))")
                )
                base += count
                parts.append("\(line.name) \(grouped(count))")
            }
            let listed = parts.joined(separator: ", ")
            let text =
                totals[index] == 0
                ? "second \(interval.second): none rejected or failed"
                : "second \(interval.second): \(grouped(totals[index])) rejected or failed (\(listed))"
            svg += ChartFrame.hover(x: x, width: slot, text: text)
        }
        svg += ChartFrame.legend(series.map { (name: $0.name, colour: $0.colour) } + axis.legend)
        svg += axis.labels
        html += svg + "</svg>\n"
        html +=
            "<p class=\"note\">Counted when the connections hand their counts over (every 256 outcomes, and at least once a second), so a few may fall in the second after their answer.</p>\n"
        return html
    }
}
