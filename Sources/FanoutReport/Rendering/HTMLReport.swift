import FanoutResults
import Foundation
import Histogram

/// `report.html`: one self-contained page (no script, no network) with SVG charts drawn here:
///
/// - the latency percentile spectrum on HdrHistogram's axis (x = 1/(1 − percentile), log-scaled,
///   so 90%, 99%, 99.9% … sit at equal steps);
/// - achieved per second beside the open model's offered rate, and p50, p90, p99 and max per
///   second, the warm-up and the seconds with stream waits shaded, each second's exact figures on
///   hover (SVG `<title>`s: no script); a run of 10 s or less has its achieved rate in 100 ms
///   bins (`HTMLReport+FineBins.swift`);
/// - outcomes by status and reason, over the run and per second (stacked by reason);
/// - connections and notifications in flight at each second's end; the sender's CPU a second;
/// - the configuration and the environment.
public struct HTMLReport {
    public var summary: SummaryDocument
    /// The run's latencies (µs).
    public var latency: Histogram<UInt64>

    public init(summary: SummaryDocument, latency: Histogram<UInt64>) {
        self.summary = summary
        self.latency = latency
    }

    /// The colours the charts draw with (the render test looks for them).
    public enum Colour {
        public static let spectrum = "#1f77b4"
        public static let throughput = "#2ca02c"
        public static let p50 = "#ff7f0e"
        public static let p99 = "#d62728"
        public static let accepted = "#2ca02c"
        public static let rejected = "#9467bd"
        public static let failed = "#d62728"
        public static let waits = "#8c8c8c"
        public static let p90 = "#e377c2"
        public static let max = "#8c564b"
        public static let offered = "#7f7f7f"
        public static let warmUp = "#1f77b4"
        public static let inFlight = "#17becf"
        public static let connections = "#bcbd22"
        public static let cpu = "#1f77b4"
    }

    public var html: String {
        let intervals = summary.intervals
        let sent = summary.sent
        let valid = summary.valid
        let reconciled = summary.reconciled
        if let provider = summary.provider { return providerPage(provider) }
        guard let latencyMs = summary.latency, let throughput = summary.throughputPerSecond else {
            return unmeasuredPage()
        }
        let harness = HarnessRecord(summary: summary)
        let headline =
            [
                ("sent", grouped(sent)),
                ("throughput", grouped(Int(throughput.rounded())) + "/s"),
                ("errors", summary.errorRateText),
                ("p50", millisecondsWithUnit(latencyMs.p50)),
                ("p99", millisecondsWithUnit(latencyMs.p99)),
                ("p99.9", millisecondsWithUnit(latencyMs.p99_9)),
                ("max", millisecondsWithUnit(latencyMs.max)),
            ] + (harness.map { [("latency is", $0.latencyIs)] } ?? []) + cpuCards() + [
                ("reconciled", reconciled.map { $0 ? "yes" : "NO" } ?? "no sink"),
                ("valid", valid ? "yes" : "NO"),
            ]
        var body =
            "<h1>Fanout run: \(ChartFrame.escape(summary.sample?.title ?? grouped(sent) + " notifications"))</h1>\n"
        body += RunHeadline(summary: summary).html
        if let sample = summary.sample {
            body += "<p class=\"note\">Scaled rehearsal: \(ChartFrame.escape(sample.headline)).</p>\n"
        }
        body += cards(headline) + invalidLines()
        if let harness, harness.bound { body += "<p class=\"invalid\">\(ChartFrame.escape(harness.banner))</p>\n" }
        body += "<h2>Latency by percentile</h2>\n" + spectrumChart()
        if let waited = summary.openModel?.streamWaitLine {
            body +=
                "<p class=\"note\">Stream waits: \(ChartFrame.escape(waited)) (shaded in the chart of seconds below).</p>\n"
        }
        if let kept = summary.openModel?.keptUpLine {
            body += "<p class=\"invalid\">Did not keep up: \(ChartFrame.escape(kept)).</p>\n"
        }
        body += resolutionNote()
        body += throughputSection(intervals)
        body += "<h2>Latency percentiles per second</h2>\n" + percentilesChart(intervals)
        body += "<h2>Outcomes</h2>\n" + outcomesChart()
        body += outcomesPerSecondSection()
        body += inFlightSection()
        body += cpuSection()
        if let devices = summary.delivery { body += deliverySection(devices, service: summary.service) }
        if let wave = summary.returnWave { body += returnWaveSection(wave) }
        if let harness { body += "<h2>The harness's own share</h2>\n" + harnessTable(harness) }
        body += "<h2>Configuration</h2>\n" + table(summary.configuration.rows)
        body += "<h2>Environment</h2>\n" + table(summary.environment.rows.map { ($0.key, $0.value) })
        return ChartFrame.page(title: "Fanout run: \(grouped(sent)) notifications", body: body)
    }

