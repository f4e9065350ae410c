import Foundation

extension LatencyDistribution {
    /// The share of draws at or below `seconds` (what `sample` draws: below zero is zero, so a
    /// normal's mass under zero is at zero). For the planner's arithmetic, not per request.
    package func cdf(_ seconds: Double) -> Double {
        guard seconds >= 0 else { return 0 }
        switch self {
        case .fixed(let value):
            return seconds >= value.seconds ? 1 : 0
        case .uniform(let low, let high):
            let (a, b) = (low.seconds, high.seconds)
            guard b > a else { return seconds >= a ? 1 : 0 }
            return min(1, max(0, (seconds - a) / (b - a)))
        case .normal(let mean, let deviation):
            guard deviation > .zero else { return seconds >= mean.seconds ? 1 : 0 }
            return Self.phi((seconds - mean.seconds) / deviation.seconds)
        case .logNormal(let median, let sigma):
            guard seconds > 0 else { return 0 }
            guard sigma > 0 else { return seconds >= median.seconds ? 1 : 0 }
            return Self.phi(Foundation.log(seconds / median.seconds) / sigma)
        case .empirical(let values):
            guard !values.isEmpty else { return 1 }
            return Double(values.count { $0.seconds <= seconds }) / Double(values.count)
        }
    }

    /// Where the CDF jumps or bends (seconds): a fixed value, a uniform's ends, an empirical
    /// list's values (at most 10,000 of them). A convolution with a window is flat between
    /// such points, so its peak is at one of them (or their sums with the window).
    package var breakpoints: [Double] {
        switch self {
        case .fixed(let value): [value.seconds]
        case .uniform(let low, let high): [low.seconds, high.seconds]
        case .empirical(let values): Array(Set(values.map(\.seconds)).sorted().prefix(10_000))
        case .normal, .logNormal: []
        }
    }

    /// The standard normal's CDF.
    static func phi(_ z: Double) -> Double { 0.5 * Foundation.erfc(-z / 2.0.squareRoot()) }

    /// The least `x` (seconds) with `cdf(x) ≥ share`, found by bisection to a microsecond.
    package func quantile(_ share: Double) -> Double {
        var high = 1.0
        while cdf(high) < share && high < Double(Self.longest) / 1e9 { high *= 2 }
        var low = 0.0
        for _ in 0..<80 where high - low > 1e-6 {
            let middle = (low + high) / 2
            if cdf(middle) >= share { high = middle } else { low = middle }
        }
        return high
    }
}
