import FanoutAPNs
import FanoutFiles
import FanoutPush

/// What a threshold measures: one of a run's metrics, a count by its reason, or a latency over
/// the run's worst window.
///
/// ```
///   metric := RUN_METRIC                         (RunMetric: p99, throughput, errors, …)
///           | rejected.REASON                    (an APNs reason: rejected.TooManyRequests)
///           | failed.CAUSE                       (failed.ConnectionLost, failed.Timeout, …)
///           | window(LENGTH).PERCENTILE          (window(10s).p99: the worst 10 s of the run)
/// ```
///
/// A reason's count is a number of notifications, or with `%` a share of those sent, as
/// `errors` is. A window is a whole number of the interval log's seconds (latency.hlog holds
/// one histogram a second), slid one interval at a time over the run after its warm-up; its
/// figure is the worst window's (the highest latency), which a whole-run p99 hides when a 30 s
/// stall sits inside 10 minutes.
public enum GateMetric: Sendable, Hashable, CustomStringConvertible {
    case run(RunMetric)
    case rejected(PushReason)
    case failed(FailureCause)
    case window(seconds: Int, RunMetric)

    /// The latencies a window takes.
    public static let windowed: [RunMetric] = [.p50, .p90, .p99, .p99_9, .p99_99, .max]

    /// The metric `text` names; `nil` when it names none. Errors say what is wrong with a
    /// reason or a window that is written as one.
    public init?(parsing text: String) throws(ThresholdError) {
        if let metric = RunMetric(rawValue: text) {
            self = .run(metric)
        } else if text.hasPrefix("rejected.") {
            let name = String(text.dropFirst("rejected.".count))
            guard let reason = PushReason(rawValue: name) else {
                throw ThresholdError(
                    .metric,
                    "\(TextLines.quoted(name)) is neither an APNs reason nor an FCM error code; they are "
                        + PushReason.all.map(\.rawValue).joined(separator: ", ")
                )
            }
            self = .rejected(reason)
        } else if text.hasPrefix("failed.") {
            let name = String(text.dropFirst("failed.".count))
            guard let cause = FailureCause(rawValue: name) else {
                throw ThresholdError(
                    .metric,
                    "\(TextLines.quoted(name)) is not a failure cause; the causes are "
                        + FailureCause.allCases.map(\.rawValue).joined(separator: ", ")
                )
            }
            self = .failed(cause)
        } else if text.hasPrefix("window(") {
            self = try Self.window(text)
        } else {
            return nil
        }
    }

    /// `window(10s).p99`: a length in whole seconds (`s` or `m`), then a latency.
    private static func window(_ text: String) throws(ThresholdError) -> GateMetric {
        let body = text.dropFirst("window(".count)
        guard let close = body.firstIndex(of: ")"), body[body.index(after: close)...].hasPrefix(".") else {
            throw ThresholdError(.metric, "\(TextLines.quoted(text)): a window is written window(10s).p99")
        }
        let length = body[..<close]
        let name = String(body[body.index(close, offsetBy: 2)...])
        let number = length.dropLast()
        let scale = length.hasSuffix("m") ? 60 : length.hasSuffix("s") ? 1 : 0
        guard scale > 0, let count = Int(number), count > 0, count <= 86_400 / scale else {
            throw ThresholdError(
                .metric,
                "\(TextLines.quoted(text)): the window's length is whole seconds or minutes, like 10s or 1m"
            )
        }
        guard let metric = RunMetric(rawValue: name), windowed.contains(metric) else {
            throw ThresholdError(
                .metric,
                "\(TextLines.quoted(text)): a window measures a latency ("
                    + windowed.map(\.rawValue).joined(separator: ", ") + "), not \(TextLines.quoted(name))"
            )
        }
        return .window(seconds: count * scale, metric)
    }

    public var description: String {
        switch self {
        case .run(let metric): metric.rawValue
        case .rejected(let reason): "rejected.\(reason.rawValue)"
        case .failed(let cause): "failed.\(cause.rawValue)"
        case .window(let seconds, let metric):
            "window(\(seconds % 60 == 0 ? "\(seconds / 60)m" : "\(seconds)s")).\(metric.rawValue)"
        }
    }

    /// The run metric it is, or stands over (a window's latency); a reason's count is a count.
    var base: RunMetric? {
        switch self {
        case .run(let metric), .window(_, let metric): metric
        case .rejected, .failed: nil
        }
    }

    public var isTime: Bool { base?.isTime ?? false }
    /// Whether `%` reads the limit as a share: `errors` and the reasons' counts of `sent`, the
    /// fleet's counts of those received.
    public var takesShare: Bool { base?.takesShare ?? true }
    public var unit: String { base?.unit ?? "" }
    public var higherIsBetter: Bool { base?.higherIsBetter ?? false }
    public var needsSinkFolder: Bool { if case .run(let metric) = self { metric.needsSinkFolder } else { false } }
    public var needsDelivery: Bool { if case .run(let metric) = self { metric.needsDelivery } else { false } }
    public var needsBroadcast: Bool { if case .run(let metric) = self { metric.needsBroadcast } else { false } }
    public var needsReturnWave: Bool { if case .run(let metric) = self { metric.needsReturnWave } else { false } }
    public var isWindow: Bool { if case .window = self { true } else { false } }
}
