import FanoutAPNs
import FanoutChannels
import FanoutDevices
import FanoutListening
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
///     GET /deliveries/APNS-ID   with the device fleet: a recent notification's history
///                    (`DeliveryHistoryPage`)
///
/// Anything else is 404 (405 for a method other than GET or HEAD). Connections' counts reach
/// the statistics every 256 requests and at least once a second, so both views are at most a
/// second behind.
///
/// It is served off the APNs loops (a thread of its own unless given a group) and bounded
/// like the APNs port (`TextEndpoint.Limits`: connections, a request's arrival, idleness), so
/// neither a slow scraper nor a client holding admin connections takes from the notifications;
/// every limit reached goes to the sink's `LimitLog` with the peer.
public final class SinkAdmin: Sendable {
    private let endpoint: TextEndpoint

    /// Where the admin endpoint listens.
    public var localAddress: SocketAddress { endpoint.localAddress }

    /// Connections open now (for tests).
    public var openConnections: Int { endpoint.openConnections }

    /// What `/metrics` shows after the sink's own figures (the return wave's, once it starts).
    public let additions = MetricsAdditions()

    public init(
        sink: Sink,
        host: String,
        port: Int,
        group: (any EventLoopGroup)? = nil,
        limits: TextEndpoint.Limits = .init()
    ) throws {
        let metrics = SinkMetrics()
        let additions = additions
        let answer: @Sendable (String) -> TextEndpoint.Answer = { path in
            switch path {
            case "/stats", "/":
                return .init(
                    status: .ok,
                    type: "application/json",
                    body: sink.statistics.json(draining: sink.isDraining, broadcast: sink.broadcastCounts) + "\n"
                )
            case "/metrics":
                return .init(
                    status: .ok,
                    type: TextEndpoint.prometheusType,
                    body: metrics.exposition(of: sink.statistics, fleet: sink.fleet) + additions.text
                )
            case let path where path.hasPrefix(DeliveryHistoryPage.prefix):
                let (found, body) = DeliveryHistoryPage.answer(path, fleet: sink.fleet)
                return .init(
                    status: found ? .ok : .notFound,
                    type: found ? "application/json" : TextEndpoint.plainType,
                    body: body
                )
            default:
                return .init(
                    status: .notFound,
                    type: TextEndpoint.plainType,
                    body: "not found: try /stats, /metrics or /deliveries/APNS-ID\n"
                )
            }
        }
        let log = sink.limits
        endpoint = try TextEndpoint(
            host: host,
            port: port,
            group: group,
            limits: limits,
            limitReached: { kind, peer, detail in log.note(kind, on: .admin, peer: peer, detail) },
            acceptFailed: { [statistics = sink.statistics] in statistics.adminAcceptFailed() },
            answer: answer
        )
    }

    public func close() { endpoint.close() }
}

/// The statistics as Prometheus metrics (`fanout_sink_…`, through `PrometheusMetrics`).
final class SinkMetrics: Sendable {
    private let metrics = PrometheusMetrics(subsystem: "sink")