    /// A run the server answered nothing of: what was tried, what happened, and no figure
    /// that would stand for a measurement.
    /// A run that measured nothing (no answers, or none after the warm-up): its outcomes and
    /// why, no charts of figures it does not have.
    private func unmeasuredPage() -> String {
        let title = summary.answered == 0 ? "no answers" : "nothing measured"
        let headline = [
            ("sent", grouped(summary.sent)), ("answers", summary.answered == 0 ? "none" : grouped(summary.answered)),
            ("valid", "NO"),
        ]
        var body =
            "<h1>Fanout run: \(title)</h1>\n" + RunHeadline(summary: summary).html + cards(headline) + invalidLines()
        if let abandoned = summary.abandoned { body += "<p>\(ChartFrame.escape(abandoned))</p>\n" }
        body += "<h2>Outcomes</h2>\n" + outcomesChart()
        body += "<h2>Configuration</h2>\n" + table(summary.configuration.rows)
        body += "<h2>Environment</h2>\n" + table(summary.environment.rows.map { ($0.key, $0.value) })
        return ChartFrame.page(title: "Fanout run: \(title)", body: body)
    }

    /// The sender's and the sink's CPU a notification, where they were measured.
    private func cpuCards() -> [(String, String)] {
        var cards: [(String, String)] = []
        if let sender = summary.cpu?.senderPerNotification {
            cards.append(("sender CPU", String(format: "%.2f µs/notification", sender)))
        }
        if let sink = summary.cpu?.sinkPerNotification {
            cards.append(("sink CPU", String(format: "%.2f µs/notification", sink)))
        }
        return cards
    }

    /// The headline figures, a card each.
    func cards(_ headline: [(String, String)]) -> String {
        let cards = headline.map { label, value in
            "<div class=\"card\"><div class=\"label\">\(ChartFrame.escape(label))</div><div class=\"value\">\(ChartFrame.escape(value))</div></div>"
        }
        return "<div class=\"cards\">" + cards.joined() + "</div>\n"
    }

    /// Why the run cannot be trusted, a line a reason.
    func invalidLines() -> String {
        summary.invalidity.map { "<p class=\"invalid\">INVALID: \(ChartFrame.escape($0.description))</p>\n" }.joined()
    }

    // MARK: Charts

    func spectrumChart() -> String {
        guard latency.totalCount > 0 else { return "<p>No latencies were recorded.</p>" }
        // x = log10(1 / (1 − p)), from 0 (0%) to 6 (99.9999%).
        let decades = 6.0
        var points: [(Double, Double)] = []
        for step in latency.percentiles(ticksPerHalfDistance: 5) {
            let percentile = step.percentileLevelIteratedTo / 100
            guard percentile < 1 else { break }
            points.append((min(decades, log10(1 / (1 - percentile))), Double(step.value) / 1000))
        }
        points.append((decades, Double(latency.max) / 1000))
        let top = ChartFrame.niceCeiling(points.map(\.1).max() ?? 1)
        var svg =
            ChartFrame.open("latency percentile spectrum") + ChartFrame.yAxis(top: top, format: millisecondsWithUnit)
        for decade in 0...Int(decades) {
            let x = ChartFrame.left + ChartFrame.plotWidth * Double(decade) / decades
            let label = ["0%", "90%", "99%", "99.9%", "99.99%", "99.999%", "99.9999%"][decade]
            svg +=
                "<line x1=\"\(x)\" x2=\"\(x)\" y1=\"\(ChartFrame.top)\" y2=\"\(ChartFrame.top + ChartFrame.plotHeight)\" stroke=\"#e4e4e4\"/>"
            svg += "<text x=\"\(x)\" y=\"\(ChartFrame.height - 22)\" text-anchor=\"middle\">\(label)</text>"
        }
        let line = points.map { x, y in
            String(
                format: "%.1f,%.1f",
                ChartFrame.left + ChartFrame.plotWidth * x / decades,
                ChartFrame.top + ChartFrame.plotHeight * (1 - y / top)
            )
        }
        svg +=
            "<polyline fill=\"none\" stroke=\"\(Colour.spectrum)\" stroke-width=\"2.5\" points=\"\(line.joined(separator: " "))\"/>"
        svg +=
            "<text x=\"\(ChartFrame.width / 2)\" y=\"\(ChartFrame.height - 5)\" text-anchor=\"middle\">percentile (HdrHistogram's axis: 1/(1 − p), log scale)</text>"
        return svg + "</svg>\n"
    }

