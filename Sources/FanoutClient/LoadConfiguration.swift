import FanoutAPNs
import FanoutHPACK
import FanoutHTTP2
import FanoutMeasure
import FanoutNotation
import FanoutPayload
import FanoutTokens
import NIOCore

import struct Foundation.Date

/// The APNs request headers of a run besides the path (docs/apns.md, "Request").
public struct NotificationHeaders: Sendable, Hashable {
    /// `apns-topic`: the bundle id plus the push type's suffix.
    public private(set) var topic: String
    public private(set) var pushType: APNsPushType
    /// `apns-priority`; `nil` leaves it out (APNs' default, 10).
    public private(set) var priority: APNsPriority?
    /// `apns-expiration` in UNIX seconds (0: deliver once); `nil` leaves it out.
    public private(set) var expiration: Int?
    /// `apns-collapse-id`.
    public private(set) var collapseID: APNsCollapseID?
    /// Whether each notification gets an `apns-id` (a random version-4 UUID, the same on its
    /// retries, as a provider that tracks its notifications sends), or none (APNs makes one).
    public var generatesAPNsID = false
    /// Every how many requests one carries an `apns-id` with its send time (`TimedAPNsID`; 1:
    /// each, 0: none): a Fanout sink on this host times those answers' lateness from the send.
    /// The others carry none. Overrides `generatesAPNsID`. `fanout run` times one in
    /// `RunJob.timedAPNsIDs`: the id's 46 bytes on every request cost throughput.
    public var timedAPNsIDs = 0

    /// Headers APNs accepts, or the first rule they break (docs/apns.md): the topic ends with
    /// the push type's suffix, the priority is 10, 5 or 1 (5 for a background push), the
    /// expiration is not negative, the collapse id at most 64 bytes.
    public init(
        topic: String,
        pushType: APNsPushType = .alert,
        priority: Int? = nil,
        expiration: Int? = nil,
        collapseID: String? = nil,
        generatesAPNsID: Bool = false
    ) throws(APNsHeaderError) {
        try pushType.check(topic: topic)
        self.topic = topic
        self.pushType = pushType
        self.priority = try priority.map { value throws(APNsHeaderError) in try APNsPriority(checking: value) }
        if pushType == .background, let priority = self.priority, priority != .powerConsidered {
            throw APNsHeaderError(header: "apns-priority", "of a background push is 5, not \(priority)")
        }
        if let expiration, expiration < 0 {
            throw APNsHeaderError(header: "apns-expiration", "is UNIX seconds (0: deliver once), not \(expiration)")
        }
        self.expiration = expiration
        self.collapseID = try collapseID.map { text throws(APNsHeaderError) in try APNsCollapseID(checking: text) }
        self.generatesAPNsID = generatesAPNsID
    }
}

/// How load is offered: the closed model (each connection keeps its streams full) or the open
/// one (notifications due on a schedule, whatever the server does).
public struct LoadModel: Sendable {
    /// The open model: when each notification is due; latency is counted from that time.
    /// `nil` is the closed model.
    public var schedule: ArrivalSchedule?
    /// The closed model: after this long no new token is started; what is in flight finishes.
    public var duration: Duration?
    /// Notifications started in the first `warmUp` of sending (from the schedule's start, or
    /// the first request: `WarmUpOrigin`) count in every outcome but not in the latency
    /// histograms or the throughput.
    public var warmUp: Duration = .zero
    /// The open model: a run in which the generator fell further behind its schedule than this
    /// (with a stream free to send on) is invalid.
    public var maxLag: Duration = .milliseconds(100)
    /// The open model: a notification that waited longer than this for a stream (the offered
    /// rate above what the endpoint, or Fanout, carries) cuts the schedule there; the arrivals
    /// after it are not sent and the run is invalid (`--max-backlog`).
    public var maxBacklog: Duration = .seconds(10)
    /// A run whose harness (sender loops, answer reading, the embedded sink's lateness) accounts
    /// for more than this share of the measured p99 is flagged harness-bound (`--max-harness-share`).
    public var maxHarnessShare = 0.2
    /// A run that measured fewer answers than this (after the warm-up) is invalid
    /// (`--min-measured`): a p99 of 13 latencies is one of the slowest few, not a percentile.
    public var minMeasured = MinimumMeasured.default
    /// Which part of a sharded run this is (`--shard i/N`): with a schedule, the run sends
    /// its arrivals k ≡ i − 1 (mod N) (`ArrivalSchedule.sharded(_:)`); the token reader takes
    /// the same part of the tokens.
    public var shard = TokenShard.all
    /// When sending starts, by the wall clock (`--start-at`): connections open and exchange
    /// SETTINGS before it, the first request goes out at it, and seconds and the schedule
    /// count from it. `nil`: as soon as a connection is ready.
    public var startAt: Date?
    /// Why the schedule's rate was not the user's own (Apple's hosts' cap), said in the summary.
    public var rateNote: String?
    /// `--abort-on`: conditions that stop the run while it goes (`AbortCondition`).
    public var abort: AbortPolicy?

