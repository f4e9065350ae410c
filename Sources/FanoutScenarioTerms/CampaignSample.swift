import FanoutNotation
import Foundation

/// A scaled rehearsal (`fanout run --sample 1%`, issue #63): a `share` of the campaign's
/// devices with its time compressed by the same factor, so that every rate is the campaign's.
///
/// ```
///   campaign   N devices   fan-out T at N/T a second   opens after D   wave peak W a second
///   sample     s·N         s·T at N/T a second          after s·D       s·N·… in s·(…): W a second
/// ```
///
/// The times the campaign's model draws are compressed (the fan-out's schedule, the devices'
/// delays to open, to deliver and to come back); the network's are not (round trips, the
/// backend's latency, timeouts, the media budget), because they are measured, not modelled.
/// The wave's seconds are real ones: each holds `timeFactor` of the campaign's seconds, a
/// moving average of the campaign's rate over them.
public struct CampaignSample: Sendable, Hashable, CustomStringConvertible {
    /// The devices' share, (0, 1].
    public let share: Double

    /// The smallest sample: a millionth (time a million times faster is past any timer's grain).
    public static let smallestShare = 1e-6

    public init(share: Double) throws(SinkScenarioError) {
        guard share.isFinite, share >= Self.smallestShare, share <= 1 else {
            throw Self.refusal(ShareNotation.percent(share))
        }
        self.share = share
    }

    /// `1%`, `0.01`.
    public init(parsing text: some StringProtocol) throws(SinkScenarioError) {
        guard let share = ShareNotation.parse(text), share.isFinite, share >= Self.smallestShare, share <= 1 else {
            throw Self.refusal(String(text))
        }
        self.share = share
    }

    private static func refusal(_ given: String) -> SinkScenarioError {
        SinkScenarioError("a sample is a share from 0.0001% to 100%, like 1% or 0.01; got \(given)")
    }

    /// How many times faster the sample's time runs: 100 for 1%.
    public var timeFactor: Double { 1 / share }

    /// The sample's devices of the campaign's `devices`: at least one.
    public func devices(_ devices: UInt64) -> UInt64 {
        max(1, UInt64((Double(devices) * share).rounded()))
    }

    /// `duration` in the sample's time.
    public func compressed(_ duration: Duration) -> Duration {
        .nanoseconds(Int64((Double(duration.wholeNanoseconds) * share).rounded()))
    }

    /// `spread`'s draws in the sample's time: every duration it names times the share (a
    /// log-normal's σ, a shape, is kept).
    public func compressed(_ spread: LatencyDistribution) -> LatencyDistribution {
        switch spread {
        case .fixed(let value): .fixed(compressed(value))
        case .uniform(let low, let high): .uniform(compressed(low), compressed(high))
        case .normal(let mean, let deviation): .normal(mean: compressed(mean), deviation: compressed(deviation))
        case .logNormal(let median, let sigma): .logNormal(median: compressed(median), sigma: sigma)
        case .empirical(let values): .empirical(values.map(compressed))
        }
    }

    /// "1% of the devices, time ×100".
    public var description: String {
        "\(ShareNotation.percent(share)) of the devices, time ×" + String(format: "%.4g", timeFactor)
    }
}
