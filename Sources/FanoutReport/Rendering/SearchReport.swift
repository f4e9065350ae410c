import FanoutMeasure
import FanoutNotation
import FanoutResults
import Foundation

/// One step of a rate search: a run at one offered rate, what it achieved, and its verdict.
public struct SearchStep: Sendable {
    public var number: Int
    /// The open model's rate, per second.
    public var offered: Double
    public var purpose: RateSearch.Purpose
    /// The step's run folder.
    public var folder: String
    /// Notifications finished per second after the warm-up.
    public var achieved: Double
    public var p50: Double
    public var p99: Double
    /// Rejected and failed, as a share of sent.
    public var errorShare: Double
    public var outcome: RateSearch.Outcome
    /// Why it did not pass: the generator's lag, an invalid run, the shortfall, each objective
    /// that did not hold.
    public var reasons: [String]

    // A step from its figures, as judged already (a test's, or one read back), is made with
    // the memberwise initializer; `init(…invalidReasons:run:objectives:shortfall:)` judges one.

    /// A step as `search.json` holds it.
    public var document: SearchDocument.Step {
        SearchDocument.Step(
            step: number,
            offered: offered,
            purpose: purpose.rawValue,
            folder: folder,
            achieved: achieved,
            p50: p50,
            p99: p99,
            errorShare: errorShare,
            outcome: outcome.rawValue,
            reasons: reasons
        )
    }
}

extension SearchStep {
    /// Judges a finished step from its run's figures: `achieved` per second after the warm-up,
    /// `p50` and `p99` in milliseconds, and `invalidReasons`, why the run cannot be trusted. The
    /// generator falling behind makes it the generator's limit (it says nothing of the
    /// endpoint); otherwise it passes when the run is valid, achieved at least `1 − shortfall`
    /// of what was offered, and every objective holds.
    public init(
        number: Int,
        offered: Double,
        purpose: RateSearch.Purpose,
        folder: String,
        achieved: Double,
        p50: Double,
        p99: Double,
        invalidReasons: [InvalidReason],
        run: RunSet,
        objectives: [Threshold],
        shortfall: Double
    ) {
        self.number = number
        self.offered = offered
        self.purpose = purpose
        self.folder = folder
        self.achieved = achieved
        self.p50 = p50
        self.p99 = p99
        errorShare = run.median(.errors, share: true)
        // The generator falling behind is its own limit, not the endpoint's; any other reason
        // (a lost --rejects write, a token set that stopped) makes the step invalid below.
        let behind = invalidReasons.filter(\.isGeneratorBehind)
        guard behind.isEmpty else {
            outcome = .generatorLimit
            reasons = behind.map(\.description)
            return
        }
        var reasons = invalidReasons.map { "invalid: \($0)" }
        if achieved < offered * (1 - shortfall) {
            reasons.append(
                "achieved \(grouped(Int(achieved.rounded())))/s of \(grouped(Int(offered.rounded())))/s offered: the endpoint did not keep up"
            )
        }
        for objective in objectives {
            let verdict = objective.evaluate(run, baseline: nil)
            if !verdict.passed { reasons.append(verdict.line(width: 0)) }
        }
        outcome = reasons.isEmpty ? .passed : .failed
        self.reasons = reasons
    }
}

/// What `fanout search` writes and prints: the step table, the answer, `search.json` and a
/// `report.html` with offered against achieved rate, and p50 and p99 against offered rate (the
/// knee) with the latency objectives' lines, on a log axis when the latencies span decades.
public struct SearchReport: Sendable {
    public var target: String
    public var objectives: [Threshold]
    public var bounds: RateSearch.Bounds
    public var stepDuration: Duration
    public var warmUp: Duration
    public var steps: [SearchStep] = []
    /// `nil` while the search runs, or when it was stopped.
    public var answer: RateSearch.Answer?
    /// The signal that stopped it (`SIGTERM`), if one did.
    public var stoppedBy: String?

    public static let version = 1
    public static let files = ["search.json", "report.html"]

    public init(
        target: String,
        objectives: [Threshold],
        bounds: RateSearch.Bounds,
        stepDuration: Duration,
        warmUp: Duration
    ) {
        self.target = target
        self.objectives = objectives
        self.bounds = bounds
        self.stepDuration = stepDuration
        self.warmUp = warmUp
    }