    public init(schedule: ArrivalSchedule? = nil, duration: Duration? = nil, warmUp: Duration = .zero) {
        self.schedule = schedule
        self.duration = duration
        self.warmUp = warmUp
    }

    /// The arrivals this run sends: its shard of the schedule.
    public var shardSchedule: ArrivalSchedule? { schedule?.sharded(shard) }
}

/// How much a run sends at once and how patiently: connections, streams, timeouts, tries and
/// the load model. Every default is here, once; the commands and jobs only override.
public struct LoadShape: Sendable {
    /// Connections kept open, spread over the event loops.
    public var connections = 4
    /// At most this many streams in flight on a connection, below the server's
    /// MAX_CONCURRENT_STREAMS, which is followed as it changes.
    public var streamsPerConnection = APNsRequest.concurrentStreams
    /// A request without an answer after this long is reset and tried again.
    public var streamTimeout: Duration = .seconds(30)
    /// Tries per notification before it fails: retryable answers (429, 5xx), timeouts, resets
    /// and lost connections each use one; REFUSED_STREAM (and streams a GOAWAY turned away)
    /// do not, as the server never saw them.
    public var maxAttempts = 3
    /// The first retry's delay, doubling with each further try, with full jitter.
    public var retryBackoff: Duration = .milliseconds(100)
    /// The longest retry delay.
    public var maxRetryBackoff: Duration = .seconds(5)
    /// How long the whole run may take before what is left is failed as cancelled.
    public var deadline: Duration?
    /// Open or closed, how long, the warm-up.
    public var model = LoadModel()
    /// How a connection gathers its timed work (`--coalesce`): the open model's tickets go out
    /// a pacing window at a time, each window's at its start (`PacingWindow`: up to a window
    /// early, their latency counted from the send); retries, timeouts and the rest wake it at
    /// the next instant of the wake-up window, together with every other connection of its
    /// event loop with work in the same window, and each writes what became ready in one write.
    public enum Coalescing: Sendable, Equatable, CustomStringConvertible {
        /// A pacing window that follows the round trip (¼ of it, from 200 µs to 12.8 ms:
        /// `PacingWindow`); wake-ups on 200 µs.
        case auto
        /// Both windows this long; `.zero` for exact times.
        case fixed(Duration)

        public var description: String {
            switch self {
            case .auto: "auto"
            case .fixed(let window): DurationNotation.format(window)
            }
        }

        /// The wake-up window for timed work other than tickets.
        var wakeUpWindow: Duration {
            switch self {
            case .auto: .nanoseconds(Int64(PacingWindow.floor))
            case .fixed(let window): window
            }
        }
    }

    public var coalescing: Coalescing = .auto
    /// The longest fixed window taken: h2load paces `--rps` in bursts at most 10 ms apart; ten
    /// times that is past any use.
    public static let longestCoalescing: Duration = .milliseconds(100)

    public init() {}

    /// The HTTP/2 settings of each connection: at most `streamsPerConnection` streams open,
    /// fewer while the server allows fewer; wake-ups on the `coalescing` window.
    package var http2: HTTP2Connection.Configuration {
        var http2 = HTTP2Connection.Configuration()
        http2.maxOutboundStreams = max(1, streamsPerConnection)
        http2.wakeUpWindow = coalescing.wakeUpWindow
        return http2
    }
}

