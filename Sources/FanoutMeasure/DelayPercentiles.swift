import Histogram

/// A delay's distribution in brief, microseconds.
public struct DelayPercentiles: Sendable, Hashable {
    public var count: UInt64
    public var p50: UInt64
    public var p99: UInt64
    public var max: UInt64

    public init(count: UInt64 = 0, p50: UInt64 = 0, p99: UInt64 = 0, max: UInt64 = 0) {
        self.count = count
        self.p50 = p50
        self.p99 = p99
        self.max = max
    }

    public init(_ histogram: Histogram<UInt64>) {
        guard histogram.totalCount > 0 else {
            self.init()
            return
        }
        self.init(
            count: histogram.totalCount,
            p50: histogram.valueAtPercentile(50),
            p99: histogram.valueAtPercentile(99),
            max: histogram.max
        )
    }

    /// "p50 0.02 ms, p99 0.31 ms, max 1.20 ms", or "none".
    public var text: String {
        guard count > 0 else { return "none" }
        func ms(_ microseconds: UInt64) -> String {
            let hundredths = (microseconds + 5) / 10
            let fraction = hundredths % 100
            return "\(hundredths / 100).\(fraction < 10 ? "0" : "")\(fraction) ms"
        }
        return "p50 \(ms(p50)), p99 \(ms(p99)), max \(ms(max))"
    }
}
