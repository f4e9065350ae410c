import FanoutAPNs
import FanoutClient
import FanoutSink
import FanoutTokens
import Foundation
import NIOPosix

/// Where `--metrics` listens.
public struct MetricsAddress: Sendable, Hashable {
    public var host: String
    public var port: Int

    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }
}

/// `--metrics HOST:PORT` on `fanout send` and `fanout run`: the sender's counts in Prometheus'
/// text format at `/metrics` while the run lasts, so a fleet of shards is watched in Grafana.
///
/// ```
/// fanout_sender_requests_total 120345
/// fanout_sender_sent_total 120000
/// fanout_sender_accepted_total 119990
/// fanout_sender_rejected_total{status="410",reason="Unregistered"} 10
/// fanout_sender_failed_total{cause="timeout"} 0
/// fanout_sender_in_flight 345
/// fanout_sender_latency_seconds{quantile="0.99"} 0.0812
/// ```
///
/// Counts reach the statistics every 256 outcomes and at least once a second per connection,
/// latencies as each second closes: a scrape is at most about a second behind. It listens on a
/// thread of its own, off the sender's event loops.
final class SenderMetrics: Sendable {
    private let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    private let endpoint: TextEndpoint

    /// Where it listens.
    var port: Int { endpoint.localAddress.port ?? 0 }

    /// Serves `engine`'s statistics at `address`, labelled with its shard when it is one.
    init(at address: MetricsAddress, engine: LoadEngine) throws {
        let (host, port) = (address.host, address.port)
        let part = engine.configuration.shape.model.shard
        let shard = part == .all ? nil : part.description
        let statistics = engine.statistics
        do {
            endpoint = try TextEndpoint(host: host, port: port, group: group) { path in
                guard path == "/metrics" else {
                    return .init(status: .notFound, type: TextEndpoint.plainType, body: "not found: try /metrics\n")
                }
                return .init(
                    status: .ok,
                    type: TextEndpoint.prometheusType,
                    body: Self.exposition(of: statistics.snapshot, shard: shard)
                )
            }
        } catch {
            try? group.syncShutdownGracefully()
            throw JobError("--metrics \(host):\(port): cannot listen there: \(error)")
        }
    }

    func close() {
        endpoint.close()
        try? group.syncShutdownGracefully()
    }

    /// The text exposition of `snapshot`; with a shard, every sample carries it as a label.
    static func exposition(of snapshot: LoadSnapshot, shard: String?) -> String {
        var text = ""
        func labels(_ pairs: [(String, String)]) -> String {
            let all = (shard.map { [("shard", $0)] } ?? []) + pairs
            guard !all.isEmpty else { return "" }
            return "{" + all.map { "\($0.0)=\"\(escaped($0.1))\"" }.joined(separator: ",") + "}"
        }
        func family(
            _ name: String,
            _ type: String,
            _ help: String,
            _ samples: [(labels: [(String, String)], value: String)]
        ) {
            text += "# HELP fanout_sender_\(name) \(help)\n# TYPE fanout_sender_\(name) \(type)\n"
            for sample in samples { text += "fanout_sender_\(name)\(labels(sample.labels)) \(sample.value)\n" }
        }
        family("requests_total", "counter", "HTTP/2 requests sent, retries included.", [([], "\(snapshot.requests)")])
        family(
            "sent_total",
            "counter",
            "Notifications with a final outcome: accepted, rejected or failed.",
            [([], "\(snapshot.sent)")]
        )
        family("accepted_total", "counter", "Notifications APNs accepted (200).", [([], "\(snapshot.accepted)")])
        family(
            "rejected_total",
            "counter",
            "Notifications rejected, by status and APNs reason.",
            snapshot.rejected.sorted { $0.key.rawValue < $1.key.rawValue }.map {
                ([("status", String($0.key.status)), ("reason", $0.key.rawValue)], "\($0.value)")
            }
        )
        family(
            "failed_total",
            "counter",
            "Notifications without an answer after every try, by cause.",
            snapshot.failed.sorted { $0.key.rawValue < $1.key.rawValue }.map {
                ([("cause", $0.key.rawValue)], "\($0.value)")
            }
        )
        let answered = snapshot.answeredOK + snapshot.answers.values.reduce(0, +) + snapshot.failed.values.reduce(0, +)
        family(
            "in_flight",
            "gauge",
            "Requests sent and not yet answered or failed (as of the last counts).",
            [([], "\(max(0, snapshot.requests - answered))")]
        )
        family(
            "connections_opened_total",
            "counter",
            "Connections opened, reconnections included.",
            [([], "\(snapshot.connectionsOpened)")]
        )
        let latency = snapshot.latency
        let quantiles: [(String, Double)] = [("0.5", 50), ("0.9", 90), ("0.99", 99), ("0.999", 99.9)]
        let samples = quantiles.map { quantile, percentile in
            (
                [("quantile", quantile)],
                latency.totalCount == 0 ? "NaN" : "\(Double(latency.valueAtPercentile(percentile)) / 1e6)"
            )
        }
        family(
            "latency_seconds",
            "summary",
            "From each notification's start (its due time in the open model) to its outcome, over the seconds closed.",
            samples
        )
        // A summary's _sum and _count carry no quantile.
        let count = Int(latency.totalCount)
        text += "fanout_sender_latency_seconds_sum\(labels([])) \(latency.mean * Double(count) / 1e6)\n"
        text += "fanout_sender_latency_seconds_count\(labels([])) \(count)\n"
        return text
    }

    private static func escaped(_ value: String) -> String {
        value.replacing("\\", with: "\\\\").replacing("\"", with: "\\\"").replacing("\n", with: "\\n")
    }
}
