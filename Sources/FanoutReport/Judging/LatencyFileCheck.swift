import FanoutResults
import Foundation

/// summary.json's latency percentiles against the folder's `latency.hgrm`, which Fanout writes
/// from the same histogram: a percentile outside what the file's rows allow is a file edited by
/// hand (a p99 of 1e-300 ms beside a histogram whose p99 is a second), or one run's summary
/// beside another's histogram.
///
/// ```
///        Value     Percentile TotalCount 1/(1-Percentile)
///     1124.351 0.975000000000     975314          40.00      ◄ last row below 0.99
///     1150.975 0.990234375000     990301         102.40      ◄ first row at or past 0.99
///   #[Max     =     1165.311, Total count    =      1000000]
/// ```
///
/// Each row is the value at its percentile level, so the value at 99% lies between those two
/// rows' values; the maximum is the `Max` line's. Values are milliseconds to 3 decimals. The
/// percentile iteration that writes the rows and `valueAtPercentile` that writes summary.json
/// may land a bucket apart (a p99.9 of 404.796 ms beside rows of 404.735 and 404.991 in the
/// golden run), so a value within 0.5% of the bounds is taken: what is refused is a figure
/// no histogram of these rows could give.
public struct LatencyFile: Sendable, Equatable {
    /// The rows, in the file's order: (value ms, percentile level 0…1).
    public var rows: [(value: Double, level: Double)]
    public var max: Double

    public static let fileName = "latency.hgrm"

    public static func == (a: Self, b: Self) -> Bool {
        a.max == b.max && a.rows.elementsEqual(b.rows) { $0.value == $1.value && $0.level == $1.level }
    }

    /// Reads HdrHistogram's percentile text; `nil` when it holds no row or no `Max` line.
    public init?(text: String) {
        rows = []
        var max: Double?
        for line in text.split(separator: "\n") {
            if line.hasPrefix("#[Max") {
                let fields = line.dropFirst(2).split(separator: ",")
                max = fields.first.flatMap { $0.split(separator: "=").last }.flatMap {
                    Double($0.trimmingCharacters(in: .whitespaces))
                }
                continue
            }
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count >= 3, let value = Double(fields[0]), let level = Double(fields[1]) else { continue }
            rows.append((value, level))
        }
        guard let max, !rows.isEmpty else { return nil }
        self.max = max
    }

    /// Where the value at `percentile` (0…100) must lie, from the rows either side of it.
    public func bounds(at percentile: Double) -> ClosedRange<Double> {
        if percentile >= 100 { return max...max }
        let level = percentile / 100
        let below = rows.last { $0.level < level }?.value ?? 0
        let above = rows.first { $0.level >= level }?.value ?? max
        return min(below, above)...Swift.max(below, above)
    }

    /// The slack around the bounds: HdrHistogram's buckets (0.5%) and the 3 decimals written.
    static let relativeSlack = 0.005
    static let roundingSlack = 0.001

    /// Each of `latency`'s percentiles outside what the file allows.
    public func disagreements(with latency: SummaryDocument.Latency) -> [InvalidReason] {
        SummaryDocument.Latency.percentiles.compactMap { label, percentile, value in
            let stated = latency[keyPath: value]
            let allowed = bounds(at: percentile)
            let low = allowed.lowerBound * (1 - Self.relativeSlack) - Self.roundingSlack
            let high = allowed.upperBound * (1 + Self.relativeSlack) + Self.roundingSlack
            guard stated < low || stated > high else { return nil }
            return .latencyFileDisagrees(
                percentile: label,
                summaryMs: stated,
                fileLowMs: allowed.lowerBound,
                fileHighMs: allowed.upperBound
            )
        }
    }

    /// The folder's file, read; `nil` when there is none (a folder of an older Fanout, a sink's).
    public static func read(in directory: String) -> LatencyFile? {
        guard let text = try? String(contentsOfFile: directory + "/" + fileName, encoding: .utf8) else { return nil }
        return LatencyFile(text: text)
    }
}
