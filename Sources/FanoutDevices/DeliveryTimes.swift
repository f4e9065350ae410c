import FanoutScenarioTerms
import Histogram

/// When notifications reached their devices, in microseconds: from each request's arrival at
/// APNs (the delivered-to-device latency) and from the fan-out's first request (how long the
/// campaign took to reach 50, 90, 99% of the devices that got it, and the last one).
///
/// The histograms reach a year (the longest duration Fanout reads): a notification stored for
/// its default week is still recorded where it fell, not cut at an hour like the sink's own
/// delays (`makeMicrosecondHistogram`).
public struct DeliveryTimes: Sendable {
    /// Arrival at APNs → device.
    public private(set) var toDevice = Self.makeHistogram()
    /// Arrival at APNs → device, for the notifications delivered from storage alone.
    public private(set) var fromStorage = Self.makeHistogram()
    /// The fan-out's first request → device.
    public private(set) var sinceStart = Self.makeHistogram()
    /// The latest delivery, nanoseconds after the fan-out's first request (exact, not bucketed).
    public private(set) var last: UInt64 = 0

    /// No delivery yet.
    public init() {}

    static let longest = LatencyDistribution.longest / 1000

    static func makeHistogram() -> Histogram<UInt64> {
        Histogram(lowestDiscernibleValue: 1, highestTrackableValue: longest, numberOfSignificantValueDigits: .three)
    }

    /// A notification that arrived at `arrival` reached its device at `delivered` (nanoseconds
    /// on the model's clock); the fan-out began at `start`.
    mutating func record(arrival: UInt64, delivered: UInt64, start: UInt64, stored: Bool) {
        let fromStart = delivered - min(delivered, start)
        let latency = Self.microseconds(delivered - min(delivered, arrival))
        _ = toDevice.record(latency)
        if stored { _ = fromStorage.record(latency) }
        _ = sinceStart.record(Self.microseconds(fromStart))
        last = max(last, fromStart)
    }

    private static func microseconds(_ nanoseconds: UInt64) -> UInt64 { min(longest, max(1, nanoseconds / 1000)) }

    /// Both shards' deliveries.
    public static func + (a: DeliveryTimes, b: DeliveryTimes) -> DeliveryTimes {
        var sum = DeliveryTimes()
        sum.toDevice = a.toDevice
        sum.toDevice.add(b.toDevice)
        sum.fromStorage = a.fromStorage
        sum.fromStorage.add(b.fromStorage)
        sum.sinceStart = a.sinceStart
        sum.sinceStart.add(b.sinceStart)
        sum.last = max(a.last, b.last)
        return sum
    }

    /// Microseconds from the fan-out's start until `percent`% of the delivered notifications had
    /// reached their devices (0 when none was delivered).
    public func reached(percent: Double) -> UInt64 {
        sinceStart.totalCount == 0 ? 0 : sinceStart.valueAtPercentile(percent)
    }

    /// Notifications delivered per second, from the fan-out's start to the last delivery.
    public var perSecond: Double {
        guard sinceStart.totalCount > 0 else { return 0 }
        return Double(sinceStart.totalCount) / max(Double(last) / 1e9, 1e-3)
    }
}
