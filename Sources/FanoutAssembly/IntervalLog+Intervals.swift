import FanoutClient
import FanoutResults

extension IntervalLog {
    /// A run's seconds; the last one ends at `length` seconds.
    init(intervals: [LoadInterval], start: Double, length: Double) {
        self.init(
            entries: intervals.map { interval in
                let from = Double(interval.second)
                return Entry(start: from, length: max(0, min(length, from + 1) - from), histogram: interval.latencies)
            },
            start: start
        )
    }
}
