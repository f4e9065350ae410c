import FanoutAPNs
import FanoutFiles
import FanoutMeasure
import FanoutNotation
import FanoutResults
import Foundation
import Histogram

// What a threshold's `GateMetric` reads of a run: its metrics, its counts by reason, and the
// worst window of its interval log.

extension RunRecord {
    /// `metric`'s value, as a share where `share` says so (of `sent` for errors and the reasons'
    /// counts); `nil` when the run did not measure it.
    public func value(_ metric: GateMetric, share: Bool) -> Double? {
        switch metric {
        case .run(let metric):
            return share ? self.share(metric) : metrics[metric]
        case .rejected(let reason):
            return count(rejectedByReason[reason] ?? 0, share: share)
        case .failed(let cause):
            return count(failedByCause[cause] ?? 0, share: share)
        case .window:
            return windows[metric]
        }
    }

    private func count(_ count: Int, share: Bool) -> Double {
        guard share else { return Double(count) }
        let sent = metrics[.sent] ?? 0
        return sent > 0 ? Double(count) / sent : 0
    }

    /// The worst `seconds`-long window's `metric` (a latency, ms) in `directory/latency.hlog`:
    /// windows of whole intervals, slid one interval at a time, over the intervals that begin
    /// at or after `warmUp` seconds (the run's own figures leave the warm-up out too). A run
    /// no longer than the window is one window. `nil` when no latency was logged after the
    /// warm-up.
    static func worstWindow(
        in directory: String,
        seconds: Int,
        metric: RunMetric,
        warmUp: Double
    ) throws(ResultsError) -> Double? {
        let path = directory + "/latency.hlog"
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw ResultsError(.unreadable, "cannot read \(path): \(error.reason)")
        }
        let entries = try IntervalLog.read(text, file: path).entries.filter { $0.start >= warmUp - 1e-9 }
        // The log's interval is its longest (the last is cut short where the run ended).
        guard let interval = entries.map(\.length).max(), interval > 0 else { return nil }
        let per = Double(seconds) / interval
        let whole = entries.map(\.length).reduce(0, +) <= Double(seconds) + 1e-9
        guard whole || (abs(per - per.rounded()) < 1e-6 && per >= 1) else {
            throw ResultsError(
                .inconsistent,
                "\(path) holds intervals of \(interval) s: a window is a whole number of them, not \(seconds) s"
            )
        }
        let width = min(Int(per.rounded()), entries.count)
        let percentile = Self.percentiles[metric] ?? 100
        var worst: Double?
        // The window's counts by bucket, slid: each interval's non-zero buckets added as it
        // enters and taken away as it leaves (a second holds a few hundred; the counts array
        // 24,000), and a histogram built from the sum for each window's percentile.
        let buckets = entries.map { entry in
            var counts: [(index: Int, count: UInt64)] = []
            entry.histogram.forEachCount { counts.append(($0, $1)) }
            return counts
        }
        var sum: [Int: UInt64] = [:]
        for last in buckets.indices {
            for (index, count) in buckets[last] { sum[index, default: 0] += count }
            if last >= width {
                for (index, count) in buckets[last - width] {
                    let left = sum[index]! - count
                    sum[index] = left == 0 ? nil : left
                }
            }
            guard last >= width - 1, !sum.isEmpty else { continue }
            var histogram = makeMicrosecondHistogram()
            for (index, count) in sum { _ = histogram.record(PackedHistogram.value(atIndex: index), count: count) }
            let value = histogram.milliseconds(at: percentile)
            worst = Swift.max(worst ?? value, value)
        }
        return worst
    }

    static let percentiles: [RunMetric: Double] = [
        .p50: 50, .p90: 90, .p99: 99, .p99_9: 99.9, .p99_99: 99.99, .max: 100,
    ]
}

extension RunSet {
    /// Whether every run has `metric`.
    public func measures(_ metric: GateMetric) -> Bool { runs.allSatisfy { $0.value(metric, share: false) != nil } }

    /// The median of `metric` over the repeats.
    public func median(_ metric: GateMetric, share: Bool = false) -> Double {
        Self.median(runs.map { $0.value(metric, share: share) ?? 0 })
    }

    /// The median over the repeats of each one's worst `seconds`-long window's `metric` (ms);
    /// `nil` when a repeat's latency.hlog cannot be read or logged nothing after the warm-up.
    public func worstWindow(seconds: Int, metric: RunMetric) -> Double? {
        var values: [Double] = []
        for run in runs {
            let value = try? RunRecord.worstWindow(
                in: run.directory,
                seconds: seconds,
                metric: metric,
                warmUp: run.warmUpSeconds
            )
            guard let value else { return nil }
            values.append(value)
        }
        return values.isEmpty ? nil : Self.median(values)
    }

    /// The set with each run's worst windows that `thresholds` ask for read from its
    /// latency.hlog.
    func measuringWindows(of thresholds: [Threshold]) throws(ResultsError) -> RunSet {
        var set = self
        for threshold in thresholds {
            guard case .window(let seconds, let metric) = threshold.metric else { continue }
            for index in set.runs.indices {
                let run = set.runs[index]
                set.runs[index].windows[threshold.metric] = try RunRecord.worstWindow(
                    in: run.directory,
                    seconds: seconds,
                    metric: metric,
                    warmUp: run.warmUpSeconds
                )
            }
        }
        return set
    }
}
