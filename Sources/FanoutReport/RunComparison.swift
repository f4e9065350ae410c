import FanoutRandom

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
/// median, relative to it); with a single run on either side it is unknown, and said so. With
/// repeats on both sides each row also has the 95% interval of the change (bootstrap: each
/// side's repeats resampled on their own, 10,000 times, seeded, the ratio of the medians): the
/// verdict still follows the noise, and the interval says how sure the change is.
///
/// ```
///   metric       baseline     current      change   noise   95% interval        verdict
///   throughput   160,000/s    150,000/s    -6.3%    ±8.2%   -11.0% … +1.9%      within noise
/// ```
public struct RunComparison: Sendable {
    public var baseline: RunSet
    public var current: RunSet
    /// The metrics compared (all of `defaultMetrics` unless narrowed).
    public var metrics: [RunMetric]

    public init(baseline: RunSet, current: RunSet, metrics: [RunMetric] = RunComparison.defaultMetrics) {
        self.baseline = baseline
        self.current = current
        self.metrics = metrics
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

        public enum Verdict: String, Sendable {
            case withinNoise = "within noise"
            case better = "better beyond noise"
            case worse = "WORSE beyond noise"
            case unknown = "noise unknown (repeat the runs)"
            case same = "same"
        }

        public var verdict: Verdict {
            guard let change else { return current == baseline ? .same : .unknown }
            if change == 0 { return .same }
            guard let noise else { return .unknown }
            guard abs(change) > noise else { return .withinNoise }
            return (change > 0) == metric.higherIsBetter ? .better : .worse
        }
    }

    public static let defaultMetrics: [RunMetric] = [
        .throughput, .p50, .p90, .p99, .p99_9, .p99_99, .max, .errors, .lag,
    ]

    public var rows: [Row] {
        var random = SeededRandom(seed: 0xC0)
        return metrics.map { metric in
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
            return Row(
                metric: metric,
                baseline: before,
                current: after,
                change: before == 0 ? nil : (after - before) / before,
                noise: noises.contains(where: { $0 == nil }) ? nil : noises.compactMap { $0 }.max(),
                interval: interval
            )
        }
    }

    /// Whether any difference is worse beyond the noise.
    public var regressed: Bool { rows.contains { $0.verdict == .worse } }

    public var text: String {
        func format(_ value: Double, _ metric: RunMetric) -> String {
            switch metric {
            case .throughput: return grouped(Int(value.rounded())) + "/s"
            case .errors: return grouped(Int(value))
            default: return String(format: "%.2f ms", value)
            }
        }
        func pad(_ text: String, _ width: Int) -> String {
            text.padding(toLength: max(width, text.count), withPad: " ", startingAt: 0)
        }
        var lines = [
            "baseline: \(baseline.directory) (\(baseline.runs.count) run\(baseline.runs.count == 1 ? "" : "s"))",
            "current:  \(current.directory) (\(current.runs.count) run\(current.runs.count == 1 ? "" : "s"))",
            pad("metric", 12) + pad("baseline", 14) + pad("current", 14) + pad("change", 10) + pad("noise", 9)
                + pad("95% interval", 20) + "verdict",
        ]
        for row in rows {
            let change = row.change.map { String(format: "%+.1f%%", $0 * 100) } ?? "-"
            let noise = row.noise.map { String(format: "±%.1f%%", $0 * 100) } ?? "-"
            let interval =
                row.interval.map {
                    String(format: "%+.1f%% … %+.1f%%", $0.lowerBound * 100, $0.upperBound * 100)
                } ?? "-"
            lines.append(
                pad(row.metric.rawValue, 12) + pad(format(row.baseline, row.metric), 14)
                    + pad(format(row.current, row.metric), 14) + pad(change, 10) + pad(noise, 9) + pad(interval, 20)
                    + row.verdict.rawValue
            )
        }
        for (name, set) in [("baseline", baseline), ("current", current)] where !set.valid {
            lines += set.invalidReasons.map { "INVALID \(name): \($0)" }
        }
        return lines.joined(separator: "\n")
    }
}
