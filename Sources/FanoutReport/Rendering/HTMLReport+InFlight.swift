import FanoutResults
import Foundation

/// report.html's chart of what was in flight: at the end of each second, the notifications
/// sent without a final outcome (left axis) and the connections open or opening (right axis),
/// from summary.json's intervals (schema 8).
extension HTMLReport {
    /// The section, or a note when the intervals do not say (a folder written before schema 8).
    func inFlightSection() -> String {
        let intervals = summary.intervals
        let marked = intervals.filter { $0.inFlight != nil && $0.connections != nil }
        guard !marked.isEmpty else {
            return
                "<p class=\"note\">This summary.json keeps no count of what was in flight each second, so there is no chart of connections and notifications in flight.</p>\n"
        }
        let top = ChartFrame.niceCeiling(Double(max(1, marked.compactMap(\.inFlight).max() ?? 1)))
        let connectionsTop = ChartFrame.niceCeiling(Double(max(1, marked.compactMap(\.connections).max() ?? 1)))
        var svg =
            ChartFrame.open("connections and notifications in flight")
            + ChartFrame.yAxis(top: top, whole: true) { grouped(Int($0)) }
        for value in ChartFrame.ticks(upTo: connectionsTop, whole: true) {
            let y = ChartFrame.top + ChartFrame.plotHeight * (1 - value / connectionsTop)
            svg += String(
                format: "<text class=\"right-axis\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"start\">%@</text>",
                ChartFrame.width - ChartFrame.right + 4,
                y + 4,
                grouped(Int(value))
            )
        }
        let axis = timeAxis
        svg += axis.warmUpBand
        let slot = axis.second
        let lines: [(name: String, value: (SummaryDocument.Interval) -> Int?, top: Double, colour: String)] = [
            ("in flight", \.inFlight, top, Colour.inFlight),
            ("connections (right axis)", \.connections, connectionsTop, Colour.connections),
        ]
        for line in lines {
            // A point at each second's end; a second not marked breaks the line.
            var runs: [[String]] = [[]]
            for (index, interval) in intervals.enumerated() {
                guard let value = line.value(interval) else {
                    if !(runs.last?.isEmpty ?? true) { runs.append([]) }
                    continue
                }
                runs[runs.count - 1].append(
                    String(
                        format: "%.1f,%.1f",
                        axis.x(Double(index + 1)),
                        ChartFrame.top + ChartFrame.plotHeight * (1 - Double(value) / line.top)
                    )
                )
            }
            let name = line.name == "in flight" ? "in-flight" : "connections"
            for run in runs where !run.isEmpty {
                let points = run.count == 1 ? [run[0], run[0]] : run
                svg +=
                    "<polyline class=\"\(name)\" fill=\"none\" stroke=\"\(line.colour)\" stroke-width=\"2.5\" stroke-linecap=\"round\" points=\"\(points.joined(separator: " "))\"/>"
            }
        }
        for (index, interval) in intervals.enumerated() {
            let text =
                if let inFlight = interval.inFlight, let connections = interval.connections {
                    "end of second \(interval.second): \(grouped(inFlight)) in flight on \(grouped(connections)) connection\(connections == 1 ? "" : "s")"
                } else {
                    "end of second \(interval.second): not recorded (the run's last second)"
                }
            svg += ChartFrame.hover(x: axis.x(Double(index)), width: slot, text: text)
        }
        svg += ChartFrame.legend(lines.map { (name: $0.name, colour: $0.colour) } + axis.legend)
        svg += axis.labels
        return "<h2>Connections and notifications in flight</h2>\n" + svg + "</svg>\n"
            + "<p class=\"note\">At each second's end: notifications sent without a final outcome yet (as the connections last handed their counts over, at least once a second), and connections open or opening.</p>\n"
    }
}
