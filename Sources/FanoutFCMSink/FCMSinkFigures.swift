import FanoutAPNs
import FanoutDevices
import FanoutFCM
import FanoutListening
import FanoutMeasure
import FanoutPush
import Foundation
import NIOCore

/// An FCM sink's statistics as its `/stats` gives them:
///
///     {"uptime_seconds":12.5,"draining":false,"requests":1020,"accepted":900,
///      "by_protocol":{"h2":500,"http/1.1":520},
///      "by_outcome":{"delivered":900,"unregistered":50,…},"by_status":{"200":…,"404":…},
///      "by_code":{"UNREGISTERED":50,…},"access_tokens":{"issued":2,"refused":0},
///      "connections":{"open":1,"opened":3,"opened_by_protocol":{"h2":1,"http/1.1":2}},
///      "limits":{"idle timeout":1},
///      "quota":{"messages":600000,"window_seconds":60,"counted":960,"seconds_left":41.2},
///      "digest":{"count":900,"sum":"…","squares":"…"},
///      "devices":{"received":900,"delivered":850,…}}
///
/// `accepted` is what `--expect` counts (delivered and held, not a `validate_only` send's 200);
/// `by_code` what a sender classifies (FCM's errorCode: a 401, another project's 403 and a
/// method's 404 carry none); `quota` is absent with `--fcm-quota off`, `devices` without the
/// device fleet. The digest's 64-bit words are hex strings (JSON numbers lose precision past
/// 2^53).
public struct FCMSinkFigures: Encodable, Sendable {
    public var uptimeSeconds: Double
    public var draining: Bool
    public var requests: Int
    public var accepted: Int
    public var byProtocol: [String: Int]
    public var byOutcome: [String: Int]
    public var byStatus: [String: Int]
    public var byCode: [String: Int]
    public var accessTokens: [String: Int]
    /// Connections open now, and those opened since the start by the protocol they chose.
    public var openConnections: Int
    public var openedConnections: [String: Int]
    /// The sink's limits reached, by `LimitKind`'s words (`idle timeout`, `refused`, …): those
    /// reached at least once.
    public var limits: [String: Int]
    public var quota: Quota?
    /// The sends answered 200 with a token, as the sender's digest of the same sends.
    public var digest: NotificationDigest
    public var devices: DeliveryCounts?

    public struct Quota: Encodable, Sendable {
        public var messages: Int
        public var windowSeconds: Double
        /// Counted in the window open now (0: none open).
        public var counted: Int
        public var secondsLeft: Double

        enum CodingKeys: String, CodingKey {
            case messages, counted
            case windowSeconds = "window_seconds"
            case secondsLeft = "seconds_left"
        }
    }

    public init(_ sink: FCMSink, now: UInt64 = NIODeadline.now().uptimeNanoseconds) {
        let statistics = sink.service.statistics
        uptimeSeconds = Date().timeIntervalSince(statistics.startedAt)
        draining = sink.isDraining
        requests = statistics.totalRequests
        accepted = statistics.acceptedCount
        byProtocol = Dictionary(
            uniqueKeysWithValues: FCMSinkStatistics.Transport.allCases.map { ($0.name, statistics.requests(over: $0)) }
        )
        let answered = FCMSinkStatistics.Outcome.allCases.filter { statistics[$0] > 0 }
        byOutcome = Dictionary(uniqueKeysWithValues: answered.map { ($0.name, statistics[$0]) })
        byStatus = Dictionary(
            uniqueKeysWithValues: statistics.byStatus.map { ($0.key == 0 ? "other" : String($0.key), $0.value) }
        )
        byCode = Dictionary(uniqueKeysWithValues: statistics.rejectedByCode.map { ($0.key.rawValue, $0.value) })
        accessTokens = ["issued": statistics[.tokenIssued], "refused": statistics[.tokenRefused]]
        openConnections = sink.openConnections
        openedConnections = Dictionary(
            uniqueKeysWithValues: FCMSinkStatistics.Transport.allCases.map {
                ($0.name, statistics.connections(over: $0))
            }
        )
        limits = Dictionary(
            uniqueKeysWithValues: LimitKind.allCases.compactMap { kind in
                let count = statistics.limitsReached(kind)
                return count > 0 ? (kind.rawValue, count) : nil
            }
        )
        quota = sink.service.quota.map { window in
            let spent = window.spent(now: now)
            return Quota(
                messages: window.quota.messages,
                windowSeconds: Double(window.quota.window) / 1e9,
                counted: spent.count,
                secondsLeft: Double(spent.left) / 1e9
            )
        }
        digest = statistics.digest
        devices = sink.service.fleet?.snapshot().counts
    }

    enum CodingKeys: String, CodingKey {
        case uptimeSeconds = "uptime_seconds"
        case draining, requests, accepted, quota, digest, devices, connections, limits
        case byProtocol = "by_protocol"
        case byOutcome = "by_outcome"
        case byStatus = "by_status"
        case byCode = "by_code"
        case accessTokens = "access_tokens"
    }

