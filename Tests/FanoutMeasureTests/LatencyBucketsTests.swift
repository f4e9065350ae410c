import FanoutRandom
import FanoutTestSupport
import Foundation
import Histogram
import Testing

@testable import FanoutMeasure

/// The sender's latency as a Prometheus histogram: bounds that mean what the docs say, counts
/// that add up to the HDR histogram's, `histogram_quantile` within a bucket of the HDR figures,
/// and an exposition Prometheus's own checker accepts.
@Suite struct LatencyBucketsTests {
    @Test func theBoundsAreEightADoublingFrom100Microseconds() {
        let bounds = LatencyBuckets.microseconds
        #expect(bounds.count == 161)
        #expect(bounds.first == 100 && bounds[8] == 200 && bounds[80] == 102_400 && bounds[160] == 104_857_600)
        for (lower, upper) in zip(bounds, bounds.dropFirst()) {
            #expect(upper > lower)
            #expect(abs(Double(upper) / Double(lower) - 1.090_507_732_665_257_7) < 0.006, "\(lower) → \(upper)")
        }
        #expect(LatencyBuckets.labels[0] == "0.0001" && LatencyBuckets.labels[8] == "0.0002")
        #expect(LatencyBuckets.labels[160] == "104.8576")
    }

    @Test func countsAreCumulativeAndEndWithEveryValue() {
        var histogram = makeMicrosecondHistogram()
        for value: UInt64 in [50, 100, 101, 80_000, 80_000, 200_000_000] { histogram.record(value) }
        let counts = LatencyBuckets.counts(of: histogram)
        #expect(counts.cumulative.count == 162)
        #expect(counts.cumulative[0] == 2, "50 µs and 100 µs at or below 100 µs")
        #expect(counts.cumulative[1] == 3)
        let at80ms = LatencyBuckets.microseconds.firstIndex { $0 >= 80_000 }!
        #expect(counts.cumulative[at80ms] == 5 && counts.cumulative[at80ms - 1] == 3)
        #expect(counts.cumulative[160] == 5, "200 s lies past the last bound")
        #expect(counts.cumulative[161] == 6 && counts.count == 6)
        #expect(zip(counts.cumulative, counts.cumulative.dropFirst()).allSatisfy { $0 <= $1 })
    }

    /// Prometheus's `histogram_quantile` (promql/quantile.go, `bucketQuantile`): the rank's
    /// bucket, then linear interpolation between its bounds (the first bucket from 0).
    static func histogramQuantile(_ quantile: Double, _ counts: [UInt64]) -> Double {
        let total = Double(counts.last!)
        let rank = quantile * total
        let index = counts.firstIndex { Double($0) >= rank }!
        guard index < LatencyBuckets.microseconds.count else { return Double(LatencyBuckets.microseconds.last!) }
        let upper = Double(LatencyBuckets.microseconds[index])
        let lower = index == 0 ? 0 : Double(LatencyBuckets.microseconds[index - 1])
        let below = index == 0 ? 0 : Double(counts[index - 1])
        let inBucket = Double(counts[index]) - below
        return lower + (upper - lower) * (rank - below) / inBucket
    }

    /// Narrow (an 80 ms sink with little spread), wide (lognormal) and two-humped latencies:
    /// p50 and p99 from the buckets lie within one bucket's width (9.05%) of the HDR figures.
    /// `histogram_quantile`'s error against the HDR figure, in percent, at p50 and p99, as
    /// measured on the shapes below.
    static let documentedError: [String: [Double]] = [
        "narrow": [3.17, 6.61], "lognormal": [0.12, 0.41], "bimodal": [0.01, 2.35],
    ]

    @Test(arguments: ["narrow", "lognormal", "bimodal"])
    func histogramQuantileIsWithinABucketOfTheHDRFigures(shape: String) {
        var random = SeededRandom(seed: 7)
        var histogram = makeMicrosecondHistogram()
        for index in 0..<200_000 {
            let uniform = (Double(random.next() >> 11) + 0.5) / Double(1 << 53)
            let normal = sqrt(-2 * log(uniform)) * cos(2 * .pi * Double(random.next() >> 11) / Double(1 << 53))
            let value: Double
            switch shape {
            case "narrow": value = 80_000 + 300 * normal
            case "lognormal": value = 80_000 * exp(0.25 * normal)
            default: value = index % 10 == 0 ? 400_000 + 20_000 * normal : 2_000 + 200 * normal
            }
            histogram.record(UInt64(max(1, value)))
        }
        let counts = LatencyBuckets.counts(of: histogram).cumulative
        for percentile in [50.0, 99.0] {
            let hdr = Double(histogram.valueAtPercentile(percentile))
            let prometheus = Self.histogramQuantile(percentile / 100, counts)
            let error = abs(prometheus - hdr) / hdr
            #expect(error <= 0.0905, "\(shape) p\(percentile): \(prometheus) µs against \(hdr) µs")
            // The errors docs/reports.md reports ("Prometheus and Grafana"), to 0.1 point.
            let documented = Self.documentedError[shape]![percentile == 50 ? 0 : 1]
            #expect(
                abs(error * 100 - documented) < 0.1,
                "\(shape) p\(percentile): \(prometheus) µs against \(hdr) µs, \(error * 100)% (documented \(documented)%)"
            )
        }
    }

    /// `promtool check metrics` (Prometheus's own linter) on an exposition with the histogram
    /// beside counters and gauges, labelled by shard.
    @Test(.requires(.promtool)) func promtoolAcceptsTheExposition() throws {
        var histogram = makeMicrosecondHistogram()
        for value: UInt64 in [900, 81_000, 82_500, 120_000] { histogram.record(value) }
        let metrics = PrometheusMetrics(subsystem: "sender")
        let text = metrics.exposition { scrape in
            scrape.count("requests", labels: [("shard", "1/3")], 4, help: "Requests sent.")
            scrape.gauge("in_flight", labels: [("shard", "1/3")], 0, help: "Requests in flight.")
            scrape.histogram(
                "notification_latency",
                labels: [("shard", "1/3")],
                LatencyBuckets.counts(of: histogram),
                help: "Latency."
            )
        }
        let exposition = try #require(PrometheusExposition(text), "\(text)")
        let family = "fanout_sender_notification_latency_seconds"
        #expect(exposition.types[family] == "histogram")
        #expect(exposition.value(family + "_bucket", ["shard": "1/3", "le": "+Inf"]) == 4)
        #expect(exposition.value(family + "_count", ["shard": "1/3"]) == 4)
        let remarks = try promtoolRemarks(text)
        #expect(remarks == nil, "promtool's remarks: \(remarks ?? "")")
    }
}