    /// Each second's length: 1, but the last one ends with the run (`elapsed_seconds`).
    func length(of interval: SummaryDocument.Interval) -> Double {
        let left = summary.elapsedSeconds - Double(interval.second)
        return left > 0 && left < 1 ? left : 1
    }

    /// The open model's offered rate in each second: the schedule's arrivals due in it (its
    /// rate integrated over the second), per second of the second's length; `nil` in the closed
    /// model, which offers no rate. A shard offers its share of the whole schedule.
    func offeredPerSecond() -> [Double]? {
        offered(over: summary.intervals.map { (from: Double($0.second), length: length(of: $0)) })
    }

    /// The open model's offered rate over each window (from, length; seconds from the start),
    /// per second; `nil` in the closed model.
    func offered(over windows: [(from: Double, length: Double)]) -> [Double]? {
        guard let schedule = summary.schedule else { return nil }
        var share = 1.0
        if let shard = summary.shard, let count = shard.split(separator: "/").last.flatMap({ Double($0) }), count > 0 {
            share = 1 / count
        }
        // The schedule's segments: (start, end, rate at start, rate at end); an endless constant
        // rate is one segment without end.
        var segments: [(from: Double, to: Double, startRate: Double, endRate: Double)] = []
        var time = 0.0
        var rate = schedule.startRatePerSecond
        for stage in schedule.stages {
            segments.append((time, time + stage.durationSeconds, rate, stage.targetPerSecond))
            time += stage.durationSeconds
            rate = stage.targetPerSecond
        }
        if schedule.stages.isEmpty { segments.append((0, .infinity, rate, rate)) }
        func arrivals(from: Double, to: Double) -> Double {
            var total = 0.0
            for segment in segments {
                let low = max(from, segment.from)
                let high = min(to, segment.to)
                guard high > low else { continue }
                let slope =
                    segment.to.isFinite && segment.to > segment.from
                    ? (segment.endRate - segment.startRate) / (segment.to - segment.from) : 0
                let rateAt = { (t: Double) in segment.startRate + slope * (t - segment.from) }
                total += (rateAt(low) + rateAt(high)) / 2 * (high - low)
            }
            return total
        }
        // No more is offered than the schedule plans or, for an endless rate over a token set
        // (`--rate R --count N`), than there were notifications to send: past the last, the
        // run only drains.
        let most = Double(schedule.planned ?? summary.sent)
        func offeredBy(_ time: Double) -> Double { min(arrivals(from: 0, to: time) * share, most) }
        return windows.map { (offeredBy($0.from + $0.length) - offeredBy($0.from)) / $0.length }
    }

    /// Bars: what finished each second (per second: the last, partial second is drawn as
    /// narrow as it was long, at its rate); a line: what the schedule offered, when it did.
    func rateChart(_ intervals: [SummaryDocument.Interval], offered: [Double]?, noun: String) -> String {
        guard !intervals.isEmpty else { return "<p>No seconds were recorded.</p>" }
        let shares = intervals.map { length(of: $0) }
        let rates = intervals.indices.map { Double(intervals[$0].completed) / shares[$0] }
        let tips = intervals.indices.map { index in
            let interval = intervals[index]
            var tip = "second \(interval.second)"
            if shares[index] < 1 { tip += String(format: " (the last %.3f s)", shares[index]) }
            tip += ": \(grouped(interval.completed)) \(noun) (\(grouped(Int(rates[index].rounded())))/s)"
            if let offered { tip += "; offered \(grouped(Int(offered[index].rounded())))/s" }
            return tip
        }
        let top = Self.rateTop(rates, shares: shares, offered: offered)
        let axis = timeAxis
        var svg =
            ChartFrame.open("\(noun) per second") + ChartFrame.yAxis(top: top, whole: true) { grouped(Int($0)) + "/s" }
        svg += axis.warmUpBand
        svg += rateBars(
            rates,
            shares: shares,
            tips: tips,
            offered: offered,
            top: top,
            barClass: "achieved",
            slotSeconds: 1,
            axis: axis
        )
        var legend = [(name: noun, colour: Colour.throughput)]
        if offered != nil { legend.append((name: "offered (the schedule)", colour: Colour.offered)) }
        svg += ChartFrame.legend(legend + axis.legend)
        svg += axis.labels
        return svg + "</svg>\n"
    }

