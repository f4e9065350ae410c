import Testing

@testable import FanoutScenarioTerms

/// Spreads as the sink draws them: each kind has its shape, and no draw overflows.
@Suite struct LatencyDistributionTests {
    @Test func latencyDistributionsHaveTheirShape() {
        var random = SinkRandom(seed: 9)
        let ms: UInt64 = 1_000_000
        let uniform = (0..<10_000).map { _ in
            LatencyDistribution.uniform(.milliseconds(1), .milliseconds(3)).sample(&random)
        }
        #expect(uniform.allSatisfy { (ms...3 * ms).contains($0) })
        let normal = (0..<10_000).map { _ in
            Double(LatencyDistribution.normal(mean: .milliseconds(10), deviation: .milliseconds(2)).sample(&random))
        }
        let mean = normal.reduce(0, +) / Double(normal.count)
        #expect(abs(mean - 10e6) < 0.1e6)
        let logNormal = (0..<10_001).map { _ in
            LatencyDistribution.logNormal(median: .milliseconds(5), sigma: 0.5).sample(&random)
        }.sorted()
        #expect(abs(Double(logNormal[5000]) - 5e6) < 0.25e6)
        let empirical = (0..<1000).map { _ in
            LatencyDistribution.empirical([.milliseconds(1), .milliseconds(7)]).sample(&random)
        }
        #expect(Set(empirical) == [ms, 7 * ms])
    }

    /// The far tail of a distribution is cut at a year rather than overflowing.
    @Test func samplesNeverOverflow() {
        var random = SinkRandom(seed: 5)
        for distribution in [
            LatencyDistribution.logNormal(median: .seconds(3600), sigma: 10),
            .normal(mean: .seconds(86400 * 300), deviation: .seconds(86400 * 300)),
        ] {
            for _ in 0..<10_000 {
                #expect(distribution.sample(&random) <= LatencyDistribution.longest)
            }
        }
        #expect(LatencyDistribution.nanoseconds(.infinity) == LatencyDistribution.longest)
        #expect(LatencyDistribution.nanoseconds(.nan) == 0)
        #expect(LatencyDistribution.nanoseconds(-5) == 0)
    }
}
