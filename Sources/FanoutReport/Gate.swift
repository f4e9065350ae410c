import FanoutSettings

/// `fanout gate`: a run (or its repeats' medians) against thresholds, with exit statuses CI
/// can act on.
public struct Gate: Sendable {
    /// The exit statuses, as documented in `fanout gate --help` and the README.
    public enum Status: Int32, Sendable {
        case passed = 0
        case failed = 1
        /// The run (or the baseline) cannot be trusted: generator lag, disagreement with the
        /// sink, stopped early. It never passes, whatever the thresholds say.
        case invalid = 2
        /// Bad options, a threshold that cannot be read, a folder that is not a run.
        case usage = 64
    }

    public var run: RunSet
    public var baseline: RunSet?
    public var thresholds: [Threshold]
    /// The thresholds file that applied, said with its content hash.
    public var thresholdsFile: FileUse?

    /// Loads the folders and parses the thresholds; every problem is said with where it is.
    public init(run: String, baseline: String?, thresholds: [String], file: String?) throws(GateError) {
        do {
            self.run = try RunSet.load(run)
            self.baseline = try baseline.map { path throws(ResultsError) in try RunSet.load(path) }
        } catch {
            throw GateError(error.description)
        }
        var parsed: [Threshold] = []
        do {
            if let file {
                let read = try Threshold.read(file: file)
                parsed += read.thresholds
                thresholdsFile = read.file
            }
            for text in thresholds { parsed.append(try Threshold(parsing: text)) }
        } catch {
            throw GateError(error.description)
        }
        guard !parsed.isEmpty else { throw GateError("no threshold: give --threshold EXPR or --thresholds FILE") }
        let folders = [self.run] + (self.baseline.map { [$0] } ?? [])
        if let needing = parsed.first(where: \.metric.needsSinkFolder),
            let folder = folders.first(where: { $0.runs.contains { $0.metrics[needing.metric] == nil } })
        {
            throw GateError(
                "\(needing.text): \(needing.metric.rawValue) is measured by fanout sink --output; \(folder.directory) is not a sink's folder"
            )
        }
        if let needing = parsed.first(where: \.needsBaseline), self.baseline == nil {
            throw GateError("\(needing.text) compares with a baseline: give --baseline RUN_DIR")
        }
        self.thresholds = parsed
    }

    public struct Outcome: Sendable {
        public var status: Status
        public var verdicts: [Threshold.Verdict]
        public var invalidReasons: [String]
        public var text: String
        /// The thresholds file that applied, for the reports to name.
        public var thresholdsFile: FileUse? = nil
    }

    public func evaluate() -> Outcome {
        let verdicts = thresholds.map { $0.evaluate(run, baseline: baseline) }
        var invalid = run.invalidReasons.map { "run: \($0)" }
        if let baseline { invalid += baseline.invalidReasons.map { "baseline: \($0)" } }
        let width = thresholds.map(\.text.count).max() ?? 0
        var lines: [String] = []
        if let thresholdsFile {
            lines.append("thresholds: \(thresholdsFile), \(thresholds.count) in all")
        }
        if run.runs.count > 1 { lines.append("medians of \(run.runs.count) repeats in \(run.directory)") }
        lines += verdicts.map { $0.line(width: width) }
        // A partial merge is gated on what ran; the verdict says so.
        lines += run.runs.flatMap(\.partialReasons).map { "PARTIAL \($0)" }
        // Not a failure by itself (threshold `harness` for that), but the figures are Fanout's.
        lines += run.runs.flatMap(\.harnessBound).map { "HARNESS-BOUND \($0)" }
        let status: Status
        if !invalid.isEmpty {
            status = .invalid
            lines += invalid.map { "INVALID \($0)" }
            lines.append("gate: the run is invalid and cannot pass")
        } else if verdicts.allSatisfy(\.passed) {
            status = .passed
            lines.append("gate: passed (\(verdicts.count) of \(verdicts.count))")
        } else {
            status = .failed
            lines.append("gate: FAILED (\(verdicts.filter { !$0.passed }.count) of \(verdicts.count) thresholds)")
        }
        return Outcome(
            status: status,
            verdicts: verdicts,
            invalidReasons: invalid,
            text: lines.joined(separator: "\n"),
            thresholdsFile: thresholdsFile
        )
    }
}

public struct GateError: Error, Sendable, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

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
        body += invalidReasons.map { "<p class=\"invalid\">INVALID \(ChartFrame.escape($0))</p>\n" }.joined()
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
