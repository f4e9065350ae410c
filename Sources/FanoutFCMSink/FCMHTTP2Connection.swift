import FanoutHTTP2
import NIOCore
import NIOSSL

/// An FCM sink's HTTP/2 connection: each request to `FCMExchange`, its answer straight back,
/// or with the sink's latency held until its time (`FCMHeldAnswers`, woken by the connection's
/// timer).
///
/// ```
///   HEADERS :method POST  :path /v1/projects/P/messages:send  authorization: Bearer ya29.…
///   DATA    {"message":{"token":"…","data":{…}}}
///     ─► HEADERS :status 200  content-type: application/json; charset=UTF-8
///        DATA    {"name":"projects/P/messages/0:1%…"}
/// ```
public struct FCMHTTP2Connection: HTTP2ConnectionDelegate {
    /// The largest body read; past it, 400 (an FCM message is at most 4 KiB of payload).
    static let maxBodySize = 64 * 1024

    var exchange: FCMExchange
    /// A 429's fields by its Retry-After, made once each.
    private var retryFields: [Int: HTTP2Fields] = [:]
    /// Answers waiting for the sink's latency.
    private var held = FCMHeldAnswers()
    /// Requests this connection has read, for `goAwayAfterRequests`.
    private var requests = 0
    private let goAwayAfterRequests: Int?
    /// Its idle and request timeouts (`FCMConnectionTimers`).
    private var timers: FCMConnectionTimers
    let draining: @Sendable () -> Bool

    init(exchange: FCMExchange, draining: @escaping @Sendable () -> Bool) {
        self.exchange = exchange
        self.draining = draining
        let configuration = exchange.service.configuration
        goAwayAfterRequests = configuration.goAwayAfterRequests
        timers = FCMConnectionTimers(
            idleTimeout: configuration.idleTimeout,
            requestTimeout: configuration.requestTimeout,
            openedAt: NIODeadline.now().uptimeNanoseconds
        )
    }

    /// A connection of `service`'s, not drained: for a pair in memory (`HTTP2InMemoryPair`),
    /// as the benchmarks run it.
    public init(service: FCMService, peer: String = "in-memory", seed: UInt64 = 0) {
        self.init(
            exchange: FCMExchange(service: service, transport: .http2, peer: peer, seed: seed),
            draining: { false }
        )
    }

    public static func configuration(_ sink: FCMSinkConfiguration) -> HTTP2Connection.Configuration {
        var http2 = HTTP2Connection.Configuration()
        http2.maxConcurrentStreams = sink.maxConcurrentStreams
        http2.maxConcurrentStreamsBeforeAcknowledgement = sink.maxConcurrentStreams
        http2.maxHeaderListSize = 16 * 1024
        http2.maxBodySize = maxBodySize
        http2.incompleteFrameTimeout = sink.incompleteFrameTimeout
        return http2
    }

