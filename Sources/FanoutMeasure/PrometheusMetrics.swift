import NIOConcurrencyHelpers
import Prometheus

/// Figures that already exist elsewhere (a sender's snapshot, a sink's statistics) shown as
/// Prometheus metrics through swift-prometheus, for the sender's and the sink's `/metrics`
/// alike. Each scrape sets every metric to the value it reads: swift-prometheus' counters only
/// go up by increments, so a counter is advanced by what changed since the last scrape.
///
/// ```
///   scrape ──► update { metrics in metrics.count("requests", 120345, help: …) … } ──► text
///              fanout_<subsystem>_requests_total 120345
/// ```
public final class PrometheusMetrics: Sendable {
    /// What one scrape sets.
    public struct Scrape {
        fileprivate var state: State
        fileprivate let namespace: String
        fileprivate let subsystem: String

        private func descriptor(_ metric: String, _ unit: String, _ help: String) -> MetricNameDescriptor {
            MetricNameDescriptor(
                namespace: namespace,
                subsystem: subsystem,
                metricName: metric,
                unitName: unit,
                helpText: help
            )
        }

        private static func key(_ metric: String, _ unit: String, _ labels: [(String, String)]) -> String {
            metric + "_" + unit + "{" + labels.map { "\($0.0)=\($0.1)" }.joined(separator: ",") + "}"
        }

        /// A counter `NAMESPACE_SUBSYSTEM_METRIC_total` at `value` (never below what it showed).
        public mutating func count(_ metric: String, labels: [(String, String)] = [], _ value: Int, help: String) {
            let key = Self.key(metric, "total", labels)
            let entry =
                state.counters[key]
                ?? (state.registry.makeCounter(descriptor: descriptor(metric, "total", help), labels: labels), 0)
            if value > entry.value { entry.counter.increment(by: Int64(value - entry.value)) }
            state.counters[key] = (entry.counter, max(value, entry.value))
        }

        /// A gauge `NAMESPACE_SUBSYSTEM_METRIC[_UNIT]` at `value`.
        public mutating func gauge(
            _ metric: String,
            unit: String = "",
            labels: [(String, String)] = [],
            _ value: Double,
            help: String
        ) {
            let key = Self.key(metric, unit, labels)
            let gauge =
                state.gauges[key]
                ?? state.registry.makeGauge(descriptor: descriptor(metric, unit, help), labels: labels)
            state.gauges[key] = gauge
            gauge.set(to: value)
        }

        /// A delay's quantiles as gauges in seconds, labelled `quantile` ("0.5", "0.99", "1" for
        /// the maximum), from microseconds.
        public mutating func quantiles(
            _ metric: String,
            _ values: [(quantile: String, microseconds: UInt64)],
            help: String
        ) {
            for (quantile, microseconds) in values {
                gauge(metric, unit: "seconds", labels: [("quantile", quantile)], Double(microseconds) / 1e6, help: help)
            }
        }
    }

    fileprivate struct State {
        let registry = PrometheusCollectorRegistry()
        var counters: [String: (counter: Counter, value: Int)] = [:]
        var gauges: [String: Gauge] = [:]
    }

    private let state = NIOLockedValueBox(State())
    private let namespace: String
    private let subsystem: String

    /// Metrics named `NAMESPACE_SUBSYSTEM_…` (`fanout_sink_requests_total`).
    public init(namespace: String = "fanout", subsystem: String) {
        self.namespace = namespace
        self.subsystem = subsystem
    }

    /// Sets the metrics `set` names to their values now and returns Prometheus' text
    /// exposition of all of them.
    public func exposition(_ set: (inout Scrape) -> Void) -> String {
        state.withLockedValue { state in
            var scrape = Scrape(state: state, namespace: namespace, subsystem: subsystem)
            set(&scrape)
            state = scrape.state
            return state.registry.emitToString()
        }
    }
}
