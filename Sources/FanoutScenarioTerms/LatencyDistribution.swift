import FanoutNotation
import Foundation

/// A distribution of response latencies.
public enum LatencyDistribution: Sendable, Hashable {
    case fixed(Duration)
    case uniform(Duration, Duration)
    /// Mean and standard deviation; samples below zero are zero.
    case normal(mean: Duration, deviation: Duration)
    /// The median and the σ of the underlying normal distribution.
    case logNormal(median: Duration, sigma: Double)
    /// Latencies drawn uniformly from observed values.
    case empirical([Duration])

    /// The longest latency a sample takes, in nanoseconds: the far tail of a distribution is cut
    /// here (a year, the longest duration Fanout reads) rather than overflowing.
    public static let longest = DurationNotation.longest.wholeNanoseconds

    /// Whether its draws differ: every distribution but a fixed one (or one of no width).
    package var hasSpread: Bool {
        switch self {
        case .fixed: false
        case .uniform(let low, let high): low != high
        case .normal(_, let deviation): deviation > .zero
        case .logNormal(_, let sigma): sigma > 0
        case .empirical(let values): Set(values).count > 1
        }
    }

    /// Its median in nanoseconds: half its draws are shorter (a normal one's mean, a uniform
    /// one's middle, an empirical one's middle value).
    package var median: UInt64 {
        switch self {
        case .fixed(let value): return value.wholeNanoseconds
        case .uniform(let low, let high): return (low.wholeNanoseconds + high.wholeNanoseconds) / 2
        case .normal(let mean, _): return mean.wholeNanoseconds
        case .logNormal(let median, _): return median.wholeNanoseconds
        case .empirical(let values):
            return values.isEmpty ? 0 : values.map(\.wholeNanoseconds).sorted()[values.count / 2]
        }
    }

    /// A drawn value as nanoseconds: below zero (or not a number) is zero, beyond a year is a year
    /// (log-normal's far tail with a large σ reaches infinity).
    @inlinable
    package static func nanoseconds(_ value: Double) -> UInt64 {
        guard value > 0 else { return 0 }
        guard value < Double(longest) else { return longest }
        return UInt64(value)
    }

    /// One sample in nanoseconds, using `random` for its uniform draws (drawn per request:
    /// inlinable, so the sink's answer path calls no function across modules for it).
    @inlinable
    package func sample(_ random: inout SinkRandom) -> UInt64 {
        switch self {
        case .fixed(let value):
            return value.wholeNanoseconds
        case .uniform(let low, let high):
            let span = high.wholeNanoseconds - low.wholeNanoseconds
            return low.wholeNanoseconds + (span == 0 ? 0 : random.next() % (span + 1))
        case .normal(let mean, let deviation):
            return Self.nanoseconds(
                Double(mean.wholeNanoseconds) + Double(deviation.wholeNanoseconds) * random.normal()
            )
        case .logNormal(let median, let sigma):
            return Self.nanoseconds(Double(median.wholeNanoseconds) * Foundation.exp(sigma * random.normal()))
        case .empirical(let values):
            return values.isEmpty ? 0 : values[Int(random.next() % UInt64(values.count))].wholeNanoseconds
        }
    }
}
