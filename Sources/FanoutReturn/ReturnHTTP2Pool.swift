import FanoutDevices
import FanoutHTTP2
import NIOCore
import NIOSSL

/// The wave's connections to the backend over HTTP/2 (`--return-http 2`): h2c with prior
/// knowledge for `http://`, ALPN `h2` over TLS for `https://`, on Fanout's own HTTP/2 engine
/// (`HTTP2ConnectionHandler`, the load engine's). Each connection carries up to
/// `streamsPerConnection` requests at once (and no more than the backend's
/// MAX_CONCURRENT_STREAMS); a new connection opens only when every open one is full, at most
/// `size` — an app's HTTP/2 client multiplexes so, and `size` stands for the fleet's devices.
///
/// ```
///   send(r) ─► waiting (FIFO) ─► dispatch: the first connection with a stream free
///                                   │ none, all full, none connecting, fewer than `size`
///                                   ▼
///                                connect (1 s at most) ─► connectionStarted: fill its streams
///   a stream's answer, reset or timeout ─► outcomes; the connection filled again
/// ```
/// A connection that ends fails its streams (`closed`; `connect` when it ended before any
/// answer with an error: a refused handshake or ALPN); an unreachable backend is said and
/// backed off from as over HTTP/1.1 (`BackendOutage`). Confined to `loop`.
final class ReturnHTTP2Pool: ReturnTransport, @unchecked Sendable {
    let loop: any EventLoop
    let target: ReturnURL
    let size: Int
    let streamsPerConnection: Int
    let requestTimeout: TimeAmount
    private let transport: HTTP2Transport
    private let outcomes: any ReturnOutcomes

    /// The streams a connection carries at most, unless the backend allows fewer.
    static let defaultStreams = 100

    private struct Stream {
        var request: ReturnRequest
        var stream: UInt32
        var sentAt: UInt64
        var timeout: Scheduled<Void>?
    }

    private struct Connection {
        var handler: NIOLoopBound<HTTP2ConnectionHandler<ReturnStreams>>?
        var channel: (any Channel)?
        /// The preface and SETTINGS are queued: streams may be opened.
        var started = false
        /// The backend sent GOAWAY: no new streams here.
        var goingAway = false
        var answeredAny = false
        var streams: [UInt64: Stream] = [:]
    }

    private var connections: [Int: Connection] = [:]
    /// The connections' ids, oldest first: the order `dispatch` fills them in, kept so that a
    /// send sorts nothing.
    private var order: [Int] = []
    private var nextID = 0
    private var nextTag: UInt64 = 1
    private var waiting = CircularBuffer<ReturnRequest>()
    private var outage = BackendOutage()
    private var closing = false

    init(
        loop: any EventLoop,
        target: ReturnURL,
        size: Int,
        streamsPerConnection: Int = ReturnHTTP2Pool.defaultStreams,
        requestTimeout: TimeAmount,
        tls: NIOSSLContext?,
        outcomes: any ReturnOutcomes
    ) {
        self.loop = loop
        self.target = target
        self.size = size
        self.streamsPerConnection = streamsPerConnection
        self.requestTimeout = requestTimeout
        self.transport = tls.map { .tls($0) } ?? .cleartext
        self.outcomes = outcomes
    }

    var inFlight: Int { connections.values.reduce(0) { $0 + $1.streams.count } + waiting.count }
    var openConnections: Int { connections.values.count { $0.channel != nil } }

    func send(_ request: ReturnRequest) {
        let now = NIODeadline.now().uptimeNanoseconds
        guard !closing else { return outcomes.failed(request, .closed, now: now) }
        if outage.refuses(now: now, anyOpen: !connections.isEmpty) {
            return outcomes.failed(request, .unreachable, now: now)
        }
        waiting.append(request)
        dispatch()
    }

    /// Puts waiting requests on connections with a stream free; opens one more connection
    /// when all are full and none is on its way.
    private func dispatch() {
        for id in order where !waiting.isEmpty {
            guard let connection = connections[id], connection.started, !connection.goingAway,
                connection.streams.count < streamsPerConnection, let handler = connection.handler
            else { continue }
            handler.value.withConnection { writer, _ in fill(id, &writer) }
        }
        let connecting = connections.values.contains { !$0.started }
        let serving = connections.values.count { !$0.goingAway }
        if !waiting.isEmpty, !connecting, serving < size { connect() }
    }

