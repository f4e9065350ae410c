import FanoutAPNs
import FanoutClient
import FanoutMeasure
import FanoutSink
import FanoutTokens
import Foundation
import NIOPosix

/// Where `--metrics` or `--serve` listens, and how long it stays after the run.
public struct ServedAddress: Sendable, Hashable {
    public var host: String
    public var port: Int
    /// `--metrics-linger D` / `--serve-linger D`: after the run, serve on until one request has
    /// read the final figures (or report), or `D` has passed (a scraper polling every 15 s needs
    /// up to 15 s). Zero: close with the run, and the last second's figures may never be read.
    public var linger: Duration

    public init(host: String, port: Int, linger: Duration = .zero) {
        self.host = host
        self.port = port
        self.linger = linger
    }
}

/// How many scrapes the endpoint has served, for `close()` to wait for the first after the run.
final class ScrapeCount: @unchecked Sendable {
    // NSCondition guards `served`; @unchecked because the compiler cannot see that.
    private let condition = NSCondition()
    private var served = 0
    /// A stop signal ended the wait (`cancel()`): every wait after returns at once.
    private var cancelled = false

    var now: Int {
        condition.lock()
        defer { condition.unlock() }
        return served
    }

    func add() {
        condition.lock()
        served += 1
        condition.broadcast()
        condition.unlock()
    }

    /// Ends every wait, now and later (a stop signal during the linger).
    func cancel() {
        condition.lock()
        cancelled = true
        condition.broadcast()
        condition.unlock()
    }

    /// Waits until more than `count` scrapes were served, `timeout` passed or `cancel()` was
    /// called; whether they were served.
    @discardableResult
    func wait(beyond count: Int, timeout: Duration) -> Bool {
        // The bound is kept on the monotonic clock: a condition's wait takes a wall-clock date,
        // which can wake it a little early (a test measured 298.997 ms of a 300 ms linger).
        let end = ContinuousClock.now + timeout
        condition.lock()
        defer { condition.unlock() }
        while served <= count && !cancelled {
            let left = end - ContinuousClock.now
            guard left > .zero else { return false }
            let (seconds, attoseconds) = left.components
            _ = condition.wait(until: Date(timeIntervalSinceNow: Double(seconds) + Double(attoseconds) / 1e18))
        }
        return true
    }
}

/// `--metrics HOST:PORT` on `fanout send` and `fanout run`: the sender's counts in Prometheus'
/// text format at `/metrics` (swift-prometheus, as the sink's) while the run lasts, so a fleet of shards is watched in Grafana.
///
/// ```
/// fanout_sender_requests_total 120345
/// fanout_sender_sent_total 120000
/// fanout_sender_accepted_total 119990
/// fanout_sender_rejected_total{status="410",reason="Unregistered"} 10
/// fanout_sender_failed_total{cause="timeout"} 0
/// fanout_sender_in_flight 345
/// fanout_sender_latency_seconds{quantile="0.99"} 0.0812
/// fanout_sender_notification_latency_seconds_bucket{le="0.0819"} 119873
/// ```
///
/// Counts reach the statistics every 256 outcomes and at least once a second per connection,
/// latencies as each second closes: a scrape is at most about a second behind. It listens on a
/// thread of its own, off the sender's event loops.
final class SenderMetrics: Sendable {
    private let endpoint: TextEndpoint
    private let scrapes = ScrapeCount()
    private let linger: Duration

    /// Where it listens, `HOST:PORT`: reported (the console's "metrics on HOST:PORT") once it does, so that
    /// `--metrics HOST:0` can be found.
    var address: String { Sink.describe(endpoint.localAddress) }

