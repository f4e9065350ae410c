import FanoutResults
import Foundation

/// The return wave (summary.json's `return_wave`, issue #63), beside the delivery curve: the
/// requests the devices offered the backend each second and those it answered, the knee marked
/// where its latency or errors rose, and each second's p50 and p99 latency from the due time.
extension HTMLReport {
    /// The colours of the wave's section (the render test looks for them).
    public enum ReturnWaveColour {
        public static let offered = "#9467bd"
        public static let answered = "#2ca02c"
        public static let errors = "#d62728"
        public static let p50 = "#1f77b4"
        public static let p99 = "#ff7f0e"
    }

    func returnWaveSection(_ wave: ReturnWaveSummary) -> String {
        var html = "<h2>The return wave</h2>\n"
        html += wave.lines.map { "<p class=\"note\">\(ChartFrame.escape($0))</p>\n" }.joined()
        guard !wave.seconds.isEmpty else { return html + "<p>Nothing was due at the backend.</p>\n" }
        html += "<h3>Requests per second at the backend</h3>\n" + returnRates(wave)
        html += "<h3>Latency from the due time, per second</h3>\n" + returnLatencies(wave)
        return html
    }

    /// Offered, answered and errors a second, over the seconds since the fan-out's start.
    private func returnRates(_ wave: ReturnWaveSummary) -> String {
        let seconds = wave.seconds
        let axis = timeAxis
        let xTop = axis.span
        let yTop = ChartFrame.niceCeiling(Double(seconds.map { max($0.offered, $0.answered) }.max() ?? 1))
        var svg =
            ChartFrame.open("return wave rates")
            + ChartFrame.yAxis(top: yTop, whole: true) { String(format: "%.0f/s", $0) }
        svg += axis.warmUpBand + axis.labels
        for (values, colour) in [
            (seconds.map(\.offered), ReturnWaveColour.offered), (seconds.map(\.answered), ReturnWaveColour.answered),
            (seconds.map(\.errors), ReturnWaveColour.errors),
        ] {
            svg += ChartFrame.line(
                values.enumerated().map { (Double($0) + 0.5, Double($1)) },
                xTop: xTop,
                yTop: yTop,
                colour: colour
            )
        }
        if let knee = wave.knee {
            let (x, _) = ChartFrame.position(Double(knee.second) + 0.5, 0, xTop: xTop, yTop: yTop)
            svg += ChartFrame.band(
                class: "knee",
                x: x - 2,
                width: 4,
                colour: ReturnWaveColour.errors,
                text: String(
                    format:
                        "knee: second %d, %.0f requests/s offered; the backend answers %.0f/s at most (its %@ rose in second %d)",
                    knee.second,
                    knee.offeredPerSecond,
                    knee.capacityPerSecond,
                    knee.cause,
                    knee.roseAt
                )
            )
        }
        svg += ChartFrame.legend(
            [
                ("offered", ReturnWaveColour.offered), ("answered", ReturnWaveColour.answered),
                ("errors", ReturnWaveColour.errors),
            ] + axis.legend
        )
        return svg + "</svg>\n"
    }

    /// Each second's p50 and p99 latency (ms) of the requests answered in it.
    private func returnLatencies(_ wave: ReturnWaveSummary) -> String {
        let seconds = wave.seconds
        let axis = timeAxis
        let xTop = axis.span
        let yTop = ChartFrame.niceCeiling(max(Double(seconds.map(\.p99Micros).max() ?? 0) / 1000, 1))
        var svg = ChartFrame.open("return wave latency") + ChartFrame.yAxis(top: yTop) { millisecondsWithUnit($0) }
        svg += axis.warmUpBand + axis.labels
        for (values, colour) in [
            (seconds.map(\.p50Micros), ReturnWaveColour.p50), (seconds.map(\.p99Micros), ReturnWaveColour.p99),
        ] {
            let points = zip(seconds, values).filter { $0.0.answered > 0 }.map {
                (Double($0.0.second) + 0.5, Double($0.1) / 1000)
            }
            svg += ChartFrame.line(points, xTop: xTop, yTop: yTop, colour: colour)
        }
        svg += ChartFrame.legend([("p50", ReturnWaveColour.p50), ("p99", ReturnWaveColour.p99)] + axis.legend)
        return svg + "</svg>\n"
    }
}
