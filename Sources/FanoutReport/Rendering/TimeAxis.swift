import Foundation

/// The one time axis of a run's charts: seconds from the run's start, 0 at the plot's left edge
/// and the last recorded second's end at its right, whole seconds labelled at a round step (1,
/// 2, 5, 10 … s, ten labels at most) with a grid line each, the warm-up shaded. Every chart of
/// time on a run's page draws on it — seconds, 100 ms bins, points at a second's end — so a
/// moment is at the same x on all of them.
///
/// ```
///   ┌─────────┬─────────┬─────────┬──────┐
///   │▒warm-up▒│         │         │      │
///   └─────────┴─────────┴─────────┴──────┘
///   0 s       1 s       2 s       3 s
///                 seconds from the run's start
/// ```
struct TimeAxis {
    /// The seconds drawn: every recorded second (the last one may be partial).
    var span: Double
    /// The warm-up, seconds from the start; 0 for none.
    var warmUp: Double

    init(span: Double, warmUp: Double) {
        self.span = max(span, 1)
        self.warmUp = min(max(warmUp, 0), self.span)
    }

    /// Where `seconds` from the start are drawn.
    func x(_ seconds: Double) -> Double { ChartFrame.left + ChartFrame.plotWidth * seconds / span }

    /// One second's width.
    var second: Double { ChartFrame.plotWidth / span }

    /// Seconds between labels: 1, 2 or 5 times a power of ten, ten labels at most.
    var step: Double { max(1, ChartFrame.niceCeiling(span / 10)) }

    /// The labels and their grid lines, and the axis's title.
    var labels: String {
        var svg = ""
        var value = 0.0
        while value <= span + 1e-9 {
            let x = x(value)
            svg +=
                "<line class=\"time-grid\" x1=\"\(x)\" x2=\"\(x)\" y1=\"\(ChartFrame.top)\" y2=\"\(ChartFrame.top + ChartFrame.plotHeight)\" stroke=\"#e4e4e4\"/>"
            svg +=
                "<text x=\"\(x)\" y=\"\(ChartFrame.height - 22)\" text-anchor=\"middle\">\(HTMLReport.seconds(value))</text>"
            value += step
        }
        return svg
            + "<text x=\"\(ChartFrame.width / 2)\" y=\"\(ChartFrame.height - 5)\" text-anchor=\"middle\">seconds from the run's start</text>"
    }

    /// The warm-up's band (class `warm-up`), or nothing without one.
    var warmUpBand: String {
        guard warmUp > 0 else { return "" }
        return ChartFrame.band(
            class: "warm-up",
            x: x(0),
            width: second * warmUp,
            colour: HTMLReport.Colour.warmUp,
            text: "warm-up: notifications started in the first \(HTMLReport.seconds(warmUp)) are not measured"
        )
    }

    /// The warm-up's key for a chart's legend, when there is one.
    var legend: [(name: String, colour: String)] {
        warmUp > 0 ? [(name: "warm-up (not measured)", colour: HTMLReport.Colour.warmUp)] : []
    }
}

extension HTMLReport {
    /// The page's time axis: the run's recorded seconds (and the return wave's, which count from
    /// the same start), its warm-up.
    var timeAxis: TimeAxis {
        TimeAxis(
            span: Double(max(summary.intervals.count, summary.returnWave?.seconds.count ?? 0)),
            warmUp: summary.warmUpSeconds
        )
    }
}
