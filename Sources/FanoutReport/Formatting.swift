import Foundation
import Histogram

extension Histogram<UInt64> {
    /// Milliseconds at `percentile` (0...100) of latencies recorded in microseconds; 100 is the
    /// largest, and an empty histogram gives 0.
    func milliseconds(at percentile: Double) -> Double {
        guard totalCount > 0 else { return 0 }
        return Double(percentile >= 100 ? max : valueAtPercentile(percentile)) / 1000
    }
}

/// A count with thousands separators, as every report writes them: 1,000,000.
func grouped(_ value: Int) -> String { value.formatted(.number.grouping(.automatic)) }
