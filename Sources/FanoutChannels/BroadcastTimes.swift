import FanoutScenarioTerms
import Foundation

/// A broadcast's delivery times, from its acceptance to each subscriber delivered at once: the
/// device fleet's delay (`--device-delay`; `DeviceFleetSettings.delay`), else 0 (at once).
///
/// Worked out, not drawn: ten million deliveries drawn one by one would cost seconds. A
/// subscriber's delay is a draw from the distribution, so the deliveries' percentile q is its
/// quantile F⁻¹(q), and the time to a broadcast's last of n subscribers, the largest of n
/// independent draws, is taken at its median, F⁻¹(0.5^(1/n)) (P(max ≤ x) = F(x)ⁿ). Normal and
/// log-normal quantiles use Φ⁻¹ (Acklam's rational approximation, relative error below 1.2e-9).
public struct BroadcastTimes: Sendable, Equatable {
    /// `nil`: delivered at once.
    public var delay: LatencyDistribution?
    private var sortedEmpirical: [UInt64] = []

    /// Times drawn from `delay` (`nil`: at once).
    public init(delay: LatencyDistribution?) {
        self.delay = delay
        if case .empirical(let values) = delay { sortedEmpirical = values.map(\.wholeNanoseconds).sorted() }
    }

    /// The delay's quantile `q` (0...1), nanoseconds.
    public func quantile(_ q: Double) -> UInt64 {
        let q = min(max(q, 0), 1)
        switch delay {
        case nil:
            return 0
        case .fixed(let value):
            return value.wholeNanoseconds
        case .uniform(let low, let high):
            let low = Double(low.wholeNanoseconds)
            return LatencyDistribution.nanoseconds(low + q * (Double(high.wholeNanoseconds) - low))
        case .normal(let mean, let deviation):
            return LatencyDistribution.nanoseconds(
                Double(mean.wholeNanoseconds) + Double(deviation.wholeNanoseconds) * Self.probit(q)
            )
        case .logNormal(let median, let sigma):
            return LatencyDistribution.nanoseconds(Double(median.wholeNanoseconds) * exp(sigma * Self.probit(q)))
        case .empirical:
            guard !sortedEmpirical.isEmpty else { return 0 }
            return sortedEmpirical[min(sortedEmpirical.count - 1, Int(q * Double(sortedEmpirical.count)))]
        }
    }

    /// F(x): the share of draws at most `x` ns, the quantile function inverted by bisection
    /// (to 2⁻⁴⁰; a step of an empirical or fixed distribution is exact). 1 without a delay.
    public func fraction(atMost x: UInt64) -> Double {
        guard delay != nil else { return 1 }
        var (low, high) = (0.0, 1.0)
        if quantile(1) <= x { return 1 }
        if quantile(0) > x { return 0 }
        for _ in 0..<40 {
            let middle = (low + high) / 2
            if quantile(middle) <= x { low = middle } else { high = middle }
        }
        return low
    }

    /// The time to the last of `delivered` subscribers (the median of their largest delay);
    /// 0 with none.
    public func last(of delivered: Int) -> UInt64 {
        guard delivered > 0 else { return 0 }
        return quantile(pow(0.5, 1 / Double(delivered)))
    }

    /// Φ⁻¹(p): the standard normal quantile (Acklam's algorithm); ±∞ at 0 and 1.
    static func probit(_ p: Double) -> Double {
        if p <= 0 { return -.infinity }
        if p >= 1 { return .infinity }
        let a = [
            -3.969683028665376e+01, 2.209460984245205e+02, -2.759285104469687e+02,
            1.383577518672690e+02, -3.066479806614716e+01, 2.506628277459239e+00,
        ]
        let b = [
            -5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
            6.680131188771972e+01, -1.328068155288572e+01,
        ]
        let c = [
            -7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
            -2.549732539343734e+00, 4.374664141464968e+00, 2.938163982698783e+00,
        ]
        let d = [7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00, 3.754408661907416e+00]
        let low = 0.02425
        if p < low {
            let q = (-2 * log(p)).squareRoot()
            return (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5])
                / ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1)
        }
        if p > 1 - low {
            let q = (-2 * log(1 - p)).squareRoot()
            return -(((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5])
                / ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1)
        }
        let q = p - 0.5
        let r = q * q
        return (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q
            / (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1)
    }
}