    /// Opens streams on connection `id` for waiting requests while it has room.
    func fill(_ id: Int, _ writer: inout HTTP2Writer) {
        guard var connection = connections[id], !connection.goingAway, !closing else { return }
        while connection.streams.count < streamsPerConnection, writer.availableStreams > 0,
            let request = waiting.popFirst()
        {
            let tag = nextTag
            nextTag += 1
            let stream: UInt32
            do {
                stream = try writer.sendRequest(Self.fields(request, target), body: request.body, tag: tag)
            } catch {
                waiting.prepend(request)
                break
            }
            let now = NIODeadline.now().uptimeNanoseconds
            let timeout = loop.scheduleTask(in: requestTimeout) { [self] in timedOut(id, tag: tag) }
            connection.streams[tag] = Stream(request: request, stream: stream, sentAt: now, timeout: timeout)
        }
        connections[id] = connection
    }

    private func connect() {
        let id = nextID
        nextID += 1
        connections[id] = Connection()
        order.append(id)
        HTTP2Channels.connect(
            host: target.host,
            port: target.port,
            group: loop,
            transport: transport,
            serverHostname: target.host,
            connectTimeout: ReturnPool.connectTimeout
        ) { [self] in ReturnStreams(pool: self, id: id) }
        .whenComplete { [self] result in
            switch result {
            case .success(let (channel, handler)):
                guard connections[id] != nil, !closing else {
                    channel.close(promise: nil)
                    return
                }
                connections[id]?.channel = channel
                connections[id]?.handler = handler
                dispatch()
            case .failure(let error):
                forget(id)
                connectFailed(error)
            }
        }
    }

    private func forget(_ id: Int) {
        connections[id] = nil
        order.removeAll { $0 == id }
    }

    /// No connection could be made: with none open, every waiting request fails `connect` and
    /// the next ones `unreachable` for a while; the outage is said once.
    private func connectFailed(_ error: any Error) {
        let now = NIODeadline.now().uptimeNanoseconds
        guard connections.values.allSatisfy({ $0.channel == nil }) else { return dispatch() }
        if outage.failed(now: now) { outcomes.unreachable("the return wave cannot reach \(target): \(error)") }
        waiting.failAll(.connect, outcomes)
    }

    func started(_ id: Int, _ writer: inout HTTP2Writer) {
        connections[id]?.started = true
        fill(id, &writer)
    }

    func answered(_ id: Int, tag: UInt64, status: Int, _ writer: inout HTTP2Writer) {
        guard let stream = connections[id]?.streams.removeValue(forKey: tag) else { return }
        stream.timeout?.cancel()
        connections[id]?.answeredAny = true
        outage.answered()
        outcomes.answered(
            stream.request,
            status: status,
            sentAt: stream.sentAt,
            now: NIODeadline.now().uptimeNanoseconds
        )
        fill(id, &writer)
    }

    /// A stream ended without an answer. REFUSED_STREAM (a GOAWAY's streams past its last,
    /// a stream over the backend's limit) was not processed and goes out again (RFC 9113 §8.7),
    /// first in line; any other reset fails it `closed`.
    func reset(_ id: Int, tag: UInt64, code: HTTP2ErrorCode, _ writer: inout HTTP2Writer) {
        guard let stream = connections[id]?.streams.removeValue(forKey: tag) else { return }
        stream.timeout?.cancel()
        if code == .refusedStream && !closing {
            waiting.prepend(stream.request)
        } else {
            outcomes.failed(stream.request, .closed, now: NIODeadline.now().uptimeNanoseconds)
        }
        fill(id, &writer)
    }

    /// The backend sent GOAWAY: no new streams on this connection, which no longer counts
    /// toward `size`; waiting requests go to another (opened if need be).
    func goingAway(_ id: Int) {
        connections[id]?.goingAway = true
        loop.execute { [self] in dispatch() }
    }