    // MARK: Text

    /// `step  purpose  offered/s  achieved/s  p50  p99  errors  outcome`, one line a step.
    public static let tableHeader = row([
        "step", "purpose", "offered/s", "achieved/s", "p50", "p99", "errors", "outcome",
    ])

    public static func tableRow(_ step: SearchStep) -> String {
        row([
            "\(step.number)", step.purpose.rawValue, grouped(Int(step.offered.rounded())),
            grouped(Int(step.achieved.rounded())), millisecondsWithUnit(step.p50), millisecondsWithUnit(step.p99),
            String(format: "%.3f%%", step.errorShare * 100), step.outcome.rawValue,
        ]) + (step.reasons.isEmpty ? "" : "  (" + step.reasons.joined(separator: "; ") + ")")
    }

    /// The table's columns: widths, and whether the text sits to the right.
    private static let columns: [(width: Int, right: Bool)] = [
        (4, true), (8, false), (12, true), (12, true), (10, true), (10, true), (9, true), (0, false),
    ]

    private static func row(_ cells: [String]) -> String {
        zip(cells, columns).map { cell, column in
            let padding = String(repeating: " ", count: max(0, column.width - cell.count))
            return column.right ? padding + cell : cell + padding
        }.joined(separator: "  ")
    }

    /// The answer in a sentence.
    public var answerText: String {
        let slo = objectives.map(\.text).joined(separator: ", ")
        func rate(_ value: Double) -> String { grouped(Int(value.rounded())) + "/s" }
        switch answer {
        case nil:
            let steps = "\(steps.count) step\(steps.count == 1 ? "" : "s")"
            return stoppedBy.map { "stopped by \($0) after \(steps), before an answer" }
                ?? "stopped before an answer (\(steps) so far)"
        case .found(let found, let ceiling):
            return "answer: \(rate(found)) keeps \(slo) (confirmed by a repeat); \(rate(ceiling)) did not"
        case .atLeast(let found):
            return "answer: at least \(rate(found)) keeps \(slo): the highest rate searched (--to) passed twice"
        case .generatorLimit(let passed, let limit):
            // An endpoint failure above the generator's limit is said: every rate offered did
            // not keep the objectives then, only those up to the confirmed one.
            let failed = steps.filter { $0.outcome == .failed && $0.offered > limit }.map(\.offered).min()
            let kept =
                passed.map {
                    (failed == nil ? "every rate it offered kept \(slo), up to " : "\(slo) kept up to ")
                        + "\(rate($0)) (confirmed); "
                } ?? ""
            let endpoint =
                failed.map { "; the endpoint failed \(slo) at \(rate($0)), so its limit lies below that" } ?? ""
            return "answer: the generator's limit, not the endpoint's: \(kept)at \(rate(limit)) the generator "
                + "fell behind its schedule\(endpoint). Offer more with more --threads or more machines to find the endpoint's limit"
        case .noRate(let lowest):
            return "answer: no rate keeps \(slo): even \(rate(lowest)) failed"
        case .stepsExhausted(let passed, let failed):
            return "answer: none within --max-steps \(bounds.maxSteps): \(passed.map(rate) ?? "nothing") passed, "
                + "\(failed.map(rate) ?? "nothing") did not"
        }
    }

    public var text: String {
        ([Self.tableHeader] + steps.map(Self.tableRow) + [answerText]).joined(separator: "\n")
    }

    // MARK: search.json

    public var document: SearchDocument {
        SearchDocument(
            version: Self.version,
            target: target,
            objectives: objectives.map(\.text),
            from: bounds.from,
            to: bounds.to,
            precision: bounds.precision,
            maxSteps: bounds.maxSteps,
            stepDurationSeconds: stepDuration.seconds,
            warmUpSeconds: warmUp.seconds,
            steps: steps.map(\.document),
            answer: answer.map(SearchDocument.Answer.init),
            answerText: answerText,
            stoppedBy: stoppedBy
        )
    }

