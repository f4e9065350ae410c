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
        /// Histograms and summaries written by hand (swift-prometheus makes them only of
        /// observations it records one by one; these are of figures that exist already), by
        /// family, in the order named.
        fileprivate var written: [(family: String, type: String, help: String, series: [String])] = []

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

        /// A classic histogram `NAMESPACE_SUBSYSTEM_METRIC_seconds` of a latency histogram in
        /// microseconds, at `LatencyBuckets`' bounds, with its `_sum` and `_count`:
        ///
        ///     # TYPE fanout_sender_notification_latency_seconds histogram
        ///     fanout_sender_notification_latency_seconds_bucket{shard="1/3",le="0.0001"} 0
        ///     …
        ///     fanout_sender_notification_latency_seconds_bucket{shard="1/3",le="+Inf"} 120000
        ///     fanout_sender_notification_latency_seconds_sum{shard="1/3"} 9745.2
        ///     fanout_sender_notification_latency_seconds_count{shard="1/3"} 120000
        public mutating func histogram(
            _ metric: String,
            labels: [(String, String)] = [],
            _ counts: LatencyBuckets.Counts,
            help: String
        ) {
            let family = "\(namespace)_\(subsystem)_\(metric)_seconds"
            var lines = zip(LatencyBuckets.labels + ["+Inf"], counts.cumulative).map { le, count in
                Self.series(family + "_bucket", labels + [("le", le)], "\(count)")
            }
            lines.append(Self.series(family + "_sum", labels, Self.text(counts.sumSeconds)))
            lines.append(Self.series(family + "_count", labels, "\(counts.count)"))
            add(family, "histogram", help, lines)
        }

        /// A summary `NAMESPACE_SUBSYSTEM_METRIC_seconds` of figures already known: each quantile
        /// (`quantile="0.99"`) in seconds, with the `_sum` and `_count` a summary has.
        /// swift-prometheus makes summaries only of observations it records itself.
        public mutating func summary(
            _ metric: String,
            labels: [(String, String)] = [],
            quantiles: [(quantile: String, seconds: Double)],
            sumSeconds: Double,
            count: UInt64,
            help: String
        ) {
            let family = "\(namespace)_\(subsystem)_\(metric)_seconds"
            var lines = quantiles.map { quantile, seconds in
                Self.series(family, labels + [("quantile", quantile)], Self.text(seconds))
            }
            lines.append(Self.series(family + "_sum", labels, Self.text(sumSeconds)))
            lines.append(Self.series(family + "_count", labels, "\(count)"))
            add(family, "summary", help, lines)
        }

        /// A sample value as the text format spells it: `NaN`, `+Inf`, `-Inf` or the number.
        private static func text(_ value: Double) -> String {
            value.isNaN ? "NaN" : value == .infinity ? "+Inf" : value == -.infinity ? "-Inf" : "\(value)"
        }

        private static func series(_ name: String, _ labels: [(String, String)], _ value: String) -> String {
            let all = labels.map { "\($0.0)=\"\(escaped($0.1))\"" }
            return name + (all.isEmpty ? "" : "{\(all.joined(separator: ","))}") + " \(value)"
        }

        private mutating func add(_ family: String, _ type: String, _ help: String, _ lines: [String]) {
            if let index = written.firstIndex(where: { $0.family == family }) {
                written[index].series += lines
            } else {
                written.append((family, type, help, lines))
            }
        }

        /// A label value as the text format writes it: backslash, quote and newline escaped.
        private static func escaped(_ value: String) -> String {
            value.replacing("\\", with: "\\\\").replacing("\"", with: "\\\"").replacing("\n", with: "\\n")
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
            var text = state.registry.emitToString()
            for family in scrape.written {
                text += "# HELP \(family.family) \(family.help)\n# TYPE \(family.family) \(family.type)\n"
                text += family.series.joined(separator: "\n") + "\n"
            }
            return text
        }
    }
}
