import FanoutDevices
import FanoutHTTP2
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL

/// Why a request of the wave got no answer.
public enum ReturnFailure: String, Sendable, CaseIterable, Codable {
    /// The backend refused or did not take the connection within `ReturnPool.connectTimeout`.
    case connect
    /// The connection closed (or failed) with the request unanswered.
    case closed
    /// No answer within the request timeout: the connection is closed.
    case timeout
    /// Sent while the backend was found unreachable moments before: failed at once, not tried.
    case unreachable
    /// Still waiting or in flight when the job ended.
    case unfinished
}

/// What the pool tells its measures: every request's end.
protocol ReturnOutcomes: AnyObject {
    /// `request` was answered with `status` at `now`, having gone out at `sentAt`.
    func answered(_ request: ReturnRequest, status: Int, sentAt: UInt64, now: UInt64)
    func failed(_ request: ReturnRequest, _ failure: ReturnFailure, now: UInt64)
    /// The backend could not be reached: said once per outage, the address named.
    func unreachable(_ message: String)
}

/// How the wave reaches the backend: HTTP/1.1 (`ReturnPool`) or HTTP/2 (`ReturnHTTP2Pool`).
/// Confined to its loop: every method is called on it.
protocol ReturnTransport: AnyObject, Sendable {
    /// Sends `request` now, or once a connection (a stream) is free.
    func send(_ request: ReturnRequest)
    /// Requests written and not answered, and those waiting.
    var inFlight: Int { get }
    /// Fails each waiting request due longer ago than the request timeout (`timeout`).
    func expireWaiting(now: UInt64)
    /// Closes every connection; what is waiting or in flight fails `unfinished`.
    func close()
}

extension ReturnHTTPVersion {
    /// The pool that speaks this version to `target`, at most `size` connections (HTTP/2: each
    /// carrying up to `streams` requests), confined to `loop`.
    func pool(
        loop: any EventLoop,
        target: ReturnURL,
        size: Int,
        streams: Int,
        requestTimeout: TimeAmount,
        tls: NIOSSLContext?,
        outcomes: any ReturnOutcomes
    ) -> any ReturnTransport {
        switch self {
        case .http1:
            ReturnPool(
                loop: loop,
                target: target,
                size: size,
                requestTimeout: requestTimeout,
                tls: tls,
                outcomes: outcomes
            )
        case .http2:
            ReturnHTTP2Pool(
                loop: loop,
                target: target,
                size: size,
                streamsPerConnection: streams,
                requestTimeout: requestTimeout,
                tls: tls,
                outcomes: outcomes
            )
        }
    }
}

extension CircularBuffer<ReturnRequest> {
    /// Fails each waiting request due longer ago than `timeout` (`timeout`): a backend too slow
    /// to take them leaves them waiting no longer than one it took.
    mutating func expire(now: UInt64, after timeout: TimeAmount, _ outcomes: any ReturnOutcomes) {
        let limit = UInt64(timeout.nanoseconds)
        while let first, now > first.due, now - first.due > limit {
            outcomes.failed(removeFirst(), .timeout, now: now)
        }
    }

    /// Fails every waiting request with `failure`.
    mutating func failAll(_ failure: ReturnFailure, _ outcomes: any ReturnOutcomes) {
        let now = NIODeadline.now().uptimeNanoseconds
        while let request = popFirst() { outcomes.failed(request, failure, now: now) }
    }
}

/// The backend's reachability as a pool sees it: after a connection failed with none open, new
/// requests fail at once (`unreachable`) for `retryAfter` rather than wait on a dead backend;
/// the outage is said once, and is over when the backend answers (a TCP connect alone is not
/// enough: a TLS handshake may still fail on it).
struct BackendOutage {
    private var said = false
    private var until: UInt64 = 0

    /// Whether a request sent `now` fails at once.
    func refuses(now: UInt64, anyOpen: Bool) -> Bool { now < until && !anyOpen }

    /// A connection failed with none open; whether to say so (the outage's first).
    mutating func failed(now: UInt64) -> Bool {
        until = now + ReturnPool.retryAfter
        defer { said = true }
        return !said
    }

    mutating func answered() { said = false }
}

