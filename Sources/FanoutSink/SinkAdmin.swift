import FanoutAPNs
import FanoutMeasure
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix

/// The sink's statistics over HTTP/1.1 on a port of their own, for long runs:
///
///     GET /stats     JSON: totals, counts by status and by reason, the digest, and every open
///                    connection with its own counts (`SinkStatistics.json`)
///     GET /metrics   Prometheus' text exposition format (swift-prometheus)
///
/// Anything else is 404 (405 for a method other than GET or HEAD). Connections' counts reach
/// the statistics every 256 requests and at least once a second, so both views are at most a
/// second behind.
public final class SinkAdmin: Sendable {
    private let endpoint: TextEndpoint

    /// Where the admin endpoint listens.
    public var localAddress: SocketAddress { endpoint.localAddress }

    public init(sink: Sink, host: String, port: Int, group: any EventLoopGroup) throws {
        let metrics = SinkMetrics()
        endpoint = try TextEndpoint(host: host, port: port, group: group) { path in
            switch path {
            case "/stats", "/":
                return .init(
                    status: .ok,
                    type: "application/json",
                    body: sink.statistics.json(draining: sink.isDraining) + "\n"
                )
            case "/metrics":
                return .init(
                    status: .ok,
                    type: TextEndpoint.prometheusType,
                    body: metrics.exposition(of: sink.statistics)
                )
            default:
                return .init(
                    status: .notFound,
                    type: TextEndpoint.plainType,
                    body: "not found: try /stats or /metrics\n"
                )
            }
        }
    }

    public func close() {
        endpoint.close()
    }
}

/// The statistics as Prometheus metrics (`fanout_sink_…`, through `PrometheusMetrics`).
final class SinkMetrics: Sendable {
    private let metrics = PrometheusMetrics(subsystem: "sink")

    /// The text exposition of the statistics now.
    func exposition(of statistics: SinkStatistics) -> String {
        let summary = statistics.summary
        return metrics.exposition { metrics in
            // The sink's own delays, as quantile-labelled gauges in seconds.
            let delays = summary.ownDelays
            for (metric, delay, help) in [
                ("lateness", delays.lateness, "How long after its due time the sink wrote an answer: its own delay."),
                (
                    "lateness_from_send", delays.fromSend,
                    "Lateness counted from the client's send (timed apns-ids): the queues on the way in too."
                ),
                (
                    "injected", delays.injected,
                    "How long the scenario held answers (latency, pacing, stalls): not the sink's own."
                ),
                ("loop_lag", delays.loopLag, "How late the sink's event loops ran what fell due."),
            ] {
                metrics.quantiles(metric, [("0.5", delay.p50), ("0.99", delay.p99), ("1", delay.max)], help: help)
            }
            for (loop, share) in delays.loopUtilisation.enumerated() {
                metrics.gauge(
                    "loop_cpu_utilisation",
                    labels: [("loop", String(loop))],
                    share,
                    help: "Each event loop's CPU time since the sink started over the time since then (1 = a core)."
                )
            }
            metrics.count("requests", summary.requests, help: "Requests received.")
            metrics.count(
                "responses",
                labels: [("status", "200"), ("reason", "")],
                summary.accepted,
                help: "Responses sent, by status and APNs reason."
            )
            for (reason, value) in summary.rejected {
                metrics.count(
                    "responses",
                    labels: [("status", String(reason.status)), ("reason", reason.rawValue)],
                    value,
                    help: "Responses sent, by status and APNs reason."
                )
            }
            metrics.count("payload_bytes", summary.bodyBytes, help: "Payload bytes received.")
            metrics.count("streams_reset", summary.streamsReset, help: "Streams the client reset.")
            metrics.gauge(
                "peak_streams",
                Double(summary.peakConcurrentStreams),
                help: "The most streams open at once on one connection."
            )
            metrics.count("connections_opened", summary.connectionsOpened, help: "Connections accepted.")
            metrics.gauge(
                "connections_open",
                Double(summary.connectionsOpened - summary.connectionsClosed),
                help: "Connections open now."
            )
            metrics.gauge(
                "uptime",
                unit: "seconds",
                Date().timeIntervalSince(statistics.startedAt),
                help: "Seconds since the sink started."
            )
        }
    }
}

