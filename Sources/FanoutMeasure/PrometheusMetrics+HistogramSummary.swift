import Histogram

extension PrometheusMetrics.Scrape {
    /// Quantiles already read from `histogram` (microseconds; "1" its maximum) as a summary in
    /// seconds, with the histogram's `_sum` and `_count`: the quantile series kept for one
    /// release, typed as what they are so that `promtool check metrics` reads them clean.
    package mutating func summary(
        _ metric: String,
        of histogram: Histogram<UInt64>,
        _ quantiles: [(String, UInt64)],
        help: String
    ) {
        let count = histogram.totalCount
        summary(
            metric,
            quantiles: quantiles.map { ($0.0, Double($0.1) / 1e6) },
            sumSeconds: count == 0 ? 0 : histogram.mean * Double(count) / 1e6,
            count: count,
            help: help
        )
    }
}
