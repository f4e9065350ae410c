import FanoutResults
import Foundation

/// The marks of the rate charts, per second (`rateChart`) and in sub-second bins
/// (`fineRateChart`): one way to draw a bar a slot and the schedule's offered steps.
extension HTMLReport {
    /// The rate axis's top: the highest rate or offer, but a slot run for under a tenth of its
    /// length (a last second of a few milliseconds: 10 answers in 2 ms read 5,000/s) has a rate
    /// of little weight and does not set it; its bar is cut at the top.
    static func rateTop(_ rates: [Double], shares: [Double], offered: [Double]?) -> Double {
        let weighty = rates.indices.filter { shares[$0] >= 0.1 }.map { rates[$0] }
        return ChartFrame.niceCeiling(max((weighty.isEmpty ? rates : weighty).max() ?? 1, offered?.max() ?? 0))
    }

    /// A rate chart's marks, one slot each: a bar of `rates[i]`, `shares[i]` of its slot wide
    /// (the share of the slot's time the run lasted), hovered with `tips[i]`; and, with
    /// `offered`, the schedule's rate as a dashed step over each slot's run time. Slot `i`
    /// begins `i × slotSeconds` from the run's start, on the page's time axis.
    func rateBars(
        _ rates: [Double],
        shares: [Double],
        tips: [String],
        offered: [Double]?,
        top: Double,
        barClass: String,
        slotSeconds: Double,
        axis: TimeAxis
    ) -> String {
        let slot = axis.second * slotSeconds
        var svg = ""
        for index in rates.indices {
            let share = shares[index]
            let height = ChartFrame.plotHeight * min(1, rates[index] / top)
            let x = axis.x(Double(index) * slotSeconds)
            svg += String(
                format: "<rect class=\"%@\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%@\"/>",
                barClass,
                x + slot * 0.1 * share,
                ChartFrame.top + ChartFrame.plotHeight - height,
                slot * 0.8 * share,
                height,
                Colour.throughput
            )
            svg += ChartFrame.hover(x: x, width: slot * share, text: tips[index])
        }
        if let offered {
            let points = rates.indices.map { index in
                let y = ChartFrame.top + ChartFrame.plotHeight * (1 - offered[index] / top)
                let x = axis.x(Double(index) * slotSeconds)
                return String(format: "%.1f,%.1f %.1f,%.1f", x, y, x + slot * shares[index], y)
            }
            svg +=
                "<polyline class=\"offered\" fill=\"none\" stroke=\"\(Colour.offered)\" stroke-width=\"2.5\" stroke-dasharray=\"6 4\" points=\"\(points.joined(separator: " "))\"/>"
        }
        return svg
    }
}