/// The wave's connections to the backend, on one event loop, each carrying one request at a time
/// over HTTP/1.1 keep-alive, as an app's HTTP client does; at most `size` open, like a fleet of
/// apps sharing `size` connections (docs/return-wave.md, "The pool": a real fleet opens one or
/// more per device; fewer here means requests wait for a free one, and that wait counts in their
/// latency, which runs from the event's due time).
///
/// ```
///   send(r) ─► an idle connection? ── yes ─► written; its answer or failure ─► outcomes
///                   │ no                                  └─► next waiting request, or idle
///                   ▼
///            waiting (FIFO) ; fewer than `size` open? ─► connect (1 s at most)
///                                                        failed, none open ─► every waiting
///                                                        request fails `connect`, and for
///                                                        `retryAfter` new ones `unreachable`
/// ```
/// Confined to `loop`: every method is called on it.
final class ReturnPool: ReturnTransport, @unchecked Sendable {
    let loop: any EventLoop
    let target: ReturnURL
    let size: Int
    let requestTimeout: TimeAmount
    private let tls: NIOSSLContext?
    private let outcomes: any ReturnOutcomes

    static let connectTimeout = TimeAmount.seconds(1)
    /// After a failed connection with none open, new requests fail at once this long.
    static let retryAfter: UInt64 = 200_000_000

    private struct Connection {
        var channel: (any Channel)?
        var request: ReturnRequest?
        var sentAt: UInt64 = 0
        var timeout: Scheduled<Void>?
    }

    private var connections: [Int: Connection] = [:]
    private var nextID = 0
    private var idle: [Int] = []
    private var waiting = CircularBuffer<ReturnRequest>()
    private var outage = BackendOutage()
    private var closing = false

    init(
        loop: any EventLoop,
        target: ReturnURL,
        size: Int,
        requestTimeout: TimeAmount,
        tls: NIOSSLContext?,
        outcomes: any ReturnOutcomes
    ) {
        self.loop = loop
        self.target = target
        self.size = size
        self.requestTimeout = requestTimeout
        self.tls = tls
        self.outcomes = outcomes
    }

    /// Requests written and not answered, and those waiting for a connection.
    var inFlight: Int { connections.values.count { $0.request != nil } + waiting.count }
    var openConnections: Int { connections.values.count { $0.channel != nil } }

    func send(_ request: ReturnRequest) {
        let now = NIODeadline.now().uptimeNanoseconds
        guard !closing else { return outcomes.failed(request, .closed, now: now) }
        if outage.refuses(now: now, anyOpen: !connections.isEmpty) {
            outcomes.failed(request, .unreachable, now: now)
            return
        }
        if let id = idle.popLast() {
            write(request, on: id, now: now)
            return
        }
        waiting.append(request)
        if connections.count < size { connect() }
    }

    /// A connection's socket, as every Fanout client's (`HTTP2Channels.clientBootstrap`: it
    /// asked for SO_DEBUG once, and every connection failed for a user who was not root).
    static func bootstrap(on loop: any EventLoop) -> ClientBootstrap {
        HTTP2Channels.clientBootstrap(group: loop, connectTimeout: connectTimeout)
    }

    private func connect() {
        let id = nextID
        nextID += 1
        connections[id] = Connection()
        let tls = tls
        let host = target.host
        let bootstrap = Self.bootstrap(on: loop)
            .channelInitializer { [self] channel in
                channel.eventLoop.makeCompletedFuture {
                    if let tls {
                        // SNI names a host, never an address.
                        let isAddress = (try? SocketAddress(ipAddress: host, port: 0)) != nil
                        let handler = try NIOSSLClientHandler(context: tls, serverHostname: isAddress ? nil : host)
                        try channel.pipeline.syncOperations.addHandler(handler)
                    }
                    try channel.pipeline.syncOperations.addHTTPClientHandlers()
                    try channel.pipeline.syncOperations.addHandler(ReturnConnectionHandler(pool: self, id: id))
                }
            }
        bootstrap.connect(host: target.host, port: target.port).whenComplete { [self] result in
            switch result {
            case .success(let channel):
                guard connections[id] != nil, !closing else {
                    channel.close(promise: nil)
                    return
                }
                connections[id]?.channel = channel
                becameIdle(id)
            case .failure(let error):
                connections[id] = nil
                connectFailed(error)
            }
        }
    }