    /// The latency percentiles' lines, a point a second; a second without latencies (the
    /// warm-up's, or one in which nothing finished) breaks the lines instead of reading 0.
    static let percentileLines:
        [(name: String, value: KeyPath<SummaryDocument.Interval, Double> & Sendable, colour: String)] = [
            ("p50", \.p50, Colour.p50), ("p90", \.p90, Colour.p90), ("p99", \.p99, Colour.p99),
            ("max", \.max, Colour.max),
        ]

    private func percentilesChart(_ intervals: [SummaryDocument.Interval]) -> String {
        guard !intervals.isEmpty else { return "<p>No seconds were recorded.</p>" }
        let measured = intervals.filter { $0.latencyCount > 0 }
        let top = ChartFrame.niceCeiling(measured.map(\.max).max() ?? 1)
        var svg =
            ChartFrame.open("latency percentiles per second")
            + ChartFrame.yAxis(top: top, format: millisecondsWithUnit)
        let axis = timeAxis
        let slot = axis.second
        let warmUp = axis.warmUp
        svg += axis.warmUpBand
        // Seconds in which notifications waited for a stream: their latency holds that wait.
        let waits = intervals.enumerated().filter { ($0.element.streamWaits ?? 0) > 0 }
        for (index, interval) in waits {
            svg += ChartFrame.band(
                class: "stream-waits",
                x: axis.x(Double(index)),
                width: slot,
                colour: Colour.waits,
                text: "\(grouped(interval.streamWaits ?? 0)) waited for a stream"
            )
        }
        for line in Self.percentileLines {
            var runs: [[String]] = [[]]
            for (index, interval) in intervals.enumerated() {
                guard interval.latencyCount > 0 else {
                    if !(runs.last?.isEmpty ?? true) { runs.append([]) }
                    continue
                }
                runs[runs.count - 1].append(
                    String(
                        format: "%.1f,%.1f",
                        axis.x(Double(index) + 0.5),
                        ChartFrame.top + ChartFrame.plotHeight * (1 - interval[keyPath: line.value] / top)
                    )
                )
            }
            for run in runs where !run.isEmpty {
                // A lone second is a dot: a polyline of one point draws nothing.
                let points = run.count == 1 ? [run[0], run[0]] : run
                svg +=
                    "<polyline class=\"\(line.name)\" fill=\"none\" stroke=\"\(line.colour)\" stroke-width=\"2.5\" stroke-linecap=\"round\" points=\"\(points.joined(separator: " "))\"/>"
            }
        }
        for (index, interval) in intervals.enumerated() {
            let text =
                interval.latencyCount > 0
                ? "second \(interval.second): "
                    + Self.percentileLines.map { "\($0.name) \(millisecondsWithUnit(interval[keyPath: $0.value]))" }
                    .joined(separator: ", ") + " (\(grouped(interval.latencyCount)) measured)"
                : "second \(interval.second): no latency measured"
                    + (Double(interval.second) < warmUp ? " (warm-up)" : "")
            svg += ChartFrame.hover(x: axis.x(Double(index)), width: slot, text: text)
        }
        var legend = Self.percentileLines.map { (name: $0.name, colour: $0.colour) } + axis.legend
        if !waits.isEmpty { legend.append((name: "waited for a stream", colour: Colour.waits)) }
        svg += ChartFrame.legend(legend)
        svg += axis.labels
        return svg + "</svg>\n"
    }

    /// `2 s`, `0.5 s`.
    static func seconds(_ value: Double) -> String { String(format: "%g s", value) }

