import FanoutResults

extension Gate.Outcome {
    /// `fanout gate --report FILE`: the verdicts as one self-contained page — the status, a row a
    /// threshold with the measured value as a bar and the limit as a mark on the same scale
    /// (green when it holds, red when not; "not measured" when the run has no such figure), the
    /// lines the gate printed, and why the run cannot pass when it is invalid.
    public func html(run directory: String) -> String {
        let title: String =
            switch status {
            case .passed: "passed"
            case .failed: "FAILED"
            case .invalid: "INVALID"
            case .usage: "not run"
            }
        var body = "<h1>Fanout gate: \(title)</h1>\n<p>\(ChartFrame.escape(directory))</p>\n"
        if let thresholdsFile {
            body += "<p>thresholds: \(ChartFrame.escape(thresholdsFile.description))</p>\n"
        }
        body += invalidReasons.map { "<p class=\"invalid\">INVALID \(ChartFrame.escape($0.description))</p>\n" }
            .joined()
        let rowHeight = 30.0
        let height = rowHeight * Double(verdicts.count) + 10
        let left = 260.0
        let barWidth = 460.0
        var svg =
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"\(Int(ChartFrame.width))\" height=\"\(Int(height))\" role=\"img\" aria-label=\"verdicts\">"
        for (index, verdict) in verdicts.enumerated() {
            let y = 5 + rowHeight * Double(index)
            let colour = verdict.passed ? HTMLReport.Colour.accepted : HTMLReport.Colour.failed
            let tip =
                "\(verdict.threshold.text): measured \(verdict.format(verdict.measured)), limit \(verdict.format(verdict.limit)), \(verdict.passed ? "pass" : "FAIL")"
            svg +=
                "<text x=\"\(left - 10)\" y=\"\(y + 15)\" text-anchor=\"end\">\(ChartFrame.escape(verdict.threshold.text))</text>"
            // Each row on its own scale: 0 to a little past the larger of the two.
            let known = [verdict.measured, verdict.limit].filter { $0.isFinite && $0 >= 0 }
            let top = ChartFrame.niceCeiling((known.max() ?? 0) * 1.1)
            if verdict.measured.isFinite && verdict.measured >= 0 {
                svg += String(
                    format:
                        "<rect class=\"measured\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"14\" fill=\"%@\"><title>%@</title></rect>",
                    left,
                    y + 4,
                    max(1, barWidth * verdict.measured / top),
                    colour,
                    ChartFrame.escape(tip)
                )
            }
            if verdict.limit.isFinite && verdict.limit >= 0 {
                let x = left + barWidth * verdict.limit / top
                svg += String(
                    format:
                        "<line class=\"limit\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#222\" stroke-width=\"2.5\"><title>limit %@</title></line>",
                    x,
                    x,
                    y,
                    y + 22,
                    ChartFrame.escape(verdict.format(verdict.limit))
                )
            }
            let verdictText =
                "\(verdict.format(verdict.measured)) (limit \(verdict.format(verdict.limit))) \(verdict.passed ? "pass" : "FAIL")"
            svg +=
                "<text x=\"\(left + barWidth + 12)\" y=\"\(y + 15)\" fill=\"\(colour)\">\(ChartFrame.escape(verdictText))</text>"
        }
        body += "<h2>Thresholds</h2>\n" + svg + "</svg>\n"
        body += "<h2>What the gate printed</h2>\n<pre>\(ChartFrame.escape(text))</pre>\n"
        return ChartFrame.page(title: "Fanout gate: \(title)", body: body)
    }
}
