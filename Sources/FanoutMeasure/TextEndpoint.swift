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
        /// Connections served at once, one address holding at most half (rounded up); a
        /// newcomer past either closes the least recently active connection of the address the
        /// limit is about (`TextAdmission`). A scraper polls with one or two; Prometheus keeps
        /// one alive per target.
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

    /// A limit reached, for the owner's log: which (evicted, request timeout, idle timeout, an
    /// accept that failed, accepting again), the peer (`host:port`), and what happened.
    public typealias LimitReached = @Sendable (_ kind: LimitKind, _ peer: String, _ detail: String) -> Void

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

    /// The connections open now: who holds them, and each one's channel and `host:port`.
    private struct Connections {
        var admission: TextAdmission
        var open: [Int: (channel: any Channel, peer: String)] = [:]
        var lastID = 0
    }

    private let channel: any Channel
    /// The loop it made for itself, when not given a group.
    private let ownGroup: MultiThreadedEventLoopGroup?
    private let connections: NIOLockedValueBox<Connections>
    public let limits: Limits

    /// Connections open now (for tests).
    public var openConnections: Int { connections.withLockedValue { $0.admission.count } }

    /// Where it listens.
    public var localAddress: SocketAddress { channel.localAddress! }

    /// Listens on `host:port` (port 0: any free one); `answer` gets the path without its query,
    /// on an event loop of `group` (without one, of a loop of its own); `limitReached` hears of every connection evicted or closed
    /// by a limit, and of accepting failing (a burst's first failure, and its end);
    /// `acceptFailed` of every failed accept (to count).
    public init(
        host: String,
        port: Int,
        group: (any EventLoopGroup)? = nil,
        limits: Limits = Limits(),
        limitReached: LimitReached? = nil,
        acceptFailed: (@Sendable () -> Void)? = nil,
        answer: @escaping @Sendable (_ path: String) -> Answer
    ) throws {
        self.limits = limits
        let connections = NIOLockedValueBox(
            Connections(admission: TextAdmission(maxConnections: limits.maxConnections))
        )
        self.connections = connections
        // Without a group, a loop of its own: a thread that `close()` stops.
        let ownGroup = group == nil ? MultiThreadedEventLoopGroup(numberOfThreads: 1) : nil
        self.ownGroup = ownGroup
        do {
            channel = try Self.bind(
                host: host,
                port: port,
                group: group ?? ownGroup!,
                limits: limits,
                connections: connections,
                limitReached: limitReached,
                acceptFailed: acceptFailed,
                answer: answer
            )
        } catch {
            try? ownGroup?.syncShutdownGracefully()
            throw error
        }
    }

    /// The listening channel, its connections admitted into `connections`.
    private static func bind(
        host: String,
        port: Int,
        group: any EventLoopGroup,
        limits: Limits,
        connections: NIOLockedValueBox<Connections>,
        limitReached: LimitReached?,
        acceptFailed: (@Sendable () -> Void)?,
        answer: @escaping @Sendable (_ path: String) -> Answer
    ) throws -> any Channel {
        try ServerBootstrap(group: group)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            // Out of descriptors, accepting again at once fails again at once: the listener
            // pauses, 10 ms doubling to 1 s, with autoRead off (`AcceptBackoff`; NIO's own
            // `AcceptBackoffHandler` only withholds `read` and the channel spins on).
            .serverChannelInitializer { channel in
                // Logged with the address bound (`port` may be 0: any free one).
                let report: @Sendable (AcceptBackoff.Event) -> Void = { [weak channel] event in
                    if case .failed = event { acceptFailed?() }
                    guard let (kind, detail) = event.logged else { return }
                    let address = channel?.localAddress.map(\.hostAndPort) ?? "\(host):\(port)"
                    limitReached?(kind, address, detail)
                }
                return channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(AcceptPauseHandler(report: report))
                }
            }
            // Answers wait in at most 64 KiB before reading stops (`ReadWhileAnswersLeave`).
            .childChannelOption(.writeBufferWaterMark, value: .init(low: 16 * 1024, high: 64 * 1024))
            .childChannelInitializer { channel in
                let peer = channel.remoteAddress.map(\.hostAndPort) ?? "unknown"
                let address = channel.remoteAddress?.ipAddress ?? "unknown"
                let (id, outcome, victim) = connections.withLockedValue { connections in
                    connections.lastID += 1
                    let id = connections.lastID
                    let outcome = connections.admission.admit(id, from: address)
                    var victim: (channel: any Channel, peer: String)?
                    if case .evicted(let holder, _) = outcome {
                        victim = connections.open.removeValue(forKey: holder.id)
                    }
                    connections.open[id] = (channel, peer)
                    return (id, outcome, victim)
                }
                if case .evicted(let holder, let limit) = outcome, let victim {
                    limitReached?(.evicted, victim.peer, Self.eviction(of: holder, limit, newcomer: address, limits))
                    victim.channel.close(promise: nil)
                }
                channel.closeFuture.whenComplete { _ in
                    connections.withLockedValue { connections in
                        connections.admission.closed(id, from: address)
                        connections.open[id] = nil
                    }
                }
                let answered: @Sendable () -> Void = {
                    connections.withLockedValue { $0.admission.answered(id, from: address) }
                }
                return channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(ReadWhileAnswersLeave())
                    try channel.pipeline.syncOperations.addHandler(BytesArrivedSignal())
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                    try channel.pipeline.syncOperations.addHandler(
                        TextHandler(
                            answer: answer,
                            limits: limits,
                            peer: peer,
                            limitReached: limitReached,
                            answered: answered
                        )
                    )
                }
            }
            .bind(host: host, port: port)
            .wait()
    }

    /// Stops listening and closes what is open; stops its own loop, when it made one.
    public func close() {
        try? channel.close().wait()
        try? ownGroup?.syncShutdownGracefully()
    }

    /// The log's words for an eviction: which limit, and why this connection.
    static func eviction(
        of victim: TextAdmission.Holder,
        _ limit: TextAdmission.Limit,
        newcomer: String,
        _ limits: Limits
    ) -> String {
        let share = TextAdmission.share(of: limits.maxConnections)
        switch limit {
        case .share:
            return "\(share) connections from \(victim.address), its share of \(limits.maxConnections): "
                + "its least recently active closed for a newcomer"
        case .total:
            return "\(limits.maxConnections) connections, the admin endpoint's limit: the least recently active "
                + "of the address holding the most closed for a newcomer from \(newcomer)"
        }
    }
}