    /// Writes `search.json` and `report.html` into `directory`.
    public func write(to directory: String) throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try JSONDocument.data(document).write(to: URL(fileURLWithPath: directory + "/search.json"))
        try Data(html.utf8).write(to: URL(fileURLWithPath: directory + "/report.html"))
    }

    // MARK: report.html

    /// The colours the charts draw with (the render test looks for them).
    public enum Colour {
        public static let offered = "#7f7f7f"
        public static let achieved = HTMLReport.Colour.throughput
        public static let p50 = HTMLReport.Colour.p50
        public static let p99 = HTMLReport.Colour.p99
        public static let failed = HTMLReport.Colour.failed
        public static let slo = "#17becf"
    }

    public var html: String {
        let sorted = steps.sorted { $0.offered < $1.offered }
        var body = "<h1>Fanout search</h1>\n"
        body +=
            "<p>\(ChartFrame.escape(target)); objectives: \(ChartFrame.escape(objectives.map(\.text).joined(separator: ", ")))</p>\n"
        body += "<p class=\"answer\">\(ChartFrame.escape(answerText))</p>\n"
        body += "<h2>Achieved against offered rate</h2>\n" + rateChart(sorted)
        body += "<h2>p50 and p99 against offered rate (the knee)</h2>\n" + latencyChart(sorted)
        body += "<h2>Steps</h2>\n<table><tr><th>step</th><th>purpose</th><th>offered/s</th><th>achieved/s</th>"
        body += "<th>p50</th><th>p99</th><th>errors</th><th>outcome</th><th>why</th><th>folder</th></tr>"
        for step in steps {
            let cells = [
                "\(step.number)", step.purpose.rawValue, grouped(Int(step.offered.rounded())),
                grouped(Int(step.achieved.rounded())), millisecondsWithUnit(step.p50),
                millisecondsWithUnit(step.p99),
                String(format: "%.3f%%", step.errorShare * 100), step.outcome.rawValue,
                step.reasons.joined(separator: "; "), step.folder,
            ]
            body += "<tr>" + cells.map { "<td>\(ChartFrame.escape($0))</td>" }.joined() + "</tr>"
        }
        body += "</table>\n"
        return ChartFrame.page(title: "Fanout search: \(answerText)", body: body)
    }

    /// x: offered rate; the diagonal is what an endpoint keeping up achieves. Failed steps are
    /// drawn hollow.
    private func rateChart(_ sorted: [SearchStep]) -> String {
        guard !sorted.isEmpty else { return "<p>No steps were measured.</p>" }
        let top = ChartFrame.niceCeiling(max(sorted.map(\.offered).max() ?? 1, sorted.map(\.achieved).max() ?? 1))
        var svg =
            ChartFrame.open("achieved against offered rate") + ChartFrame.yAxis(top: top) { grouped(Int($0)) + "/s" }
        svg += rateAxis(top: top)
        svg += ChartFrame.line([(0, 0), (top, top)], xTop: top, yTop: top, colour: Colour.offered, dashed: true)
        svg += ChartFrame.line(sorted.map { ($0.offered, $0.achieved) }, xTop: top, yTop: top, colour: Colour.achieved)
        svg += points(sorted, value: \.achieved, xTop: top, yTop: top, colour: Colour.achieved)
        svg += ChartFrame.legend([("offered (keeping up)", Colour.offered), ("achieved", Colour.achieved)])
        return svg + "</svg>\n"
    }

    /// The objectives drawn on the latency chart: each on a latency metric with a fixed limit
    /// (`p99 < 25ms`), at that limit (milliseconds).
    var latencyObjectives: [(text: String, limit: Double)] {
        let latencies: Set<RunMetric> = [.p50, .p90, .p99, .p99_9, .p99_99, .max]
        return objectives.compactMap { objective in
            guard case .run(let metric) = objective.metric, latencies.contains(metric),
                case .value(let limit) = objective.limit
            else { return nil }
            return (objective.text, limit)
        }
    }

    /// p50 and p99 against the offered rate, with the latency objectives as dashed lines (class
    /// `slo`); on a log axis when the values span two decades or more, so that sub-millisecond
    /// steps do not lie flat against 0 under a knee of seconds.
    private func latencyChart(_ sorted: [SearchStep]) -> String {
        guard !sorted.isEmpty else { return "<p>No steps were measured.</p>" }
        let xTop = ChartFrame.niceCeiling(sorted.map(\.offered).max() ?? 1)
        let slos = latencyObjectives
        let scale = ChartFrame.ValueScale.fitting(sorted.map(\.p50) + sorted.map(\.p99) + slos.map(\.limit))
        func milliseconds(_ value: Double) -> String {
            value > 0 && value < 0.01 ? String(format: "%g ms", value) : millisecondsWithUnit(value)
        }
        var svg = ChartFrame.open("p50 and p99 against offered rate") + scale.axis(format: milliseconds)
        svg += rateAxis(top: xTop)
        for slo in slos {
            let y = scale.y(slo.limit)
            svg += ChartFrame.dashedLine(class: "slo", y: y, colour: Colour.slo, title: "objective \(slo.text)")
            svg += String(
                format: "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\" fill=\"%@\">SLO %@</text>",
                ChartFrame.width - ChartFrame.right - 4,
                y - 4,
                Colour.slo,
                ChartFrame.escape(slo.text)
            )
        }
        for (path, colour) in [(\SearchStep.p50, Colour.p50), (\SearchStep.p99, Colour.p99)] {
            let coordinates = sorted.map { step in
                let (x, _) = ChartFrame.position(step.offered, 0, xTop: xTop, yTop: 1)
                return String(format: "%.1f,%.1f", x, scale.y(step[keyPath: path]))
            }
            svg +=
                "<polyline fill=\"none\" stroke=\"\(colour)\" stroke-width=\"2.5\" points=\"\(coordinates.joined(separator: " "))\"/>"
            svg += sorted.map { step in
                let (x, _) = ChartFrame.position(step.offered, 0, xTop: xTop, yTop: 1)
                return circle(step, x: x, y: scale.y(step[keyPath: path]), colour: colour)
            }.joined()
        }
        var legend = [(name: "p50", colour: Colour.p50), (name: "p99", colour: Colour.p99)]
        if !slos.isEmpty { legend.append((name: "objective", colour: Colour.slo)) }
        svg += ChartFrame.legend(legend)
        return svg + "</svg>\n"
    }

    /// A step's point: filled when it passed, hollow in red when not, its figures on hover.
    private func circle(_ step: SearchStep, x: Double, y: Double, colour: String) -> String {
        let fill = step.outcome == .passed ? colour : "#fff"
        let stroke = step.outcome == .passed ? colour : Colour.failed
        let tip =
            "step \(step.number): offered \(grouped(Int(step.offered.rounded())))/s, achieved \(grouped(Int(step.achieved.rounded())))/s, p50 \(millisecondsWithUnit(step.p50)), p99 \(millisecondsWithUnit(step.p99)), \(step.outcome.rawValue)"
        return String(
            format:
                "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4.5\" fill=\"%@\" stroke=\"%@\" stroke-width=\"2\"><title>%@</title></circle>",
            x,
            y,
            fill,
            stroke,
            ChartFrame.escape(tip)
        )
    }

    private func points(
        _ steps: [SearchStep],
        value: KeyPath<SearchStep, Double>,
        xTop: Double,
        yTop: Double,
        colour: String
    ) -> String {
        steps.map { step in
            let (x, y) = ChartFrame.position(step.offered, step[keyPath: value], xTop: xTop, yTop: yTop)
            return circle(step, x: x, y: y, colour: colour)
        }.joined()
    }

    private func rateAxis(top: Double) -> String {
        var svg = ""
        for step in 0...5 {
            let value = top * Double(step) / 5
            let (x, _) = ChartFrame.position(value, 0, xTop: top, yTop: 1)
            svg +=
                "<text x=\"\(x)\" y=\"\(ChartFrame.height - 22)\" text-anchor=\"middle\">\(grouped(Int(value)))</text>"
        }
        svg +=
            "<text x=\"\(ChartFrame.width / 2)\" y=\"\(ChartFrame.height - 5)\" text-anchor=\"middle\">offered rate, per second (hollow: the step failed)</text>"
        return svg
    }
}

extension SearchDocument.Answer {
    init(_ answer: RateSearch.Answer) {
        switch answer {
        case .found(let rate, let ceiling): self.init(kind: "found", rate: rate, failed: ceiling)
        case .atLeast(let rate): self.init(kind: "at-least", rate: rate)
        case .generatorLimit(let passed, let limit):
            self.init(kind: "generator-limit", rate: passed, generatorLimit: limit)
        case .noRate(let lowest): self.init(kind: "no-rate", failed: lowest)
        case .stepsExhausted(let passed, let failed):
            self.init(kind: "steps-exhausted", rate: passed, failed: failed)
        }
    }
}
