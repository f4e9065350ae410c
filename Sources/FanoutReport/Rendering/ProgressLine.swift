import FanoutMeasure
import FanoutNotation
import FanoutResults
import Foundation

/// The line a terminal shows while a run goes:
///
/// ```
///   12.0 s  148,230/s  1,776,512 / 5,000,000 (35.5%)  errors 12 (0.00068%)  p99 4.21 ms  ETA 21.8 s
/// ```
///
/// The ETA assumes the current rate holds; without a known total it shows what is done.
public struct ProgressLine: Sendable {
    public var progress: RunProgress
    public var total: UInt64?

    public init(_ progress: RunProgress, total: UInt64?) {
        self.progress = progress
        self.total = total
    }

    public var text: String {
        let seconds = progress.elapsed.seconds
        var parts = [
            String(format: "%.1f s", seconds),
            "\(grouped(Int(progress.ratePerSecond.rounded())))/s",
        ]
        if let total, total > 0 {
            let share = Double(progress.finished) / Double(total) * 100
            parts.append("\(grouped(progress.finished)) / \(grouped(Int(total))) (\(String(format: "%.1f", share))%)")
        } else {
            parts.append("\(grouped(progress.finished)) done")
        }
        let share = progress.finished > 0 ? Double(progress.errors) / Double(progress.finished) : 0
        parts.append("errors \(grouped(progress.errors))" + (progress.errors > 0 ? " (\(percentFigures(share)))" : ""))
        if progress.latency.totalCount > 0 {
            parts.append(String(format: "p99 %.2f ms", Double(progress.latency.valueAtPercentile(99)) / 1000))
        }
        if let total, progress.ratePerSecond > 0, UInt64(progress.finished) < total {
            let left = Double(total - UInt64(progress.finished)) / progress.ratePerSecond
            parts.append(String(format: "ETA %.1f s", left))
        }
        return parts.joined(separator: "  ")
    }
}
