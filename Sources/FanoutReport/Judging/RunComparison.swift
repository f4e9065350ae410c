import FanoutRandom
import FanoutResults

/// `fanout compare`: two runs (or two sets of repeats) side by side, each difference judged
/// against the noise measured between repeats.
///
/// ```
///   metric       baseline     current      change   noise   verdict
///   throughput   160,000/s    150,000/s    -6.3%    ±8.2%   within noise
///   p99          20.00 ms     31.00 ms     +55.0%   ±9.0%   WORSE beyond noise
/// ```
///
/// Noise is the larger of the two sets' spreads (each repeat's largest distance from its
/// median, relative to it). One rule gives every verdict, the one `fanout ab` uses: a change is
/// WORSE (or better) only when what is known of it lies wholly beyond `minimumEffect` (5% by
/// default) on that side, else within noise. What is known of it is, with repeats on both
/// sides, its 95% interval (bootstrap: each side's repeats resampled on their own, 10,000
/// times, seeded, the ratio of the medians), the interval printed beside it; with repeats but a
/// baseline of 0 (no interval), the change ± the noise; with a single run on a side (noise
/// unknown), the change itself, said so.
///
/// ```
///   metric       baseline     current      change   noise   95% interval        verdict
///   throughput   160,000/s    150,000/s    -6.3%    ±8.2%   -11.0% … +1.9%      within noise
///   p99          20.00 ms     31.00 ms     +55.0%   -       -                   WORSE beyond 5% (noise unknown: one run a side)
/// ```
public struct RunComparison: Sendable {
    public var baseline: RunSet
    public var current: RunSet
    /// The metrics compared (all of `defaultMetrics` unless narrowed).
    public var metrics: [RunMetric]
    /// How far beyond no change what is known of a change must lie for a verdict (0.05: 5%).
    public var minimumEffect: Double

    public static let defaultMinimumEffect = 0.05
    /// The window `text` shows each side's worst p99 over (`window(10s).p99`), beside the whole
    /// run's: a stall the whole run's p99 hides shows there.
    public static let windowSeconds = 10

    /// The generator's lag changes smaller than this (ms) are scheduling, not the build's.
    public static let lagFloorMilliseconds = 1.0
    /// Each side's worst window's p99 (ms; the median over repeats), `nil` where its
    /// latency.hlog cannot be read.
    public var worstWindowP99: (baseline: Double?, current: Double?)

    public init(
        baseline: RunSet,
        current: RunSet,
        metrics: [RunMetric] = RunComparison.defaultMetrics,
        minimumEffect: Double = RunComparison.defaultMinimumEffect
    ) {
        self.baseline = baseline
        self.current = current
        self.metrics = metrics
        self.minimumEffect = minimumEffect
        worstWindowP99 = (
            baseline.worstWindow(seconds: Self.windowSeconds, metric: .p99),
            current.worstWindow(seconds: Self.windowSeconds, metric: .p99)
        )
    }

    public struct Row: Sendable {
        public var metric: RunMetric
        public var baseline: Double
        public var current: Double
        /// (current − baseline) / baseline; `nil` when the baseline is 0.
        public var change: Double?
        public var noise: Double?
        /// The 95% interval of the change, with repeats on both sides and a baseline above 0.
        public var interval: ClosedRange<Double>?
        public var minimumEffect: Double
        /// Whether every run on both sides measured it (a sink's `violations` and `fanout` are
        /// no run's): a metric one side lacks is said so, never compared as 0 against 0.
        public var measured = true

        public enum Verdict: String, Sendable {
            case same
            case withinNoise = "within noise"
            case better = "better"
            case worse = "WORSE"
        }

        /// What the verdict stands on.
        public enum Basis: Sendable {
            /// The 95% interval of the change.
            case interval
            /// The change ± the noise between repeats.
            case noise
            /// The change alone: one run on a side, the noise unknown.
            case change
            /// No relative change: the baseline is 0.
            case none
        }

        public var basis: Basis {
            if interval != nil { return .interval }
            guard change != nil else { return .none }
            return noise == nil ? .change : .noise
        }

