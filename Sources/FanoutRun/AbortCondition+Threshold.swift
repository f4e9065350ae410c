import FanoutClient
import FanoutNotation
import FanoutReport

extension AbortCondition {
    /// The window `--abort-on` judges over when its metric names none (`--abort-window`).
    public static let defaultWindow: Duration = .seconds(10)

    /// An `--abort-on` condition in the gate's grammar (`Threshold`), judged over the last
    /// `window` — or the window it names itself, `window(5s).p99 > 200ms`. Only what a run
    /// knows while it goes can abort it: latencies, throughput, lag and the counts of sent,
    /// errors, rejected and failed (by reason too, and as shares of sent); a metric of the
    /// sink's folder, the device fleet, a broadcast or a baseline is refused, saying so.
    public init(parsing text: String, window: Duration = defaultWindow) throws(ThresholdError) {
        let threshold = try Threshold(parsing: text)
        guard case .value(let limit) = threshold.limit else {
            throw ThresholdError(.limit, "\(threshold.text): --abort-on has no baseline to compare with; give a value")
        }
        let seconds = Int(window.components.seconds)
        guard seconds >= 1, window == .seconds(seconds) else {
            throw ThresholdError(.limit, "--abort-window is whole seconds, like 10s; got \(window)")
        }
        let measure: Measure
        var windowSeconds = seconds
        switch threshold.metric {
        case .run(let metric):
            measure = try Self.measure(of: metric, in: threshold)
        case .rejected(let reason):
            measure = .rejected(reason)
        case .failed(let cause):
            measure = .failed(cause)
        case .window(let length, let metric):
            measure = try Self.measure(of: metric, in: threshold)
            windowSeconds = length
        }
        self.init(
            text: threshold.text,
            measure: measure,
            comparison: threshold.comparison,
            limit: limit,
            isShare: threshold.isShare,
            windowSeconds: windowSeconds
        )
    }

    private static func measure(of metric: RunMetric, in threshold: Threshold) throws(ThresholdError) -> Measure {
        switch metric {
        case .p50: return .latency(percentile: 50)
        case .p90: return .latency(percentile: 90)
        case .p99: return .latency(percentile: 99)
        case .p99_9: return .latency(percentile: 99.9)
        case .p99_99: return .latency(percentile: 99.99)
        case .max: return .latency(percentile: 100)
        case .throughput: return .throughput
        case .sent: return .sent
        case .errors: return .errors
        case .rejected: return .rejected(nil)
        case .failed: return .failed(nil)
        case .lag: return .lag
        default:
            throw ThresholdError(
                .metric,
                "\(threshold.text): \(metric.rawValue) is known only when the run has ended; --abort-on takes "
                    + "p50, p90, p99, p99.9, p99.99, max, throughput, lag, sent, errors, rejected, failed, "
                    + "rejected.REASON, failed.CAUSE and window(LENGTH).PERCENTILE"
            )
        }
    }
}