/// How a run sends: where, with which headers and payload, and in what shape.
public struct LoadConfiguration: Sendable {
    public var host: String
    public var port: Int
    public var transport: HTTP2Transport
    /// `:authority` (defaults to `host`).
    public var authority: String?
    public var headers: NotificationHeaders
    public var encoder: PayloadEncoder
    /// Connections, streams, timeouts, tries, the load model.
    public var shape: LoadShape
    /// Token auth: the provider tokens sent as `authorization`, renewed as they age.
    public var providerTokens: ProviderTokens?
    /// Where tokens answered 410 (Unregistered, ExpiredToken) are written, one per line, as a
    /// provider prunes them.
    public var goneTokens: TokenLineWriter?
    /// How long the endpoint may take to be reached: each TCP connect's limit, the limit for
    /// the server's SETTINGS after it, and how long refused and timed-out connects are tried
    /// again before the run ends unreachable.
    public var connectTimeout: Duration = Self.defaultConnectTimeout
    public static let defaultConnectTimeout: Duration = .seconds(10)
    /// The bundle id whose channels the run broadcasts to (`fanout send --broadcast`): each
    /// "token" is then a channel id (`APNsRequestFields`); `nil` sends to devices.
    public var broadcastApp: String?

    public init(
        host: String,
        port: Int,
        transport: HTTP2Transport = .cleartext,
        headers: NotificationHeaders,
        encoder: PayloadEncoder,
        shape: LoadShape = LoadShape()
    ) {
        self.host = host
        self.port = port
        self.transport = transport
        self.headers = headers
        self.encoder = encoder
        self.shape = shape
    }

    /// Opens a connection to the endpoint on `loop` with this configuration's transport, SNI
    /// name, HTTP/2 settings and connect timeout: the engine's and the probe's one way in.
    package func connect<Delegate: HTTP2ConnectionDelegate>(
        on loop: any EventLoop,
        delegate: @escaping @Sendable () -> Delegate
    ) -> EventLoopFuture<(any Channel, NIOLoopBound<HTTP2ConnectionHandler<Delegate>>)> {
        HTTP2Channels.connect(
            host: host,
            port: port,
            group: loop,
            transport: transport,
            serverHostname: authority ?? host,
            configuration: shape.http2,
            // Reaching an HTTP/2 endpoint is its SETTINGS too: a listener that accepts and
            // says nothing is as unreachable as one that never accepts, in the same time.
            settingsTimeout: TimeAmount(connectTimeout),
            connectTimeout: TimeAmount(connectTimeout),
            delegate: delegate
        )
    }

    /// `failure`, with a certificate that failed verification looked at once more first:
    /// expired, or not trusted (`EndpointFailure.refined(byLeaf:)`).
    package func examine(_ failure: EndpointFailure?, on loop: any EventLoop) -> EventLoopFuture<EndpointFailure?> {
        guard let failure, failure.cause == .certificateNotTrusted else { return loop.makeSucceededFuture(failure) }
        return HTTP2Channels.peerCertificate(host: host, port: port, serverHostname: authority ?? host, group: loop)
            .map { failure.refined(byLeaf: $0) }
            .recover { _ in failure }
    }

    /// `:scheme`: the target URI's (RFC 9113 §8.3.1), http over h2c; APNs itself is https only.
    var scheme: String {
        if case .cleartext = transport { "http" } else { "https" }
    }

    /// The header fields every request shares, in the order they are sent after `:path`.
    func sharedFields(authorization: String?) -> HTTP2Fields {
        typealias Header = APNsRequest.Header
        var fields: [(name: String, value: String)] = [
            (":method", "POST"), (":scheme", scheme), (":authority", authority ?? host),
        ]
        // A broadcast names its app in the path (docs/apns.md, "Broadcast channels").
        if broadcastApp == nil { fields.append(("\(Header.topic)", headers.topic)) }
        fields.append(("\(Header.pushType)", headers.pushType.rawValue))
        if let priority = headers.priority { fields.append(("\(Header.priority)", priority.description)) }
        if let expiration = headers.expiration { fields.append(("\(Header.expiration)", String(expiration))) }
        if let collapseID = headers.collapseID { fields.append(("\(Header.collapseID)", collapseID.text)) }
        var list = HTTP2Fields(fields)
        if let authorization { list.append(name: "\(Header.authorization)", value: authorization) }
        return list
    }
}
