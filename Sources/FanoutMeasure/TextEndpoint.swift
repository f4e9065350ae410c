import FanoutListening
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix

/// A small HTTP/1.1 server of text documents by path — the sink's `/stats` and `/metrics`, a
/// sender's `/metrics` — answering GET and HEAD (405 otherwise) one request at a time per
/// connection, keep-alive as the client asks. Bounded (`Limits`) like the APNs port it serves
/// beside: so many connections at once, a request's whole arrival, an idle keep-alive.
public final class TextEndpoint: Sendable {
    /// What one client may hold of the endpoint.
    ///
    /// ```
    ///   connect ──► request's first byte ──► request whole ──► answer ──► idle ──► next first byte
    ///               └──────────── requestTimeout ───────────┘           └─ idleTimeout ─┘
    /// ```
    public struct Limits: Sendable, Hashable {
        /// Connections served at once; the next is answered 503 and closed (a scraper polls
        /// with one or two; Prometheus keeps one alive per target).
        public var maxConnections: Int
        /// How long a request may take to arrive whole (head and body), from its first byte or,
        /// before any, from the connect (slowloris: a request line dribbled, or never ended).
        public var requestTimeout: Duration
        /// How long a kept-alive connection may wait, after an answer, for its next request's
        /// first byte.
        public var idleTimeout: Duration

        /// 64 connections, 10 s to send a request, 60 s idle: a scrape interval is 15–60 s.
        public init(
            maxConnections: Int = 64,
            requestTimeout: Duration = .seconds(10),
            idleTimeout: Duration = .seconds(60)
        ) {
            self.maxConnections = maxConnections
            self.requestTimeout = requestTimeout
            self.idleTimeout = idleTimeout
        }
    }

    /// A limit reached, for the owner's log: which ("refused", "request timeout", "idle
    /// timeout"), the peer (`host:port`), and what happened.
    public typealias LimitReached = @Sendable (_ kind: String, _ peer: String, _ detail: String) -> Void

    /// What a path answers.
    public struct Answer: Sendable {
        public var status: HTTPResponseStatus
        public var type: String
        public var body: String

        public init(status: HTTPResponseStatus, type: String, body: String) {
            self.status = status
            self.type = type
            self.body = body
        }
    }

    /// Prometheus' text exposition format, 0.0.4.
    public static let prometheusType = "text/plain; version=0.0.4; charset=utf-8"
    public static let plainType = "text/plain; charset=utf-8"

    private let channel: any Channel
    /// Connections open now.
    private let open = NIOLockedValueBox(0)
    public let limits: Limits

    /// Connections open now (for tests).
    public var openConnections: Int { open.withLockedValue { $0 } }

    /// Where it listens.
    public var localAddress: SocketAddress { channel.localAddress! }

    /// Listens on `host:port` (port 0: any free one); `answer` gets the path without its query,
    /// on an event loop of `group`; `limitReached` hears of every connection refused or closed
    /// by a limit, and of accepting failing (a burst's first failure, and its end);
    /// `acceptFailed` of every failed accept (to count).
    public init(
        host: String,
        port: Int,
        group: any EventLoopGroup,
        limits: Limits = Limits(),
        limitReached: LimitReached? = nil,
        acceptFailed: (@Sendable () -> Void)? = nil,
        answer: @escaping @Sendable (_ path: String) -> Answer
    ) throws {
        self.limits = limits
        let open = open
        channel = try ServerBootstrap(group: group)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            // Out of descriptors, accepting again at once fails again at once: the listener
            // pauses, 10 ms doubling to 1 s, with autoRead off (`AcceptBackoff`; NIO's own
            // `AcceptBackoffHandler` only withholds `read` and the channel spins on).
            .serverChannelInitializer { channel in
                // Logged with the address bound (`port` may be 0: any free one).
                let report: @Sendable (AcceptBackoff.Event) -> Void = { [weak channel] event in
                    if case .failed = event { acceptFailed?() }
                    guard let (kind, detail) = event.logged else { return }
                    let address = channel?.localAddress.map(TextEndpoint.describe) ?? "\(host):\(port)"
                    limitReached?(kind, address, detail)
                }
                return channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(AcceptPauseHandler(report: report))
                }
            }
            .childChannelInitializer { channel in
                let peer = channel.remoteAddress.map(TextEndpoint.describe) ?? "unknown"
                let admitted = open.withLockedValue { count in
                    guard count < limits.maxConnections else { return false }
                    count += 1
                    return true
                }
                guard admitted else {
                    limitReached?("refused", peer, "\(limits.maxConnections) connections, the admin endpoint's limit")
                    return channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(
                            TextRefusal(maxConnections: limits.maxConnections)
                        )
                    }
                }
                channel.closeFuture.whenComplete { _ in open.withLockedValue { $0 -= 1 } }
                return channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(BytesArrivedSignal())
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                    try channel.pipeline.syncOperations.addHandler(
                        TextHandler(answer: answer, limits: limits, peer: peer, limitReached: limitReached)
                    )
                }
            }
            .bind(host: host, port: port)
            .wait()
    }

    public func close() {
        try? channel.close().wait()
    }

    /// `host:port`, with IPv6 hosts in brackets.
    static func describe(_ address: SocketAddress) -> String {
        let host = address.ipAddress ?? "?"
        let port = address.port.map(String.init) ?? "?"
        return host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }
}

