import Histogram

/// A latency histogram kept in microseconds (HdrHistogram, three significant digits) as a
/// Prometheus classic histogram: cumulative counts at fixed upper bounds, so that shards' and
/// sinks' series add up (`sum by (le)`) and `histogram_quantile` reads a fleet's percentiles —
/// what no quantile gauge can do.
///
/// The bounds are 100 µs × 2^(k/8), k = 0 … 160 (100 µs to 105 s): eight a doubling, the same
/// relative width everywhere, from loopback's sub-millisecond answers to a stalled connection's
/// timeout. `histogram_quantile` interpolates linearly inside a bucket, so its figure lies within
/// one bucket of the truth: at most 2^(1/8) − 1 = 9.05% of the value, about half that as a rule
/// (docs/load-engine.md, `--metrics`). 161 series a histogram a shard; counted at scrape
/// time from the run's histogram, so the hot path pays nothing.
public enum LatencyBuckets {
    /// Upper bounds in microseconds, rounded to whole microseconds, ascending.
    public static let microseconds: [UInt64] = (0...160).map { k in
        UInt64((100 * Double(1 << (k / 8)) * eighths[k % 8]).rounded())
    }

    /// The `le` label of each bound: seconds, as few digits as tell it apart.
    public static let labels: [String] = microseconds.map { seconds($0) }

    /// A histogram's figures as a Prometheus histogram shows them.
    public struct Counts: Sendable, Equatable {
        /// Values at or below each bound, then all of them (`le="+Inf"`).
        public var cumulative: [UInt64]
        public var sumSeconds: Double
        public var count: UInt64
    }

    /// `histogram`'s counts at the bounds, its sum and its count.
    public static func counts(of histogram: Histogram<UInt64>) -> Counts {
        Counts(
            cumulative: cumulative(histogram),
            sumSeconds: histogram.mean * Double(histogram.totalCount) / 1e6,
            count: histogram.totalCount
        )
    }

    /// Values at or below each bound, then the total (`le="+Inf"`).
    static func cumulative(_ histogram: Histogram<UInt64>) -> [UInt64] {
        var counts = [UInt64](repeating: 0, count: microseconds.count + 1)
        var bucket = 0
        for value in histogram.recordedValues() {
            // A recorded value stands for its equivalent range; its highest value decides.
            while bucket < microseconds.count && value.value > microseconds[bucket] { bucket += 1 }
            counts[bucket] += value.count
        }
        for index in counts.indices.dropFirst() { counts[index] += counts[index - 1] }
        return counts
    }

    /// `microseconds` in seconds without trailing zeros: 100 → "0.0001", 2_500 → "0.0025".
    static func seconds(_ microseconds: UInt64) -> String {
        let whole = microseconds / 1_000_000
        var fraction = String(microseconds % 1_000_000)
        fraction = String(repeating: "0", count: 6 - fraction.count) + fraction
        while fraction.hasSuffix("0") { fraction.removeLast() }
        return fraction.isEmpty ? "\(whole)" : "\(whole).\(fraction)"
    }

    /// 2^(j/8) for j = 0 … 7: a bound is 100 µs × 2^(k div 8) × eighths[k mod 8].
    private static let eighths = [
        1.0, 1.090_507_732_665_257_7, 1.189_207_115_002_721, 1.296_839_554_651_009_6, 1.414_213_562_373_095_1,
        1.542_210_825_407_940_7, 1.681_792_830_507_429, 1.834_008_086_409_342_4,
    ]
}