/// Reads a connection only while its answers leave: a client that pipelines requests and never
/// reads the answers (issue 61, session 37's pass: `GET /stats` ×1000 a write, nothing read)
/// had the endpoint answer on at a full core, its answers queued without end (57 to 175 MB in
/// 30 s), and other addresses' scrapes waiting seconds. Once the answers waiting to be sent pass
/// the channel's high water mark, no read is asked for until they fall below the low one.
///
/// ```
///   read() ──► writable? ── yes ──► read
///                  └ no ──► held ──► writability back ──► read
/// ```
private final class ReadWhileAnswersLeave: ChannelDuplexHandler {
    typealias InboundIn = NIOAny
    typealias OutboundIn = NIOAny

    private var readHeld = false

    func read(context: ChannelHandlerContext) {
        if context.channel.isWritable {
            context.read()
        } else {
            readHeld = true
        }
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable && readHeld {
            readHeld = false
            context.read()
        }
        context.fireChannelWritabilityChanged()
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
    /// Tells the admission the connection was answered: the last of its address to evict.
    private let answered: @Sendable () -> Void
    private var head: HTTPRequestHead?
    /// Between an answer and the next request's first byte.
    private var idle = false
    private var deadline: Scheduled<Void>?

    init(
        answer: @escaping @Sendable (String) -> TextEndpoint.Answer,
        limits: TextEndpoint.Limits,
        peer: String,
        limitReached: TextEndpoint.LimitReached?,
        answered: @escaping @Sendable () -> Void
    ) {
        self.answer = answer
        self.limits = limits
        self.peer = peer
        self.limitReached = limitReached
        self.answered = answered
    }

    func handlerAdded(context: ChannelHandlerContext) {
        arm(context, limits.requestTimeout, .requestTimeout, "no whole request within")
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        deadline?.cancel()
    }

    func channelInactive(context: ChannelHandlerContext) {
        deadline?.cancel()
        context.fireChannelInactive()
    }

    /// Closes the connection `after` from now unless disarmed first.
    private func arm(_ context: ChannelHandlerContext, _ after: Duration, _ kind: LimitKind, _ what: String) {
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
                arm(context, limits.requestTimeout, .requestTimeout, "no whole request within")
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
            arm(context, limits.idleTimeout, .idleTimeout, "no request within")
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
            answered()
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