    /// No connection could be made: with none open, every waiting request fails, and the next
    /// ones for `retryAfter`; the outage is said once.
    private func connectFailed(_ error: any Error) {
        let now = NIODeadline.now().uptimeNanoseconds
        guard connections.values.allSatisfy({ $0.channel == nil }) else {
            if !waiting.isEmpty, connections.count < size { connect() }
            return
        }
        if outage.failed(now: now) { outcomes.unreachable("the return wave cannot reach \(target): \(error)") }
        waiting.failAll(.connect, outcomes)
    }

    private func becameIdle(_ id: Int) {
        if let request = waiting.popFirst() {
            write(request, on: id, now: NIODeadline.now().uptimeNanoseconds)
        } else {
            idle.append(id)
        }
    }

    private func write(_ request: ReturnRequest, on id: Int, now: UInt64) {
        guard let channel = connections[id]?.channel else { return outcomes.failed(request, .closed, now: now) }
        connections[id]?.request = request
        connections[id]?.sentAt = now
        connections[id]?.timeout = loop.scheduleTask(in: requestTimeout) { [self] in
            guard let connection = connections[id], connection.request != nil else { return }
            finish(id, failure: .timeout)
            connection.channel?.close(promise: nil)
        }
        channel.write(HTTPClientRequestPart.head(request.head), promise: nil)
        if let body = request.body { channel.write(HTTPClientRequestPart.body(.byteBuffer(body)), promise: nil) }
        channel.writeAndFlush(HTTPClientRequestPart.end(nil), promise: nil)
    }

    /// The connection's answer ended: `keepAlive` false when the backend said it closes.
    func answered(_ id: Int, status: Int, keepAlive: Bool) {
        guard let connection = connections[id], let request = connection.request else { return }
        connection.timeout?.cancel()
        connections[id]?.request = nil
        connections[id]?.timeout = nil
        outage.answered()
        outcomes.answered(request, status: status, sentAt: connection.sentAt, now: NIODeadline.now().uptimeNanoseconds)
        if keepAlive && !closing {
            becameIdle(id)
        } else {
            connection.channel?.close(promise: nil)
        }
    }

    private func finish(_ id: Int, failure: ReturnFailure) {
        guard let request = connections[id]?.request else { return }
        connections[id]?.timeout?.cancel()
        connections[id]?.request = nil
        outcomes.failed(request, failure, now: NIODeadline.now().uptimeNanoseconds)
    }

    /// The connection closed: its request, if any, failed; a waiting request gets a new one.
    /// One that closed before its first answer with an error (a TLS handshake refused) is a
    /// connection that could not be made: said, and backed off from, as a refused connect.
    func closed(_ id: Int, beforeAnyAnswer: Bool, error: (any Error)?) {
        finish(id, failure: beforeAnyAnswer && error != nil ? .connect : .closed)
        connections[id] = nil
        idle.removeAll { $0 == id }
        if beforeAnyAnswer, let error, !closing {
            connectFailed(error)
            return
        }
        if !waiting.isEmpty && !closing && connections.count < size { connect() }
    }

    func expireWaiting(now: UInt64) {
        waiting.expire(now: now, after: requestTimeout, outcomes)
    }

    /// Closes every connection; what is waiting or in flight fails `unfinished`.
    func close() {
        guard !closing else { return }
        closing = true
        waiting.failAll(.unfinished, outcomes)
        for (id, connection) in connections {
            finish(id, failure: .unfinished)
            connection.channel?.close(promise: nil)
        }
    }
}

/// Reads one connection's answers for its pool (`HTTPClientResponsePart`s from NIOHTTP1's decoder).
final class ReturnConnectionHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPClientResponsePart

    private let pool: ReturnPool
    private let id: Int
    private var status = 0
    private var keepAlive = true
    private var answeredAny = false
    /// What broke the connection, if something did (a TLS handshake's refusal, a bad answer).
    private var error: (any Error)?

    init(pool: ReturnPool, id: Int) {
        self.pool = pool
        self.id = id
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            status = Int(head.status.code)
            keepAlive = head.isKeepAlive
        case .body:
            break
        case .end:
            answeredAny = true
            pool.answered(id, status: status, keepAlive: keepAlive)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        pool.closed(id, beforeAnyAnswer: !answeredAny, error: error)
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if self.error == nil { self.error = error }
        context.close(promise: nil)
    }
}
