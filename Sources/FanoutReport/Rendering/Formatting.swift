import FanoutResults
import Foundation
import Histogram

extension Histogram<UInt64> {
    /// Milliseconds at `percentile` (0...100) of latencies recorded in microseconds; 100 is the
    /// largest, and an empty histogram gives 0.
    package func milliseconds(at percentile: Double) -> Double {
        guard totalCount > 0 else { return 0 }
        return Double(percentile >= 100 ? max : valueAtPercentile(percentile)) / 1000
    }
}

/// `value` milliseconds as the reports' words write them: two decimals under 10 ms, one from
/// there (`4.25`, `86.9`); the caller adds the unit.
package func millisecondsText(_ value: Double) -> String { String(format: value < 10 ? "%.2f" : "%.1f", value) }

/// A count with thousands separators, as every report writes them: 1,000,000.
package func grouped(_ value: Int) -> String { value.formatted(.number.grouping(.automatic)) }

/// A share (0...1) as a percentage to two decimals, or to two significant figures when it is
/// smaller and not 0: 1 in 10,000,000 is `0.000010%`, never `0.00%`.
package func percentFigures(_ share: Double) -> String {
    let percent = share * 100
    guard percent > 0, percent < 0.01 else { return String(format: "%.2f%%", percent) }
    let decimals = min(12, Int((-log10(percent)).rounded(.up)) + 1)
    return String(format: "%.\(decimals)f%%", percent)
}

/// A share (0...1) as a whole percentage, as the harness's lines write it: `0.314` is `31%`.
package func percentText(_ share: Double) -> String { String(format: "%.0f%%", share * 100) }

/// A share of a p99 as every harness line writes it: whole from 1%, its figures under
/// (`0.43%`: a whole percent read `0%` on one line and `≥0.43%` on another), 0 as `0%`.
package func shareOfP99Text(_ share: Double) -> String {
    share >= 0.01 || share == 0 ? percentText(share) : percentFigures(share)
}