    /// What the charts of seconds cannot show, said under them: a run of a few seconds has as
    /// many points (latencies are kept by whole seconds; only a run of 10 s or less has its
    /// throughput in 100 ms bins), and the closed model offers no rate.
    private func resolutionNote() -> String {
        var lines: [String] = []
        if let fine = drawnFineBins {
            lines.append(
                "The run lasted \(String(format: "%.2f", summary.elapsedSeconds)) s: what finished is drawn in \(fine.binMilliseconds) ms bins (summary.json's fine_intervals); latencies are kept by whole seconds (intervals, latency.hlog), so their charts have \(summary.intervals.count) point\(summary.intervals.count == 1 ? "" : "s")."
            )
        } else if summary.elapsedSeconds < 5 {
            lines.append(
                "The run lasted \(String(format: "%.2f", summary.elapsedSeconds)) s: Fanout records whole seconds (summary.json's intervals, latency.hlog), so the charts below have \(summary.intervals.count) point\(summary.intervals.count == 1 ? "" : "s"); finer bins are not recorded."
            )
        }
        if summary.schedule == nil {
            lines.append(
                "The closed model offers no rate of its own (each connection sends as answers come), so there is no offered line."
            )
        }
        if let reasons = summary.unscheduledReasons, reasons.tokensRanOut > 0 {
            lines.append(
                "The tokens ran out: \(grouped(reasons.tokensRanOut)) arrivals the schedule offered were never sent."
            )
        }
        return lines.map { "<p class=\"note\">\(ChartFrame.escape($0))</p>\n" }.joined()
    }

    func outcomesChart() -> String {
        var rows: [(String, Int, String)] = [("accepted (200)", summary.accepted, Colour.accepted)]
        for (reason, count) in summary.rejected.byName {
            rows.append(("rejected \(reason)", count, Colour.rejected))
        }
        for (cause, count) in summary.failed.byName {
            rows.append(("failed \(cause)", count, Colour.failed))
        }
        for (cause, count) in summary.skipped.byName {
            rows.append(("skipped \(cause)", count, "#7f7f7f"))
        }
        let largest = Double(max(1, rows.map(\.1).max() ?? 1))
        let height = 26.0 * Double(rows.count) + 10
        var svg =
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"\(Int(ChartFrame.width))\" height=\"\(Int(height))\" role=\"img\" aria-label=\"outcomes\">"
        for (index, row) in rows.enumerated() {
            let y = 5 + 26.0 * Double(index)
            let width = max(1, 600 * Double(row.1) / largest)
            svg += "<text x=\"220\" y=\"\(y + 15)\" text-anchor=\"end\">\(ChartFrame.escape(row.0))</text>"
            svg += "<rect x=\"230\" y=\"\(y + 2)\" width=\"\(width)\" height=\"18\" fill=\"\(row.2)\"/>"
            svg += "<text x=\"\(236 + width)\" y=\"\(y + 15)\">\(grouped(row.1))</text>"
        }
        return svg + "</svg>\n"
    }

    /// Next to the latency percentiles: how much of them Fanout's own delays account for.
    func harnessTable(_ harness: HarnessRecord) -> String {
        var html =
            "<p>\(ChartFrame.escape(harness.headline.prefix(1).uppercased() + harness.headline.dropFirst()))</p>\n"
        if !harness.guidance.isEmpty {
            html += "<ul>" + harness.guidance.map { "<li>\(ChartFrame.escape($0))</li>" }.joined() + "</ul>\n"
        }
        html += "<table><tr><th>delay</th><th>p50 ms</th><th>p99 ms</th><th>max ms</th></tr>"
        for row in harness.rows {
            html += "<tr><td>\(ChartFrame.escape(row.name))</td>"
            html += [row.p50, row.p99, row.max].map { "<td>\(String(format: "%.2f", $0))</td>" }.joined() + "</tr>"
        }
        return html + "</table>\n"
    }

    func table(_ rows: [(key: String, value: String?)]) -> String {
        var html = "<table>"
        for (key, value) in rows {
            let text = value ?? "—"
            html += "<tr><td>\(ChartFrame.escape(key))</td><td>\(ChartFrame.escape(text))</td></tr>"
        }
        return html + "</table>\n"
    }
}