    /// The answers' fields: the status, JSON, and on a 401 Google's `www-authenticate`.
    static let fields: [Int: HTTP2Fields] = Dictionary(
        uniqueKeysWithValues: [200, 400, 401, 403, 404, 429, 500, 503].map { status in
            var list = [(":status", String(status)), ("content-type", "application/json; charset=UTF-8")]
            if status == 401 { list.append(("www-authenticate", #"Bearer realm="https://accounts.google.com/""#)) }
            return (status, HTTP2Fields(list))
        }
    )

    public mutating func connectionStarted(_ connection: inout HTTP2Writer) {
        if draining() { connection.goAway() }
    }

    public mutating func tlsEstablished(peerCertificate: NIOSSLCertificate?, connection: inout HTTP2Writer) {}

    public mutating func handle(_ event: HTTP2Event, connection: inout HTTP2Writer) {
        if case .streamReset = event {
            held.streamReset { connection.isOpen($0) }
            return
        }
        if case .connectionError(let error) = event {
            engineLimit(error)
            return
        }
        guard case .message(let message) = event else { return }
        timers.requestArrived()
        let headers = message.headers
        let empty = UnsafeRawBufferPointer(start: nil, count: 0)
        let request = FCMRequest(
            method: headers.first(":method") ?? empty,
            path: headers.first(":path") ?? empty,
            authorization: headers.first("authorization"),
            body: message.body,
            bodyLength: message.bodyLength
        )
        let answer = exchange.answer(request, now: connection.now, openStreams: connection.openStreams)
        if let watch = exchange.watch {
            watch.http2Faults(
                refused: connection.refusedStreams,
                limit: connection.streamLimit,
                afterGoAway: connection.streamsAfterGoAway,
                now: connection.now
            )
        }
        if answer.hold > 0 {
            held.hold(answer, body: exchange.body, stream: message.stream, due: connection.now &+ answer.hold)
        } else {
            respond(
                stream: message.stream,
                status: answer.status,
                retryAfter: answer.retryAfter,
                exchange.body,
                &connection
            )
        }
        requests &+= 1
        // The connection retired: streams after this one are refused, those read are answered.
        if let limit = goAwayAfterRequests, requests >= limit, connection.sentGoAway == nil { connection.goAway() }
    }

    /// Writes an answer: its status's fields (with `retry-after`, made once a value), `body`.
    /// A stream reset or a connection gone since is not answered (`respond` says so, unheeded).
    private mutating func respond(
        stream: UInt32,
        status: Int,
        retryAfter: Int?,
        _ body: ByteBuffer,
        _ connection: inout HTTP2Writer
    ) {
        guard let prepared = Self.fields[status] else {
            // A status the table lacks: its fields made for it.
            let fields = HTTP2Fields([(":status", String(status)), ("content-type", "application/json; charset=UTF-8")])
            _ = connection.respond(stream: stream, fields, body: body)
            return
        }
        if let retryAfter {
            if retryFields[retryAfter] == nil {
                var fields = prepared
                fields.append(name: "retry-after", value: String(retryAfter), indexing: .withoutIndexing)
                retryFields[retryAfter] = fields
            }
            _ = connection.respond(stream: stream, retryFields[retryAfter]!, body: body)
        } else {
            _ = connection.respond(stream: stream, prepared, body: body)
        }
    }

    /// The engine ended the connection with GOAWAY: a rule broken or one of its limits (a
    /// flood, a frame's rest past `incompleteFrameTimeout`, SETTINGS unacknowledged): counted
    /// and told with the GOAWAY, as the APNs sink tells them (a flood's GOAWAY is the one trace
    /// it leaves).
    @inline(never)
    private func engineLimit(_ error: HTTP2FrameError) {
        exchange.service.limitReached(
            error.code == .settingsTimeout ? .settingsTimeout : .ended,
            peer: exchange.peer,
            "GOAWAY \(error.code): \(error.reason)"
        )
    }

    public mutating func writabilityChanged(_ isWritable: Bool, connection: inout HTTP2Writer) {}
    /// With the instrument: the connection's last faults and its end (the sink's when it had
    /// sent GOAWAY: draining, or a connection that arrived while draining).
    public mutating func connectionEnded(_ connection: borrowing HTTP2Connection, error: (any Error)?) {
        guard let watch = exchange.watch else { return }
        let now = NIODeadline.now().uptimeNanoseconds
        watch.http2Faults(
            refused: connection.refusedStreams,
            limit: connection.streamLimit,
            afterGoAway: connection.streamsAfterGoAway,
            now: now
        )
        watch.closedBySink = connection.sentGoAway != nil
        exchange.closed(now: now)
    }
    /// When the earliest held answer or timeout check is due.
    public var nextWakeUp: NIODeadline? {
        // Asked after every event: no array for two values.
        let due =
            switch (held.earliest, timers.nextCheck) {
            case (let answer?, let check?): min(answer, check)
            case (let answer?, nil): answer
            case (nil, let check?): check
            case (nil, nil): UInt64?.none
            }
        return due.map { NIODeadline.uptimeNanoseconds($0) }
    }

    /// The held answers due by `now` go out; the timeouts due are checked: requests begun
    /// too long ago and not arrived whole are reset, an idle connection gets GOAWAY.
    public mutating func wake(now: NIODeadline, connection: inout HTTP2Writer) {
        let now = now.uptimeNanoseconds
        while let (entry, body) = held.popDue(now: now) {
            respond(
                stream: entry.stream,
                status: Int(entry.status),
                retryAfter: entry.retryAfter < 0 ? nil : Int(entry.retryAfter),
                body,
                &connection
            )
            held.release(entry)
        }
        if let cutoff = timers.requestCutoff(now: now) {
            let (reset, oldest) = connection.resetIncompleteRequests(openedBy: cutoff)
            timers.requestsChecked(now: now, oldestLeft: oldest)
            if reset > 0 {
                exchange.service.limitReached(
                    .requestTimeout,
                    peer: exchange.peer,
                    "reset \(reset) stream\(reset == 1 ? "" : "s") whose request did not arrive whole within \(FCMConnectionTimers.format(exchange.service.configuration.requestTimeout))"
                )
            }
        }
        if timers.isIdle(now: now, busy: connection.openStreams > 0 || held.earliest != nil),
            connection.sentGoAway == nil
        {
            exchange.service.limitReached(
                .idleTimeout,
                peer: exchange.peer,
                "GOAWAY: nothing received for \(FCMConnectionTimers.format(exchange.service.configuration.idleTimeout))"
            )
            connection.goAway()
        }
    }
    public mutating func outboundWritten(at now: UInt64) {}
}