    /// A request unanswered for the timeout: its stream is cancelled, the connection kept.
    private func timedOut(_ id: Int, tag: UInt64) {
        guard let stream = connections[id]?.streams.removeValue(forKey: tag) else { return }
        outcomes.failed(stream.request, .timeout, now: NIODeadline.now().uptimeNanoseconds)
        connections[id]?.handler?.value.withConnection { writer, _ in
            writer.resetStream(stream.stream, code: .cancel)
            fill(id, &writer)
        }
    }

    /// The connection is gone: its streams fail; waiting requests go elsewhere. One that ended
    /// before any answer with streams open (a refused handshake, ALPN without `h2`, an
    /// HTTP/1.1 server reading the preface as a bad request) is a backend that cannot be
    /// reached over HTTP/2: said, and backed off from, as a refused connect.
    func ended(_ id: Int, error: (any Error)?) {
        guard let connection = connections[id] else { return }
        forget(id)
        let now = NIODeadline.now().uptimeNanoseconds
        let refused = !connection.answeredAny && (error != nil || !connection.streams.isEmpty)
        let failure: ReturnFailure = closing ? .unfinished : refused ? .connect : .closed
        for stream in connection.streams.values.sorted(by: { $0.sentAt < $1.sentAt }) {
            stream.timeout?.cancel()
            outcomes.failed(stream.request, failure, now: now)
        }
        guard !closing else { return }
        if refused {
            connectFailed(error ?? ReturnHTTP2Refused())
        } else {
            dispatch()
        }
    }

    func expireWaiting(now: UInt64) {
        waiting.expire(now: now, after: requestTimeout, outcomes)
    }

    func close() {
        guard !closing else { return }
        closing = true
        waiting.failAll(.unfinished, outcomes)
        let now = NIODeadline.now().uptimeNanoseconds
        for (id, connection) in connections {
            for stream in connection.streams.values {
                stream.timeout?.cancel()
                outcomes.failed(stream.request, .unfinished, now: now)
            }
            connections[id]?.streams = [:]
            connection.channel?.close(promise: nil)
        }
    }

    /// An HTTP/1.1 head as HTTP/2's fields: the pseudo-header fields from its method, the
    /// target's scheme, its `host` (as `:authority`) and URI, then its other fields, lowercase,
    /// without those HTTP/2 forbids (RFC 9113 §8.2.2).
    static func fields(_ request: ReturnRequest, _ target: ReturnURL) -> HTTP2Fields {
        let head = request.head
        var fields = HTTP2Fields([
            (":method", head.method.rawValue), (":scheme", target.isTLS ? "https" : "http"),
            (":authority", head.headers.first(name: "host") ?? target.host), (":path", head.uri),
        ])
        for (name, value) in head.headers {
            switch name.lowercased() {
            case "host", "connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade": continue
            default: fields.append(name: name.lowercased(), value: value)
            }
        }
        return fields
    }
}

/// A connection's delegate: hands the HTTP/2 engine's events to its pool.
struct ReturnStreams: HTTP2ConnectionDelegate {
    let pool: ReturnHTTP2Pool
    let id: Int

    mutating func connectionStarted(_ connection: inout HTTP2Writer) {
        pool.started(id, &connection)
    }

    mutating func handle(_ event: HTTP2Event, connection: inout HTTP2Writer) {
        switch event {
        case .message(let message): pool.answered(id, tag: message.tag, status: message.status, &connection)
        case .streamReset(_, let tag, let code, _): pool.reset(id, tag: tag, code: code, &connection)
        case .remoteSettingsChanged: pool.fill(id, &connection)
        case .goAway: pool.goingAway(id)
        case .pingAcknowledged, .connectionError: break
        }
    }

    mutating func connectionEnded(_ connection: borrowing HTTP2Connection, error: (any Error)?) {
        pool.ended(id, error: error)
    }
}

/// A backend that closed an HTTP/2 connection before answering any of its streams, without an
/// error to say why: most often one that does not speak HTTP/2 (h2c to an HTTP/1.1 server).
struct ReturnHTTP2Refused: Error, CustomStringConvertible {
    var description: String { "it closed the HTTP/2 connection before any answer (does it speak HTTP/2?)" }
}
