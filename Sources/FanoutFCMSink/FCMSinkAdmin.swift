import FanoutDevices
import FanoutListening
import FanoutMeasure
import FanoutPush
import Foundation
import NIOCore
import NIOPosix

/// The FCM sink's statistics over HTTP/1.1 on a port of their own (`fanout sink --service fcm
/// --admin HOST:PORT`), as the APNs sink's (`SinkAdmin`):
///
///     GET /stats     JSON: requests by protocol, answers by outcome, status and FCM code,
///                    access tokens, connections, the quota's window now, the digest, and the
///                    devices behind the sink (`FCMSinkFigures`)
///     GET /metrics   Prometheus' text exposition format (`fanout_fcm_sink_…`)
///
/// Anything else is 404 (405 for a method other than GET or HEAD). Every count is read as it
/// stands: an FCM sink counts each request as it answers it. There is no `/deliveries/ID`:
/// Google keeps no history of one message to show (its Data API aggregates by day).
///
/// It is served off the sink's loops (a thread of its own unless given a group) and bounded
/// (`TextEndpoint.Limits`: connections, a request's arrival, idleness), so neither a slow
/// scraper nor a client holding admin connections takes from the sends; every limit reached is
/// told to the log apart from the sink's own (`FCMService.adminLimitReached`).
public final class FCMSinkAdmin: Sendable {
    private let endpoint: TextEndpoint

    /// Where the admin endpoint listens.
    public var localAddress: SocketAddress { endpoint.localAddress }

    /// What `/metrics` shows after the sink's own figures (the return wave's, once it starts).
    public let additions = MetricsAdditions()

    public init(
        sink: FCMSink,
        host: String,
        port: Int,
        group: (any EventLoopGroup)? = nil,
        limits: TextEndpoint.Limits = .init()
    ) throws {
        let metrics = FCMSinkMetrics()
        let additions = additions
        let answer: @Sendable (String) -> TextEndpoint.Answer = { path in
            switch path {
            case "/stats", "/":
                return .init(status: .ok, type: "application/json", body: FCMSinkFigures(sink).json + "\n")
            case "/metrics":
                return .init(
                    status: .ok,
                    type: TextEndpoint.prometheusType,
                    body: metrics.exposition(of: sink) + additions.text
                )
            default:
                return .init(
                    status: .notFound,
                    type: TextEndpoint.plainType,
                    body: "not found: try /stats or /metrics\n"
                )
            }
        }
        let service = sink.service
        endpoint = try TextEndpoint(
            host: host,
            port: port,
            group: group,
            limits: limits,
            limitReached: { kind, peer, detail in service.adminLimitReached(kind, peer: peer, detail) },
            answer: answer
        )
    }

    public func close() { endpoint.close() }
}
