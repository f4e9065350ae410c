import FanoutResults
import Foundation

// MARK: What finished, in 100 ms bins for a short run

extension HTMLReport {
    /// The run's `fine_intervals` when the throughput chart draws them: a run of 10 s or less
    /// (a longer one has enough seconds, and no bins).
    var drawnFineBins: SummaryDocument.FineIntervals? {
        guard let fine = summary.fineIntervals, !fine.completed.isEmpty, fine.binMilliseconds > 0,
            summary.elapsedSeconds <= SummaryDocument.FineIntervals.longestRun
        else { return nil }
        return fine
    }

    /// "Achieved per second" (beside the offered rate in the open model): in 100 ms bins for a
    /// short run that has them, else a bar a second.
    func throughputSection(_ intervals: [SummaryDocument.Interval]) -> String {
        let open = summary.schedule != nil
        let heading = "\(open ? "Offered and achieved" : "Achieved") per second"
        guard let fine = drawnFineBins else {
            return "<h2>\(heading)</h2>\n" + rateChart(intervals, offered: offeredPerSecond(), noun: "finished")
        }
        return "<h2>\(heading), in \(fine.binMilliseconds) ms bins</h2>\n" + fineRateChart(fine)
    }

    /// Each bin's length, seconds: the bin's, but the last one ends with the run (a bin filed
    /// after the run's end, which the bins keep, leaves the one before it whole).
    func length(ofBin bin: Int, in fine: SummaryDocument.FineIntervals) -> Double {
        guard bin == fine.completed.count - 1 else { return fine.binSeconds }
        let left = summary.elapsedSeconds - Double(bin) * fine.binSeconds
        return left > 0 && left < fine.binSeconds ? left : fine.binSeconds
    }

    /// Bars: what finished in each bin, as a rate per second (count ÷ the bin's length, so 100
    /// in 100 ms reads 1,000/s and the axis is the per-second chart's); the last, partial bin as
    /// narrow as it was long. A line: what the schedule offered over each bin, when it did.
    ///
    /// ```
    ///   /s │      ▆▆ ▇▇ ▇▇ ▆▆
    ///      │   ▃▃ ██ ██ ██ ██ ▅▅ ▂
    ///      └──────────────────────── seconds from the run's start (the page's one time axis)
    ///       0 s            1 s
    /// ```
    func fineRateChart(_ fine: SummaryDocument.FineIntervals) -> String {
        let bins = fine.completed.indices
        let lengths = bins.map { length(ofBin: $0, in: fine) }
        let shares = lengths.map { $0 / fine.binSeconds }
        let rates = bins.map { Double(fine.completed[$0]) / lengths[$0] }
        let offered = offered(over: bins.map { (from: Double($0) * fine.binSeconds, length: lengths[$0]) })
        let tips = bins.map { bin in
            let from = Double(bin) * fine.binSeconds
            var tip =
                shares[bin] < 1
                ? String(format: "%.1f–%.3f s (the last bin): ", from, from + lengths[bin])
                : String(format: "%.1f–%.1f s: ", from, from + lengths[bin])
            tip += "\(grouped(fine.completed[bin])) finished (\(grouped(Int(rates[bin].rounded())))/s)"
            if let offered { tip += "; offered \(grouped(Int(offered[bin].rounded())))/s" }
            return tip
        }
        let top = Self.rateTop(rates, shares: shares, offered: offered)
        let axis = timeAxis
        var svg =
            ChartFrame.open("finished per second, in \(fine.binMilliseconds) ms bins")
            + ChartFrame.yAxis(top: top, whole: true) { grouped(Int($0)) + "/s" }
        svg += axis.warmUpBand
        svg += rateBars(
            rates,
            shares: shares,
            tips: tips,
            offered: offered,
            top: top,
            barClass: "achieved fine",
            slotSeconds: fine.binSeconds,
            axis: axis
        )
        var legend = [(name: "finished (\(fine.binMilliseconds) ms bins)", colour: Colour.throughput)]
        if offered != nil { legend.append((name: "offered (the schedule)", colour: Colour.offered)) }
        svg += ChartFrame.legend(legend + axis.legend) + axis.labels
        return svg + "</svg>\n"
    }
}
