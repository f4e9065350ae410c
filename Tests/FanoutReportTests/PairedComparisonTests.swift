import FanoutReport
import FanoutTestSupport
import Testing

/// The pair-by-pair verdicts on made-up pairs whose truth is known.
@Suite struct PairedComparisonTests {
    /// Five pairs: A's values, and B's as A's times `factor` times a per-pair wobble.
    static func pairs(_ a: [Double], factor: Double, wobble: [Double]) -> [(a: Double, b: Double)] {
        zip(a, wobble).map { ($0, $0 * factor * $1) }
    }

    static let machine: [Double] = [231_000, 180_000, 262_000, 195_000, 240_000]  // a noisy machine
    static let wobble: [Double] = [1.03, 0.98, 1.01, 0.97, 1.02]

    @Test func aBuild20PercentSlowerIsWorseWhateverTheMachineDid() throws {
        let comparison = PairedComparison(
            metrics: [.throughput],
            values: [.throughput: Self.pairs(Self.machine, factor: 0.8, wobble: Self.wobble)]
        )
        let row = try #require(comparison.rows.first)
        #expect(row.verdict == .worse && comparison.regressed && !comparison.improved)
        let interval = try #require(row.interval)
        #expect(interval.lowerBound >= 0.8 * 0.97 - 1e-9 && interval.upperBound <= 0.8 * 1.03 + 1e-9)
        #expect(abs((row.ratio ?? 0) - 0.8 * 1.01) < 1e-9)
        #expect(
            lines(of: comparison.text, keyed: "throughput ").map(textColumns)
                == [["throughput", "231,000/s", "190,344/s", "0.808", "0.776 … 0.824", "WORSE"]],
            "\(comparison.text)"
        )
        #expect(lines(of: comparison.text, keyed: "ab: ") == ["ab: B is WORSE"], "\(comparison.text)")
    }

    @Test func theSameBuildIsWithinNoise() {
        let comparison = PairedComparison(
            metrics: [.throughput, .p99],
            values: [
                .throughput: Self.pairs(Self.machine, factor: 1, wobble: Self.wobble),
                .p99: Self.pairs([40, 52, 38, 61, 45], factor: 1, wobble: Self.wobble.reversed()),
            ]
        )
        #expect(comparison.rows.allSatisfy { $0.verdict == .withinNoise })
        #expect(!comparison.regressed && !comparison.improved)
    }

    /// Lower latency is better; lower throughput is worse.
    @Test func aVerdictFollowsTheMetricsDirection() {
        let comparison = PairedComparison(
            metrics: [.p50, .throughput],
            values: [
                .p50: Self.pairs([10, 12, 9, 14, 11], factor: 0.7, wobble: Self.wobble),
                .throughput: Self.pairs(Self.machine, factor: 1.3, wobble: Self.wobble),
            ]
        )
        #expect(comparison.rows.map(\.verdict) == [.better, .better])
        #expect(comparison.improved && !comparison.regressed)
    }

    /// Every pair 3% worse: beyond 1, but not beyond the 5% that makes a verdict.
    @Test func aDifferenceSmallerThanTheMinimumEffectIsWithinNoise() {
        let values: [RunMetric: [(a: Double, b: Double)]] = [.p99: [40, 50, 60, 45, 55].map { ($0, $0 * 1.03) }]
        #expect(PairedComparison(metrics: [.p99], values: values).rows[0].verdict == .withinNoise)
        #expect(PairedComparison(metrics: [.p99], values: values, minimumEffect: 0.01).rows[0].verdict == .worse)
    }

    @Test func aZeroBaselineHasNoRatio() {
        let comparison = PairedComparison(metrics: [.errors], values: [.errors: [(0, 0), (0, 3)]])
        #expect(comparison.rows[0].ratio == nil && comparison.rows[0].verdict == .withinNoise)
    }

    @Test func theSameRunsGiveTheSameInterval() {
        let values: [RunMetric: [(a: Double, b: Double)]] = [
            .throughput: Self.pairs(Self.machine, factor: 0.9, wobble: Self.wobble)
        ]
        let first = PairedComparison(metrics: [.throughput], values: values)
        let second = PairedComparison(metrics: [.throughput], values: values)
        #expect(first.rows[0].interval == second.rows[0].interval)
    }
}

/// Fewer pairs than measure the noise give no verdict, however far apart they lie.
@Suite struct PairedComparisonMinimumTests {
    @Test(arguments: [1, 2])
    func underThreePairsTheNoiseIsUnknown(pairs: Int) {
        // The same build on both sides, its first pair on a cold machine: ×1.56.
        let values: [RunMetric: [(a: Double, b: Double)]] = [
            .throughput: Array([(150_000, 234_000), (180_000, 206_000)].prefix(pairs))
        ]
        let comparison = PairedComparison(metrics: [.throughput], values: values)
        #expect(comparison.rows[0].verdict == .noiseUnknown)
        #expect(!comparison.regressed && !comparison.improved)
        #expect(comparison.text.hasSuffix("(at least 3 can; 5 or more narrow the interval)"))
    }

    @Test func threePairsGiveAVerdict() {
        let values: [RunMetric: [(a: Double, b: Double)]] = [
            .throughput: [(150_000, 100_000), (180_000, 120_000), (160_000, 110_000)]
        ]
        #expect(PairedComparison(metrics: [.throughput], values: values).rows[0].verdict == .worse)
    }
}