    /// `"connections": {"open", "opened", "opened_by_protocol": {"h2", "http/1.1"}}`.
    private struct Connections: Encodable {
        var open: Int
        var opened: Int
        var openedByProtocol: [String: Int]

        enum CodingKeys: String, CodingKey {
            case open, opened
            case openedByProtocol = "opened_by_protocol"
        }
    }

    /// The digest as the APNs sink's `/stats` writes it: its words in hex.
    private struct Digest: Encodable {
        var count: UInt64
        var sum: String
        var squares: String
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(uptimeSeconds, forKey: .uptimeSeconds)
        try container.encode(draining, forKey: .draining)
        try container.encode(requests, forKey: .requests)
        try container.encode(accepted, forKey: .accepted)
        try container.encode(byProtocol, forKey: .byProtocol)
        try container.encode(byOutcome, forKey: .byOutcome)
        try container.encode(byStatus, forKey: .byStatus)
        try container.encode(byCode, forKey: .byCode)
        try container.encode(accessTokens, forKey: .accessTokens)
        try container.encode(
            Connections(
                open: openConnections,
                opened: openedConnections.values.reduce(0, +),
                openedByProtocol: openedConnections
            ),
            forKey: .connections
        )
        try container.encode(limits, forKey: .limits)
        try container.encodeIfPresent(quota, forKey: .quota)
        try container.encode(
            Digest(
                count: digest.count,
                sum: NotificationDigest.hex(digest.sum),
                squares: NotificationDigest.hex(digest.squares)
            ),
            forKey: .digest
        )
        try container.encodeIfPresent(devices, forKey: .devices)
    }

    /// One JSON object, its keys sorted.
    public var json: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Integers, strings and finite doubles: encoding cannot fail.
        return String(decoding: try! encoder.encode(self), as: UTF8.self)
    }
}

/// An FCM sink's statistics as Prometheus metrics (`fanout_fcm_sink_…`, through
/// `PrometheusMetrics`): requests by protocol, responses by status, outcome and FCM code,
/// access tokens, connections, the quota's window, and the devices behind the sink.
final class FCMSinkMetrics: Sendable {
    private let metrics = PrometheusMetrics(subsystem: "fcm_sink")

    /// The text exposition of the sink's statistics now.
    func exposition(of sink: FCMSink) -> String {
        let figures = FCMSinkFigures(sink)
        let statistics = sink.service.statistics
        let delivery = sink.service.fleet?.snapshot()
        return metrics.exposition { metrics in
            if let delivery { metrics.deviceFleet(delivery, service: .fcm) }
            for transport in FCMSinkStatistics.Transport.allCases {
                metrics.count(
                    "requests",
                    labels: [("protocol", transport.name)],
                    statistics.requests(over: transport),
                    help: "Requests answered (sends and token requests), by the protocol they came over."
                )
                metrics.count(
                    "connections_opened",
                    labels: [("protocol", transport.name)],
                    statistics.connections(over: transport),
                    help: "Connections accepted, by the protocol they chose."
                )
            }
            let byStatus = statistics.byStatus
            for status in FCMSinkStatistics.statusCounted + [0] {
                metrics.count(
                    "responses",
                    labels: [("status", status == 0 ? "other" : String(status))],
                    byStatus[status] ?? 0,
                    help: "Responses sent, by HTTP status."
                )
            }
            for outcome in FCMSinkStatistics.Outcome.allCases {
                metrics.count(
                    "outcomes",
                    labels: [("outcome", outcome.name), ("code", outcome.code?.rawValue ?? "")],
                    statistics[outcome],
                    help:
                        "Requests by what the sink made of them, with FCM's errorCode (empty where the answer has none)."
                )
            }
            metrics.count(
                "accepted",
                figures.accepted,
                help: "Sends answered 200 and bound for a device (delivered or held; not validate_only)."
            )
            metrics.gauge("connections_open", Double(figures.openConnections), help: "Connections open now.")
            for kind in LimitKind.allCases {
                metrics.count(
                    "limits",
                    labels: [("kind", kind.rawValue)],
                    statistics.limitsReached(kind),
                    help: "The sink's limits reached: connections refused, closed idle, requests reset for their time."
                )
            }
            if let quota = figures.quota {
                metrics.gauge(
                    "quota_messages",
                    Double(quota.messages),
                    help: "The project's quota: messages a window."
                )
                metrics.gauge(
                    "quota_counted",
                    Double(quota.counted),
                    help: "Messages counted against the quota in the window open now (0: none open)."
                )
            }
            metrics.gauge("uptime", unit: "seconds", figures.uptimeSeconds, help: "Seconds since the sink started.")
        }
    }
}