/// Answers a connection past `TextEndpoint.Limits.maxConnections` with 503 and closes it.
private final class TextRefusal: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer
    private let response: String

    init(maxConnections: Int) {
        let body = "\(maxConnections) connections, the admin endpoint's limit: try again later\n"
        response =
            "HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain; charset=utf-8\r\n"
            + "content-length: \(body.utf8.count)\r\nretry-after: 1\r\nconnection: close\r\n\r\n" + body
    }

    func channelActive(context: ChannelHandlerContext) {
        let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
        context.writeAndFlush(wrapOutboundOut(ByteBuffer(string: response))).whenComplete { _ in
            bound.value.close(promise: nil)
        }
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {}

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}

/// Says, ahead of the HTTP decoder, that bytes arrived: the first byte of a request starts its
/// deadline even while the decoder holds a head not yet whole.
private final class BytesArrivedSignal: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    struct Event {}

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        context.fireUserInboundEventTriggered(Event())
        context.fireChannelRead(data)
    }
}

private final class TextHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let answer: @Sendable (String) -> TextEndpoint.Answer
    private let limits: TextEndpoint.Limits
    private let peer: String
    private let limitReached: TextEndpoint.LimitReached?
    private var head: HTTPRequestHead?
    /// Between an answer and the next request's first byte.
    private var idle = false
    private var deadline: Scheduled<Void>?

    init(
        answer: @escaping @Sendable (String) -> TextEndpoint.Answer,
        limits: TextEndpoint.Limits,
        peer: String,
        limitReached: TextEndpoint.LimitReached?
    ) {
        self.answer = answer
        self.limits = limits
        self.peer = peer
        self.limitReached = limitReached
    }

    func handlerAdded(context: ChannelHandlerContext) {
        arm(context, limits.requestTimeout, "request timeout", "no whole request within")
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        deadline?.cancel()
    }

    func channelInactive(context: ChannelHandlerContext) {
        deadline?.cancel()
        context.fireChannelInactive()
    }

    /// Closes the connection `after` from now unless disarmed first.
    private func arm(_ context: ChannelHandlerContext, _ after: Duration, _ kind: String, _ what: String) {
        deadline?.cancel()
        let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
        let (limitReached, peer) = (limitReached, peer)
        deadline = context.eventLoop.scheduleTask(in: TimeAmount(after)) {
            let span =
                after < .seconds(1)
                ? "\(after.components.attoseconds / 1_000_000_000_000_000) ms" : "\(after.components.seconds) s"
            limitReached?(kind, peer, "\(what) \(span): closed")
            bound.value.close(promise: nil)
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is BytesArrivedSignal.Event {
            if idle {
                idle = false
                arm(context, limits.requestTimeout, "request timeout", "no whole request within")
            }
            return
        }
        context.fireUserInboundEventTriggered(event)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head): self.head = head
        case .body: break
        case .end:
            guard let head else { return }
            self.head = nil
            idle = true
            arm(context, limits.idleTimeout, "idle timeout", "no request within")
            let reply =
                head.method == .GET || head.method == .HEAD
                ? answer(head.uri.split(separator: "?", maxSplits: 1).first.map(String.init) ?? "")
                : .init(status: .methodNotAllowed, type: TextEndpoint.plainType, body: "GET or HEAD only\n")
            var headers = HTTPHeaders()
            headers.add(name: "content-type", value: reply.type)
            headers.add(name: "content-length", value: String(reply.body.utf8.count))
            headers.add(name: "cache-control", value: "no-store")
            if !head.isKeepAlive { headers.add(name: "connection", value: "close") }
            let response = HTTPResponseHead(version: head.version, status: reply.status, headers: headers)
            context.write(wrapOutboundOut(.head(response)), promise: nil)
            if head.method != .HEAD {
                context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(string: reply.body)))), promise: nil)
            }
            let written = context.writeAndFlush(wrapOutboundOut(.end(nil)))
            if !head.isKeepAlive {
                let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
                written.whenComplete { _ in bound.value.close(promise: nil) }
            }
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}
