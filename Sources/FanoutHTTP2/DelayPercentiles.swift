import Histogram

/// Microseconds from 1 µs to an hour, three significant digits: the shape of every latency and
/// delay histogram of the sender and the sink (so that they merge and pack alike).
public func makeMicrosecondHistogram() -> Histogram<UInt64> {
    Histogram(lowestDiscernibleValue: 1, highestTrackableValue: 3_600_000_000, numberOfSignificantValueDigits: .three)
}

/// `makeMicrosecondHistogram()` with nothing recorded, made once: what `clear()` assigns.
private let emptyMicrosecondHistogram = makeMicrosecondHistogram()

extension Histogram where Count == UInt64 {
    /// Empties a histogram of `makeMicrosecondHistogram()`'s shape in O(1) on the thread that
    /// calls it: it shares an empty one's counts, which the next `record` copies whole (one
    /// `memcpy` of 184 KB). The library's `reset()` is generic code not specialised here, and
    /// zeroes the 23,552 counts one at a time: 0.6 ms each, measured on an event loop, where a
    /// recorder handing over six histograms a second stalled its connections for 4–5 ms.
    /// A histogram of another shape is reset.
    public mutating func clear() {
        let empty = emptyMicrosecondHistogram
        guard
            highestTrackableValue == empty.highestTrackableValue
                && lowestDiscernibleValue == empty.lowestDiscernibleValue
                && numberOfSignificantValueDigits == empty.numberOfSignificantValueDigits
        else { return reset() }
        self = empty
    }

    /// Records a delay of `nanoseconds` in microseconds, at least 1 (the histograms' lowest
    /// value): how every latency and delay of the sender and the sink is recorded.
    @inlinable @inline(__always)
    public mutating func record(nanoseconds: UInt64) {
        _ = record(Swift.max(1, nanoseconds / 1000))
    }
}

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

/// The sink's own delays: how late it wrote answers against their due time (its own share of a
/// client's latency), what the scenario held them for (not its own), how late its loops ran,
/// and how busy each loop's thread was (CPU time ÷ wall time, 1 = a whole core).
public struct SinkOwnDelays: Sendable, Hashable {
    public var lateness: DelayPercentiles
    /// Lateness counted from the client's send (transit included), for requests whose apns-id
    /// says when they were sent (`TimedAPNsID`); empty otherwise.
    public var fromSend: DelayPercentiles
    public var injected: DelayPercentiles
    public var loopLag: DelayPercentiles
    public var loopUtilisation: [Double]

    public init(
        lateness: DelayPercentiles = .init(),
        fromSend: DelayPercentiles = .init(),
        injected: DelayPercentiles = .init(),
        loopLag: DelayPercentiles = .init(),
        loopUtilisation: [Double] = []
    ) {
        self.lateness = lateness
        self.fromSend = fromSend
        self.injected = injected
        self.loopLag = loopLag
        self.loopUtilisation = loopUtilisation
    }
}