    /// The text exposition of the statistics now.
    func exposition(of statistics: SinkStatistics, fleet: DeviceFleetShards? = nil) -> String {
        let summary = statistics.summary
        let delivery = fleet?.snapshot()
        return metrics.exposition { metrics in
            if let delivery { metrics.deviceFleet(delivery) }
            let histograms = statistics.timing.histograms
            metrics.ownDelayHistograms(
                lateness: histograms.lateness,
                fromSend: histograms.fromSend,
                injected: histograms.injected
            )
            // The sink's own delays as summaries (p50, p99, "1" the maximum; kept for one
            // release beside the histograms above, docs/reports.md).
            for (metric, histogram, help) in [
                (
                    "lateness", histograms.lateness,
                    "How long after its due time the sink wrote an answer: its own delay."
                ),
                (
                    "lateness_from_send", histograms.fromSend,
                    "Lateness counted from the client's send (timed apns-ids): the queues on the way in too."
                ),
                (
                    "injected", histograms.injected,
                    "How long the scenario held answers (latency, pacing, stalls): not the sink's own."
                ),
                ("loop_lag", histograms.loopLag, "How late the sink's event loops ran what fell due."),
            ] {
                let delay = DelayPercentiles(histogram)
                metrics.summary(
                    metric,
                    of: histogram,
                    [("0.5", delay.p50), ("0.99", delay.p99), ("1", delay.max)],
                    help: help
                )
            }
            for (loop, share) in summary.ownDelays.loopUtilisation.enumerated() {
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
            metrics.count(
                "connections_refused",
                summary.defences.refused,
                help: "Connections refused at a limit (in all, from one address, idle from one address)."
            )
            metrics.count(
                "connections_evicted",
                summary.defences.evicted,
                help: "Connections that had sent no authenticated request, closed to make room for a new one."
            )
            metrics.count(
                "connections_enhance_your_calm",
                summary.defences.enhanceYourCalm,
                help: "Connections ended with GOAWAY ENHANCE_YOUR_CALM (a flood limit)."
            )
            metrics.count(
                "accept_errors",
                summary.defences.acceptErrors,
                help: "Accepts that failed (EMFILE, ENFILE), each followed by a pause."
            )
            metrics.count(
                "admin_accept_errors",
                summary.defences.adminAcceptErrors,
                help: "Accepts on the admin port that failed (EMFILE, ENFILE), each followed by a pause."
            )
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
    ///      "streams_reset":…,"peak_streams":…,"connections":{"opened":…,"closed":…,"open":…,
    ///          "refused":…,"evicted":…,"enhance_your_calm":…,"accept_errors":…},
    ///      "digest":{"count":…,"sum":"…","squares":"…"},
    ///      "own_delays":{"lateness_ms":{"p50":…,"p99":…,"max":…,"count":…},"injected_ms":{…},
    ///          "loop_lag_ms":{…},"loop_utilisation":[0.42]},"untimed_ids":0,
    ///      "open_connections":[{"id":1,"peer":"127.0.0.1:50312","opened_at":"…","requests":…,
    ///          "accepted":…,"rejected":…,"by_status":{…},"by_reason":{…},"payload_bytes":…,
    ///          "streams_reset":…,"peak_streams":…}]}
    ///
    /// The digest's 64-bit words are hex strings (JSON numbers lose precision past 2^53).
    public func json(draining: Bool = false, broadcast: BroadcastCounts? = nil) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        encoder.nonConformingFloatEncodingStrategy = .convertToString(
            positiveInfinity: "Infinity",
            negativeInfinity: "-Infinity",
            nan: "NaN"
        )
        // Integers, strings and (so) any double: encoding cannot fail.
        return String(decoding: try! encoder.encode(figures(draining: draining, broadcast: broadcast)), as: UTF8.self)
    }

    /// The statistics as `/stats` gives them; `broadcast` when the sink had channels.
    public func figures(draining: Bool = false, broadcast: BroadcastCounts? = nil) -> SinkFigures {
        let summary = summary
        let dates = ISO8601DateFormatter()
        dates.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return SinkFigures(
            uptimeSeconds: Date().timeIntervalSince(startedAt),
            draining: draining,
            counts: SinkFigures.Counts(
                accepted: summary.accepted,
                rejected: summary.rejected,
                requests: summary.requests,
                payloadBytes: summary.bodyBytes,
                streamsReset: summary.streamsReset,
                peakStreams: summary.peakConcurrentStreams
            ),
            connections: .init(
                opened: summary.connectionsOpened,
                closed: summary.connectionsClosed,
                open: summary.connectionsOpened - summary.connectionsClosed,
                refused: summary.defences.refused,
                evicted: summary.defences.evicted,
                enhanceYourCalm: summary.defences.enhanceYourCalm,
                acceptErrors: summary.defences.acceptErrors,
                adminAcceptErrors: summary.defences.adminAcceptErrors
            ),
            digest: .init(
                count: summary.digest.count,
                sum: NotificationDigest.hex(summary.digest.sum),
                squares: NotificationDigest.hex(summary.digest.squares)
            ),
            ownDelays: summary.ownDelays.figures,
            untimedIDs: summary.untimedIDs,
            broadcast: broadcast,
            openConnections: openConnections.map { connection in
                SinkFigures.Connection(
                    id: connection.id,
                    peer: connection.peer,
                    openedAt: dates.string(from: connection.openedAt),
                    counts: SinkFigures.Counts(
                        accepted: connection.accepted,
                        rejected: connection.rejected,
                        requests: connection.requests,
                        payloadBytes: connection.bodyBytes,
                        streamsReset: connection.streamsReset,
                        peakStreams: connection.peakStreams
                    )
                )
            }
        )
    }
}

/// The sink's statistics as `/stats` gives them (`SinkStatistics.figures`). The digest's 64-bit
/// words are hex strings (JSON numbers lose precision past 2^53).
public struct SinkFigures: Encodable, Sendable {
    public var uptimeSeconds: Double
    public var draining: Bool
    /// The whole sink's counts, written at the top level.
    public var counts: Counts
    public var connections: Connections
    public var digest: Digest
    public var ownDelays: SinkOwnDelays.Figures
    /// Timed apns-ids not believed (`SinkSummary.untimedIDs`): kept out of `ownDelays`.
    public var untimedIDs: Int
    /// Broadcast channels and what their broadcasts reached, when the sink had channels.
    public var broadcast: BroadcastCounts?
    public var openConnections: [Connection]

    /// Requests and answers, as the sink and each connection count them:
    /// `"requests", "accepted", "rejected", "by_status": {"200": …}, "by_reason": {…},
    /// "payload_bytes", "streams_reset", "peak_streams"`.
    public struct Counts: Encodable, Sendable {
        public var accepted: Int
        public var rejected: [APNsReason: Int]
        public var requests: Int
        public var payloadBytes: Int
        public var streamsReset: Int
        public var peakStreams: Int

        enum CodingKeys: String, CodingKey {
            case requests, accepted, rejected
            case byStatus = "by_status"
            case byReason = "by_reason"
            case payloadBytes = "payload_bytes"
            case streamsReset = "streams_reset"
            case peakStreams = "peak_streams"
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            var byStatus: [String: Int] = accepted > 0 ? ["200": accepted] : [:]
            for (reason, count) in rejected { byStatus[String(reason.status), default: 0] += count }
            try container.encode(requests, forKey: .requests)
            try container.encode(accepted, forKey: .accepted)
            try container.encode(rejected.values.reduce(0, +), forKey: .rejected)
            try container.encode(byStatus, forKey: .byStatus)
            try container.encode(
                Dictionary(uniqueKeysWithValues: rejected.map { ($0.key.rawValue, $0.value) }),
                forKey: .byReason
            )
            try container.encode(payloadBytes, forKey: .payloadBytes)
            try container.encode(streamsReset, forKey: .streamsReset)
            try container.encode(peakStreams, forKey: .peakStreams)
        }
    }

    /// `"connections": {"opened", "closed", "open", "refused", "evicted", "enhance_your_calm",
    /// "accept_errors", "admin_accept_errors"}` (`SinkDefences`).
    public struct Connections: Encodable, Sendable {
        public var opened: Int
        public var closed: Int
        public var open: Int
        public var refused: Int
        public var evicted: Int
        public var enhanceYourCalm: Int
        public var acceptErrors: Int
        public var adminAcceptErrors: Int

        enum CodingKeys: String, CodingKey {
            case opened, closed, open, refused, evicted
            case enhanceYourCalm = "enhance_your_calm"
            case acceptErrors = "accept_errors"
            case adminAcceptErrors = "admin_accept_errors"
        }
    }

    public struct Digest: Encodable, Sendable {
        public var count: UInt64
        public var sum: String
        public var squares: String
    }

    public struct Connection: Encodable, Sendable {
        public var id: Int
        public var peer: String
        public var openedAt: String
        public var counts: Counts

        enum CodingKeys: String, CodingKey {
            case id, peer
            case openedAt = "opened_at"
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(id, forKey: .id)
            try container.encode(peer, forKey: .peer)
            try container.encode(openedAt, forKey: .openedAt)
            try counts.encode(to: encoder)
        }
    }

    enum CodingKeys: String, CodingKey {
        case uptimeSeconds = "uptime_seconds"
        case draining, connections, digest
        case ownDelays = "own_delays"
        case untimedIDs = "untimed_ids"
        case openConnections = "open_connections"
        case broadcast
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(uptimeSeconds, forKey: .uptimeSeconds)
        try container.encode(draining, forKey: .draining)
        try counts.encode(to: encoder)
        try container.encode(connections, forKey: .connections)
        try container.encode(digest, forKey: .digest)
        try container.encode(ownDelays, forKey: .ownDelays)
        try container.encode(untimedIDs, forKey: .untimedIDs)
        try container.encodeIfPresent(broadcast, forKey: .broadcast)
        try container.encode(openConnections, forKey: .openConnections)
    }
}
