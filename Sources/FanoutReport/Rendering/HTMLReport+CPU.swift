import FanoutResults
import Foundation

/// report.html's chart of the sender's CPU: each second's CPU time of its event-loop threads,
/// as cores busy (CPU seconds a second), with the CPU a notification on hover, from
/// summary.json's intervals (schema 8).
extension HTMLReport {
    /// The section, or nothing when the intervals do not say (a folder written before schema 8).
    func cpuSection() -> String {
        let intervals = summary.intervals
        guard !intervals.isEmpty, intervals.contains(where: { $0.cpu != nil }) else { return "" }
        // Cores busy: CPU ms in the second over its length in ms.
        let cores = intervals.map { interval in interval.cpu.map { $0 / 1000 / length(of: interval) } }
        let top = ChartFrame.niceCeiling(max(0.01, cores.compactMap { $0 }.max() ?? 0.01))
        var svg =
            ChartFrame.open("sender CPU per second")
            + ChartFrame.yAxis(top: top) { String(format: "%.2f", $0) }
        let axis = timeAxis
        svg += axis.warmUpBand
        let slot = axis.second
        for (index, interval) in intervals.enumerated() {
            let x = axis.x(Double(index))
            guard let cpu = interval.cpu, let busy = cores[index] else {
                svg += ChartFrame.hover(x: x, width: slot, text: "second \(interval.second): CPU not measured")
                continue
            }
            let height = ChartFrame.plotHeight * min(1, busy / top)
            let length = length(of: interval)
            svg += String(
                format: "<rect class=\"cpu\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%@\"/>",
                x + slot * 0.1 * length,
                ChartFrame.top + ChartFrame.plotHeight - height,
                slot * 0.8 * length,
                height,
                Colour.cpu
            )
            var text = String(format: "second %d: %.1f ms of CPU (%.2f cores)", interval.second, cpu, busy)
            if interval.completed > 0 {
                text += String(format: ", %.2f µs a notification finished", cpu * 1000 / Double(interval.completed))
            }
            svg += ChartFrame.hover(x: x, width: slot * length, text: text)
        }
        svg += ChartFrame.legend([(name: "sender's event loops (cores busy)", colour: Colour.cpu)] + axis.legend)
        svg += axis.labels
        return "<h2>Sender CPU per second</h2>\n" + svg + "</svg>\n"
            + "<p class=\"note\">Each event loop reads its thread's CPU clock when it hands a second over (up to 250 ms after the second ends), so a second's CPU may hold a little of the next.</p>\n"
    }
}
