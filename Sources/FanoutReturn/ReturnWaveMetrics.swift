import FanoutMeasure
import FanoutResults

/// The wave's figures as of the last second closed (`ReturnWave.live`).
public struct ReturnWaveLive: Sendable {
    public var byKind: [String: ReturnWaveSummary.KindCounts] = [:]
    public var byStatus: [String: Int] = [:]
    public var failures: [String: Int] = [:]
    /// Requests written and not yet answered, and those waiting for a connection (a stream).
    public var inFlight = 0
    /// Latency from each due time to its answer, at Prometheus' buckets (`nil` until published).
    public var latency: LatencyBuckets.Counts?
    /// The last second closed: its offered, answered and errors, its latencies.
    public var lastSecond: ReturnSecond?

    public init(
        byKind: [String: ReturnWaveSummary.KindCounts] = [:],
        byStatus: [String: Int] = [:],
        failures: [String: Int] = [:],
        inFlight: Int = 0,
        latency: LatencyBuckets.Counts? = nil,
        lastSecond: ReturnSecond? = nil
    ) {
        self.byKind = byKind
        self.byStatus = byStatus
        self.failures = failures
        self.inFlight = inFlight
        self.latency = latency
        self.lastSecond = lastSecond
    }
}

/// The return wave at `/metrics` (issue #63): `fanout run --metrics` and `fanout sink --admin`
/// append it to their own figures while the wave goes, a second behind at most.
///
/// ```
/// fanout_return_requests_total{kind="open"} 4012
/// fanout_return_answered_total{kind="open"} 4000
/// fanout_return_errors_total{kind="open"} 12
/// fanout_return_answers_total{status="200"} 7988
/// fanout_return_failures_total{cause="timeout"} 3
/// fanout_return_in_flight 12
/// fanout_return_latency_seconds_bucket{le="0.0819"} 7990
/// fanout_return_second_requests 1996
/// fanout_return_second_p99_seconds 0.0021
/// ```
/// The counters are to be added up across shards; the last second's gauges are one process's.
public final class ReturnWaveMetrics: Sendable {
    private let metrics = PrometheusMetrics(subsystem: "return")
    private let wave: ReturnWave

    public init(_ wave: ReturnWave) { self.wave = wave }

    /// The text exposition of the wave now.
    public func exposition() -> String {
        let live = wave.live
        return metrics.exposition { metrics in
            for kind in ReturnRequestKind.allCases.map(\.rawValue) {
                let counts = live.byKind[kind] ?? .init()
                let labels = [("kind", kind)]
                metrics.count(
                    "requests",
                    labels: labels,
                    counts.offered,
                    help: "Requests the wave offered the backend (sent at their due time), by kind."
                )
                metrics.count(
                    "answered",
                    labels: labels,
                    counts.answered,
                    help: "Requests the backend answered, by kind."
                )
                metrics.count(
                    "errors",
                    labels: labels,
                    counts.errors,
                    help: "Requests answered 400 or above, or not answered, by kind."
                )
            }
            for (status, count) in live.byStatus.sorted(by: { $0.key < $1.key }) {
                metrics.count("answers", labels: [("status", status)], count, help: "The backend's answers, by status.")
            }
            for cause in ReturnFailure.allCases.map(\.rawValue) {
                metrics.count(
                    "failures",
                    labels: [("cause", cause)],
                    live.failures[cause] ?? 0,
                    help: "Requests without an answer, by why (connect, closed, timeout, unreachable, unfinished)."
                )
            }
            metrics.gauge(
                "in_flight",
                Double(live.inFlight),
                help: "Requests written and not yet answered, and those waiting for a connection."
            )
            if let latency = live.latency {
                metrics.histogram(
                    "latency",
                    latency,
                    help: "From each request's due time to its answer (a wait for a connection included)."
                )
            }
            if let second = live.lastSecond {
                metrics.gauge(
                    "second_requests",
                    Double(second.offered),
                    help: "Requests due in the last second closed."
                )
                metrics.gauge("second_answered", Double(second.answered), help: "Answers in the last second closed.")
                metrics.gauge("second_errors", Double(second.errors), help: "Errors in the last second closed.")
                for (name, micros) in [("p50", second.p50Micros), ("p99", second.p99Micros), ("max", second.maxMicros)]
                {
                    metrics.gauge(
                        "second_\(name)",
                        unit: "seconds",
                        Double(micros) / 1e6,
                        help: "The \(name) latency of the answers in the last second closed."
                    )
                }
            }
        }
    }
}