        /// The range the change is known to lie in, relative to the baseline.
        var known: ClosedRange<Double>? {
            if let interval { return interval }
            guard let change else { return nil }
            let noise = noise ?? 0
            return (change - noise)...(change + noise)
        }

        /// A change no larger than this, in the metric's unit, is within noise whatever its
        /// relative size: the generator's `lag` moves by a fraction of a millisecond between
        /// two runs of one build (the event loop's timer and the scheduler; newcomer pass 4
        /// read 0.2 → 0.5 ms, one run a side, as WORSE and compare exited 1).
        public var absoluteFloor: Double? { metric == .lag ? RunComparison.lagFloorMilliseconds : nil }

        /// Whether the change is under `absoluteFloor`.
        var underFloor: Bool { absoluteFloor.map { abs(current - baseline) < $0 } ?? false }

        public var verdict: Verdict {
            // Not measured on a side: nothing to decide (0 against a sink's 2 is no regression).
            if current == baseline || !measured { return .same }
            if underFloor { return .withinNoise }
            guard let known else {
                // From 0 to something: the relative change has no size; any rise of a metric
                // where lower is better (errors) is worse, of one where higher is better, better.
                return (current > baseline) == metric.higherIsBetter ? .better : .worse
            }
            if known.lowerBound > minimumEffect { return metric.higherIsBetter ? .better : .worse }
            if known.upperBound < -minimumEffect { return metric.higherIsBetter ? .worse : .better }
            return .withinNoise
        }

        /// The verdict as the table prints it, with what it stands on when that is not the
        /// interval beside it.
        public var verdictText: String {
            guard measured else { return "not measured (on one side or both)" }
            let bound = String(format: "%g%%", minimumEffect * 100)
            switch (verdict, basis) {
            case (.same, _): return "same"
            case (.withinNoise, _) where underFloor:
                return String(format: "within %g ms (a lag's scheduling noise)", absoluteFloor ?? 0)
            // One run a side, said in one way whatever the verdict (newcomer pass 3 read two).
            case (.withinNoise, .change): return "within \(bound) (noise unknown: one run a side)"
            case (_, .change): return "\(verdict.rawValue) beyond \(bound) (noise unknown: one run a side)"
            case (.withinNoise, _): return "within noise"
            case (_, .none): return "\(verdict.rawValue) (from 0)"
            default: return "\(verdict.rawValue) beyond noise and \(bound)"
            }
        }
    }

    public static let defaultMetrics: [RunMetric] = [
        .throughput, .p50, .p90, .p99, .p99_9, .p99_99, .max, .errors, .lag,
    ]

    public var rows: [Row] {
        var random = SeededRandom(seed: 0xC0)
        return metrics.map { metric in
            let measuredBoth = baseline.measures(metric) && current.measures(metric)
            let before = baseline.median(metric)
            let after = current.median(metric)
            let noises = [baseline.noise(metric), current.noise(metric)]
            let a = baseline.runs.map { $0.metrics[metric] ?? 0 }
            let b = current.runs.map { $0.metrics[metric] ?? 0 }
            var interval: ClosedRange<Double>?
            if a.count > 1, b.count > 1, a.allSatisfy({ $0 > 0 }) {
                let ratio = PairedComparison.bootstrapRatioOfMedians(a, b, &random)
                interval = (ratio.lowerBound - 1)...(ratio.upperBound - 1)
            }
            var row = Row(
                metric: metric,
                baseline: before,
                current: after,
                change: before == 0 || !measuredBoth ? nil : (after - before) / before,
                noise: noises.contains(where: { $0 == nil }) ? nil : noises.compactMap { $0 }.max(),
                interval: interval,
                minimumEffect: minimumEffect
            )
            row.measured = measuredBoth
            return row
        }
    }

    /// Whether any difference is worse beyond the noise.
    public var regressed: Bool { rows.contains { $0.verdict == .worse } }

    /// Whether either side cannot be trusted: then no verdict stands.
    public var valid: Bool { baseline.valid && current.valid }