extension SinkStatistics {
    /// The statistics as one JSON object:
    ///
    ///     {"uptime_seconds":12.5,"draining":false,"requests":…,"accepted":…,"rejected":…,
    ///      "by_status":{"200":…,"410":…},"by_reason":{"Unregistered":…},"payload_bytes":…,
    ///      "streams_reset":…,"peak_streams":…,"connections":{"opened":…,"closed":…,"open":…},
    ///      "digest":{"count":…,"sum":"…","squares":"…"},
    ///      "own_delays":{"lateness_ms":{"p50":…,"p99":…,"max":…,"count":…},"injected_ms":{…},
    ///          "loop_lag_ms":{…},"loop_utilisation":[0.42]},
    ///      "open_connections":[{"id":1,"peer":"127.0.0.1:50312","opened_at":"…","requests":…,
    ///          "accepted":…,"rejected":…,"by_status":{…},"by_reason":{…},"payload_bytes":…,
    ///          "streams_reset":…,"peak_streams":…}]}
    ///
    /// The digest's 64-bit words are hex strings (JSON numbers lose precision past 2^53).
    public func json(draining: Bool = false) -> String {
        let summary = summary
        let open = openConnections
        let dates = ISO8601DateFormatter()
        dates.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        func object(_ pairs: [(String, String)]) -> String {
            "{" + pairs.map { "\"\($0.0)\":\($0.1)" }.joined(separator: ",") + "}"
        }
        func string(_ text: String) -> String {
            var escaped = "\""
            for scalar in text.unicodeScalars {
                switch scalar {
                case "\"": escaped += "\\\""
                case "\\": escaped += "\\\\"
                case _ where scalar.value < 0x20: escaped += String(format: "\\u%04x", scalar.value)
                default: escaped.unicodeScalars.append(scalar)
                }
            }
            return escaped + "\""
        }
        func byStatus(_ accepted: Int, _ rejected: [APNsReason: Int]) -> String {
            var counts: [Int: Int] = [:]
            if accepted > 0 { counts[200] = accepted }
            for (reason, count) in rejected { counts[reason.status, default: 0] += count }
            return object(counts.sorted { $0.key < $1.key }.map { (String($0.key), String($0.value)) })
        }
        func byReason(_ rejected: [APNsReason: Int]) -> String {
            object(rejected.sorted { $0.key.rawValue < $1.key.rawValue }.map { ($0.key.rawValue, String($0.value)) })
        }
        let connections = open.map { connection in
            object([
                ("id", String(connection.id)),
                ("peer", string(connection.peer)),
                ("opened_at", string(dates.string(from: connection.openedAt))),
                ("requests", String(connection.requests)),
                ("accepted", String(connection.accepted)),
                ("rejected", String(connection.rejected.values.reduce(0, +))),
                ("by_status", byStatus(connection.accepted, connection.rejected)),
                ("by_reason", byReason(connection.rejected)),
                ("payload_bytes", String(connection.bodyBytes)),
                ("streams_reset", String(connection.streamsReset)),
                ("peak_streams", String(connection.peakStreams)),
            ])
        }
        return object([
            ("uptime_seconds", String(format: "%.3f", Date().timeIntervalSince(startedAt))),
            ("draining", String(draining)),
            ("requests", String(summary.requests)),
            ("accepted", String(summary.accepted)),
            ("rejected", String(summary.rejected.values.reduce(0, +))),
            ("by_status", byStatus(summary.accepted, summary.rejected)),
            ("by_reason", byReason(summary.rejected)),
            ("payload_bytes", String(summary.bodyBytes)),
            ("streams_reset", String(summary.streamsReset)),
            ("peak_streams", String(summary.peakConcurrentStreams)),
            (
                "connections",
                object([
                    ("opened", String(summary.connectionsOpened)),
                    ("closed", String(summary.connectionsClosed)),
                    ("open", String(summary.connectionsOpened - summary.connectionsClosed)),
                ])
            ),
            (
                "digest",
                object([
                    ("count", String(summary.digest.count)),
                    ("sum", string(String(summary.digest.sum, radix: 16))),
                    ("squares", string(String(summary.digest.squares, radix: 16))),
                ])
            ),
            ("own_delays", ownDelaysJSON(summary.ownDelays, object: object)),
            ("open_connections", "[" + connections.joined(separator: ",") + "]"),
        ])
    }

    /// The sink's own delays (milliseconds) and each loop's CPU share.
    private func ownDelaysJSON(_ delays: SinkOwnDelays, object: ([(String, String)]) -> String) -> String {
        func delay(_ percentiles: DelayPercentiles) -> String {
            object([
                ("p50", String(format: "%.3f", Double(percentiles.p50) / 1000)),
                ("p99", String(format: "%.3f", Double(percentiles.p99) / 1000)),
                ("max", String(format: "%.3f", Double(percentiles.max) / 1000)),
                ("count", String(percentiles.count)),
            ])
        }
        return object([
            ("lateness_ms", delay(delays.lateness)),
            ("from_send_ms", delay(delays.fromSend)),
            ("injected_ms", delay(delays.injected)),
            ("loop_lag_ms", delay(delays.loopLag)),
            (
                "loop_utilisation",
                "[" + delays.loopUtilisation.map { String(format: "%.4f", $0) }.joined(separator: ",") + "]"
            ),
        ])
    }
}
