import FanoutRandom
import FanoutResults
import Foundation

/// Two builds run alternately under the same options (A B A B …), compared pair by pair: for
/// each metric the ratio B ÷ A of every pair, their median, and a 95% confidence interval of
/// that median by bootstrap over the pairs (10,000 resamples, seeded, so the same runs give the
/// same interval). Pairing cancels what the machine did meanwhile — a neighbour's load, a
/// slower minute — that a comparison with a number recorded on another day cannot.
///
/// ```
///  metric       A (median)    B (median)   B ÷ A   95% interval     verdict
///  throughput    231,412/s     187,090/s   0.808   0.771 … 0.846    WORSE
/// ```
/// A metric is WORSE when its whole interval lies beyond 1 ± `minimumEffect` on its worse side
/// (below 0.95 for throughput, above 1.05 for latencies and errors, with the default 5%),
/// BETTER when beyond it on its better side, else within noise: a difference must be both
/// outside the pairs' noise and large enough to matter. Under `minimumPairs` pairs there is no
/// verdict: one or two pairs say nothing of the noise (the same build on both sides came out
/// ×1.56 "BETTER" from one pair, the first run of a machine slower than the rest), so every
/// metric reads "noise unknown".
public struct PairedComparison: Sendable {
    public enum Verdict: String, Sendable {
        case worse = "WORSE"
        case better = "BETTER"
        case withinNoise = "within noise"
        case noiseUnknown = "noise unknown"
    }

    /// The fewest pairs whose spread stands for the noise: under it, no verdict.
    public static let minimumPairs = 3

    public struct Row: Sendable {
        public var metric: RunMetric
        public var baseline: Double
        public var candidate: Double
        /// The median of the pairs' ratios, and its interval; `nil` when a baseline value is 0.
        public var ratio: Double?
        public var interval: ClosedRange<Double>?
        public var verdict: Verdict
    }

    public var pairs: Int
    public var rows: [Row]
    /// How far beyond 1 an interval must lie for a verdict (0.05: 5%).
    public var minimumEffect: Double

    public static let resamples = 10_000

    /// `values[metric]` holds each pair's (A, B).
    public init(
        metrics: [RunMetric],
        values: [RunMetric: [(a: Double, b: Double)]],
        minimumEffect: Double = 0.05,
        seed: UInt64 = 0xAB
    ) {
        pairs = values.values.map(\.count).max() ?? 0
        self.minimumEffect = minimumEffect
        var random = SeededRandom(seed: seed)
        rows = metrics.map { metric in
            let pairs = values[metric] ?? []
            let baseline = RunSet.median(pairs.map(\.a))
            let candidate = RunSet.median(pairs.map(\.b))
            guard !pairs.isEmpty, pairs.allSatisfy({ $0.a > 0 }) else {
                return Row(metric: metric, baseline: baseline, candidate: candidate, verdict: .withinNoise)
            }
            let ratios = pairs.map { $0.b / $0.a }
            let interval = Self.bootstrap(ratios, &random)
            let verdict: Verdict
            if pairs.count < Self.minimumPairs {
                verdict = .noiseUnknown
            } else if interval.lowerBound > 1 + minimumEffect {
                verdict = metric.higherIsBetter ? .better : .worse
            } else if interval.upperBound < 1 - minimumEffect {
                verdict = metric.higherIsBetter ? .worse : .better
            } else {
                verdict = .withinNoise
            }
            return Row(
                metric: metric,
                baseline: baseline,
                candidate: candidate,
                ratio: RunSet.median(ratios),
                interval: interval,
                verdict: verdict
            )
        }
    }

    /// The 2.5th and 97.5th percentiles of the medians of `resamples` resamples (with
    /// replacement) of `ratios`.
    static func bootstrap(_ ratios: [Double], _ random: inout SeededRandom) -> ClosedRange<Double> {
        guard ratios.count > 1 else { return ratios[0]...ratios[0] }
        var sample = [Double](repeating: 0, count: ratios.count)
        return percentiles95(of: resamples) {
            for index in sample.indices { sample[index] = ratios[Int(random.next() % UInt64(ratios.count))] }
            return RunSet.median(sample)
        }
    }

    /// For two independent sets of repeats (not pairs): the 95% interval of median(b) ÷ median(a),
    /// each side resampled on its own.
    static func bootstrapRatioOfMedians(
        _ a: [Double],
        _ b: [Double],
        _ random: inout SeededRandom
    ) -> ClosedRange<Double> {
        var sampleA = [Double](repeating: 0, count: a.count)
        var sampleB = [Double](repeating: 0, count: b.count)
        return percentiles95(of: resamples) {
            for index in sampleA.indices { sampleA[index] = a[Int(random.next() % UInt64(a.count))] }
            for index in sampleB.indices { sampleB[index] = b[Int(random.next() % UInt64(b.count))] }
            return RunSet.median(sampleB) / RunSet.median(sampleA)
        }
    }

    /// The 2.5th and 97.5th percentiles of `count` draws of `statistic`.
    private static func percentiles95(of count: Int, _ statistic: () -> Double) -> ClosedRange<Double> {
        var values: [Double] = []
        values.reserveCapacity(count)
        for _ in 0..<count { values.append(statistic()) }
        values.sort()
        return values[Int(Double(count) * 0.025)]...values[min(count - 1, Int(Double(count) * 0.975))]
    }

    /// Some metric is worse beyond the interval / better, and none worse.
    public var regressed: Bool { rows.contains { $0.verdict == .worse } }
    public var improved: Bool { !regressed && rows.contains { $0.verdict == .better } }

    public var text: String {
        func value(_ number: Double, _ metric: RunMetric) -> String {
            if metric == .throughput { return grouped(Int(number.rounded())) + "/s" }
            if metric.isTime { return millisecondsWithUnit(number) }
            return number == number.rounded() ? String(Int(number)) : String(format: "%.3f", number)
        }
        func cell(_ text: String, _ width: Int, right: Bool = true) -> String {
            let padding = String(repeating: " ", count: max(0, width - text.count))
            return right ? padding + text : text + padding
        }
        var lines = [
            "\(pairs) pairs, A and B alternately; B ÷ A with a 95% interval (bootstrap over the pairs); "
                + "a verdict when it lies beyond 1 ± \(Int((minimumEffect * 100).rounded()))%",
            cell("metric", 12, right: false) + cell("A (median)", 14) + cell("B (median)", 14) + cell("B ÷ A", 8)
                + "   " + cell("95% interval", 16, right: false) + " verdict",
        ]
        for row in rows {
            let ratio = row.ratio.map { String(format: "%.3f", $0) } ?? "—"
            let interval = row.interval.map { String(format: "%.3f … %.3f", $0.lowerBound, $0.upperBound) } ?? "—"
            lines.append(
                cell(row.metric.rawValue, 12, right: false) + cell(value(row.baseline, row.metric), 14)
                    + cell(value(row.candidate, row.metric), 14) + cell(ratio, 8) + "   "
                    + cell(interval, 16, right: false) + " " + row.verdict.rawValue
            )
        }
        if pairs < Self.minimumPairs {
            lines.append(
                "ab: noise unknown: \(pairs) pair\(pairs == 1 ? "" : "s") cannot tell a difference from the noise "
                    + "(at least \(Self.minimumPairs) can; 5 or more narrow the interval)"
            )
        } else {
            lines.append(regressed ? "ab: B is WORSE" : improved ? "ab: B is BETTER" : "ab: within noise")
        }
        return lines.joined(separator: "\n")
    }
}