    /// How the two sides differ in what was run, each said as `what: baseline vs current`:
    /// a comparison of unlike runs measures the difference in the runs, not in the build.
    public var differences: [String] {
        func values(_ set: RunSet, _ key: String) -> String {
            let found = Set(set.runs.map { $0.configuration?.rows.first { $0.key == key }?.value ?? "null" })
            return found.sorted().joined(separator: " | ")
        }
        var differences: [String] = []
        for key in ["model", "schedule", "endpoint", "tokens", "connections", "streams_per_connection", "scenario"] {
            guard baseline.runs.allSatisfy({ $0.configuration != nil }),
                current.runs.allSatisfy({ $0.configuration != nil })
            else { break }
            let before = values(baseline, key)
            let after = values(current, key)
            if before != after { differences.append("\(key): \(before) vs \(after)") }
        }
        let sentBefore = baseline.median(.sent)
        let sentAfter = current.median(.sent)
        if max(sentBefore, sentAfter) > 0, abs(sentAfter - sentBefore) / max(sentBefore, sentAfter) > 0.01 {
            differences.append("notifications sent: \(grouped(Int(sentBefore))) vs \(grouped(Int(sentAfter)))")
        }
        return differences
    }

    public var text: String {
        func format(_ value: Double, _ metric: RunMetric) -> String {
            if metric.isTime { return String(format: "%.2f ms", value) }
            if metric == .throughput { return grouped(Int(value.rounded())) + "/s" }
            // A count (a median of repeats may fall between two).
            return value == value.rounded() ? grouped(Int(value)) : String(format: "%.1f", value)
        }
        func pad(_ text: String, _ width: Int) -> String {
            text.padding(toLength: max(width, text.count), withPad: " ", startingAt: 0)
        }
        // As wide as the longest metric's name and two spaces: "violations.churn0" ran on.
        let nameWidth = max(12, (rows.map(\.metric.rawValue.count).max() ?? 0) + 2)
        var lines = [
            "baseline: \(baseline.directory) (\(baseline.runs.count) run\(baseline.runs.count == 1 ? "" : "s"))",
            "current:  \(current.directory) (\(current.runs.count) run\(current.runs.count == 1 ? "" : "s"))",
            pad("metric", nameWidth) + pad("baseline", 14) + pad("current", 14) + pad("change", 10) + pad("noise", 9)
                + pad("95% interval", 20) + "verdict",
        ]
        for row in rows {
            let change = row.change.map { String(format: "%+.1f%%", $0 * 100) } ?? "-"
            let noise = row.noise.map { String(format: "±%.1f%%", $0 * 100) } ?? "-"
            let interval =
                row.interval.map {
                    String(format: "%+.1f%% … %+.1f%%", $0.lowerBound * 100, $0.upperBound * 100)
                } ?? "-"
            let (before, after) =
                row.measured ? (format(row.baseline, row.metric), format(row.current, row.metric)) : ("-", "-")
            lines.append(
                pad(row.metric.rawValue, nameWidth) + pad(before, 14)
                    + pad(after, 14) + pad(change, 10) + pad(noise, 9) + pad(interval, 20)
                    + row.verdictText
            )
        }
        if let before = worstWindowP99.baseline, let after = worstWindowP99.current {
            let change = before > 0 ? String(format: " (%+.1f%%)", (after / before - 1) * 100) : ""
            lines.append(
                "worst \(Self.windowSeconds) s window's p99 (window(\(Self.windowSeconds)s).p99): "
                    + "\(format(before, .p99)) → \(format(after, .p99))\(change); the whole run's p99 "
                    + "\(format(baseline.median(.p99), .p99)) → \(format(current.median(.p99), .p99))"
            )
        }
        lines += differences.map { "WARNING the sides differ in \($0)" }
        for (name, set) in [("baseline", baseline), ("current", current)] where !set.valid {
            lines += set.invalidReasons.map { "INVALID \(name): \($0)" }
        }
        return lines.joined(separator: "\n")
    }
}