    /// Serves `engine`'s statistics at `address`, labelled with its shard when it is one, then
    /// `additions`' (the return wave's).
    init(at address: ServedAddress, engine: LoadEngine, additions: MetricsAdditions? = nil) throws {
        let (host, port) = (address.host, address.port)
        let part = engine.configuration.shape.model.shard
        let shard = part == .all ? nil : part.description
        let statistics = engine.statistics
        let scrapes = scrapes
        linger = address.linger
        do {
            let metrics = PrometheusMetrics(subsystem: "sender")
            endpoint = try TextEndpoint(host: host, port: port) { path in
                guard path == "/metrics" else {
                    return .init(status: .notFound, type: TextEndpoint.plainType, body: "not found: try /metrics\n")
                }
                let body =
                    Self.exposition(of: statistics.snapshot, shard: shard, into: metrics) + (additions?.text ?? "")
                scrapes.add()
                return .init(status: .ok, type: TextEndpoint.prometheusType, body: body)
            }
        } catch {
            throw JobError.cannotListen(.address("--metrics", host: host, port: port), error)
        }
    }

    /// Ends the linger of `close()` at once, and any that comes after (a stop signal).
    func endLinger() { scrapes.cancel() }

    /// Stops serving: at once, or with a linger once a scrape has read the figures as they are
    /// now (the run's final ones), or the linger has passed, or `endLinger()` was called.
    func close() {
        if linger > .zero { scrapes.wait(beyond: scrapes.now, timeout: linger) }
        endpoint.close()
    }

    /// The text exposition of `snapshot` into `metrics`; with a shard, every sample carries it
    /// as a label. The latency twice: a summary of the HDR percentiles (exact for this process,
    /// not to be added up) and a histogram at `LatencyBuckets`' bounds (to be added up).
    static func exposition(of snapshot: LoadSnapshot, shard: String?, into metrics: PrometheusMetrics) -> String {
        let shardLabel = shard.map { [("shard", $0)] } ?? []
        return metrics.exposition { metrics in
            metrics.count(
                "requests",
                labels: shardLabel,
                snapshot.requests,
                help: "HTTP/2 requests sent, retries included."
            )
            metrics.count(
                "sent",
                labels: shardLabel,
                snapshot.sent,
                help: "Notifications with a final outcome: accepted, rejected or failed."
            )
            metrics.count("accepted", labels: shardLabel, snapshot.accepted, help: "Notifications APNs accepted (200).")
            for (reason, count) in snapshot.rejected.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
                metrics.count(
                    "rejected",
                    labels: shardLabel + [
                        ("status", reason.status.map(String.init) ?? "none"), ("reason", reason.rawValue),
                    ],
                    count,
                    help: "Notifications rejected, by status and the service's reason (APNs' reason, FCM's error code)."
                )
            }
            for (cause, count) in snapshot.failed.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
                metrics.count(
                    "failed",
                    labels: shardLabel + [("cause", cause.rawValue)],
                    count,
                    help: "Notifications without an answer after every try, by cause."
                )
            }
            let answered =
                snapshot.answeredOK + snapshot.answers.values.reduce(0, +) + snapshot.failed.values.reduce(0, +)
            metrics.gauge(
                "in_flight",
                labels: shardLabel,
                Double(max(0, snapshot.requests - snapshot.resent - answered)),
                help: "Requests sent and not yet answered or failed (as of the last counts)."
            )
            metrics.count(
                "connections_opened",
                labels: shardLabel,
                snapshot.connectionsOpened,
                help: "Connections opened, reconnections included."
            )
            let latency = snapshot.latency
            let help =
                "From each notification's start (its due time in the open model) to its outcome, over the seconds closed."
            // A summary as before (the same series), but typed as one: promtool checks it clean.
            metrics.summary(
                "latency",
                labels: shardLabel,
                quantiles: [("0.5", 50.0), ("0.9", 90), ("0.99", 99), ("0.999", 99.9)].map { quantile, percentile in
                    (quantile, latency.totalCount == 0 ? .nan : Double(latency.valueAtPercentile(percentile)) / 1e6)
                },
                sumSeconds: latency.mean * Double(latency.totalCount) / 1e6,
                count: latency.totalCount,
                help: help
            )
            // The summary's quantiles cannot be added up across shards; this histogram's buckets
            // can (`sum by (le)`, then `histogram_quantile`).
            metrics.histogram(
                "notification_latency",
                labels: shardLabel,
                LatencyBuckets.counts(of: latency),
                help: help + " Buckets 100 us x 2^(k/8) (docs/load-engine.md)."
            )
        }
    }
}
