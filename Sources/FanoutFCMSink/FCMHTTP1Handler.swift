import FanoutListening
import NIOCore
import NIOHTTP1

/// An FCM sink's HTTP/1.1 connection (the Python SDK's sends and every token request come this
/// way): each request's body gathered, up to `FCMHTTP2Connection.maxBodySize` (the rest is
/// counted and dropped), then answered by `FCMExchange` like an HTTP/2 stream. Keep-alive as
/// the client asks; requests answered in order (NIO's pipelining helper holds the next one).
///
/// ```
///   POST /v1/projects/P/messages:send HTTP/1.1     HTTP/1.1 200 OK
///   authorization: Bearer ya29.…              ─►   content-type: application/json; charset=UTF-8
///   content-length: 88                             content-length: 52
/// ```
final class FCMHTTP1Handler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private var exchange: FCMExchange
    private var head: HTTPRequestHead?
    private var body: ByteBuffer
    private var bodyLength = 0
    private let draining: @Sendable () -> Bool
    /// Requests answered on this connection, and after how many it is retired
    /// (`FCMSinkConfiguration.goAwayAfterRequests`).
    private var requests = 0
    private let goAwayAfterRequests: Int?
    /// Its idle and request timeouts (`FCMConnectionTimers`), looked at by `timer`.
    private var timers: FCMConnectionTimers
    private var timer: Scheduled<Void>?
    /// When the request being read began (its head whole), until its answer is written:
    /// the connection is busy meanwhile, and its body has `requestTimeout` to arrive.
    private var begun: UInt64?
    private var bodyEnded = false

    init(exchange: FCMExchange, draining: @escaping @Sendable () -> Bool) {
        self.exchange = exchange
        self.draining = draining
        let configuration = exchange.service.configuration
        goAwayAfterRequests = configuration.goAwayAfterRequests
        body = ByteBufferAllocator().buffer(capacity: 1024)
        timers = FCMConnectionTimers(
            idleTimeout: configuration.idleTimeout,
            requestTimeout: configuration.requestTimeout,
            openedAt: NIODeadline.now().uptimeNanoseconds
        )
    }

    func handlerAdded(context: ChannelHandlerContext) {
        schedule(context)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
    }

    /// Keeps one timer at the timeouts' next check.
    private func schedule(_ context: ChannelHandlerContext) {
        timer?.cancel()
        guard let due = timers.nextCheck else { return }
        let handler = NIOLoopBound(self, eventLoop: context.eventLoop)
        let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
        timer = context.eventLoop.scheduleTask(deadline: .uptimeNanoseconds(due)) {
            handler.value.check(bound.value)
        }
    }

    /// The timeouts' check: a body not arrived whole in time, or a connection idle a whole idle
    /// timeout, closes the connection (and says so); else the next check is set.
    private func check(_ context: ChannelHandlerContext) {
        timer = nil
        guard context.channel.isActive else { return }
        let now = NIODeadline.now().uptimeNanoseconds
        let service = exchange.service
        if let cutoff = timers.requestCutoff(now: now) {
            let incomplete = begun.flatMap { bodyEnded ? nil : $0 }
            if let incomplete, incomplete <= cutoff {
                let timeout = FCMConnectionTimers.format(service.configuration.requestTimeout)
                return close(
                    context,
                    .requestTimeout,
                    "closed: a request's body did not arrive whole within \(timeout)"
                )
            }
            timers.requestsChecked(now: now, oldestLeft: incomplete)
        }
        if timers.isIdle(now: now, busy: begun != nil) {
            let timeout = FCMConnectionTimers.format(service.configuration.idleTimeout)
            return close(context, .idleTimeout, "closed: nothing received for \(timeout)")
        }
        schedule(context)
    }

    /// Closes the connection at one of the sink's limits: counted, told, and the sink's close
    /// (not the provider's churn).
    private func close(_ context: ChannelHandlerContext, _ kind: LimitKind, _ detail: String) {
        exchange.service.limitReached(kind, peer: exchange.peer, detail)
        exchange.watch?.closedBySink = true
        context.close(promise: nil)
    }

    /// With the instrument: the connection's end (the sink's when it closed after `connection:
    /// close`, or while draining: NIO's pipelining handler closes an idle connection then).
    func channelInactive(context: ChannelHandlerContext) {
        if let watch = exchange.watch {
            if draining() { watch.closedBySink = true }
            exchange.closed(now: NIODeadline.now().uptimeNanoseconds)
        }
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let request):
            head = request
            body.clear()
            bodyLength = 0
            timers.requestArrived()
            let now = NIODeadline.now().uptimeNanoseconds
            begun = now
            bodyEnded = false
            // Busy from its head: a body still arriving is no idleness (`--idle-exit`).
            exchange.service.statistics.busy(until: now)
        case .body(var chunk):
            bodyLength += chunk.readableBytes
            let room = FCMHTTP2Connection.maxBodySize - body.readableBytes
            if room > 0 { body.writeBuffer(&chunk) }
            if body.readableBytes > FCMHTTP2Connection.maxBodySize {
                body.moveWriterIndex(to: body.readerIndex + FCMHTTP2Connection.maxBodySize)
            }
        case .end:
            bodyEnded = true
            guard let head else { return }
            self.head = nil
            respond(to: head, context: context)
        }
    }

    private func respond(to head: HTTPRequestHead, context: ChannelHandlerContext) {
        var method = head.method.rawValue
        var path = head.uri
        var authorization = head.headers.first(name: "authorization")
        let now = NIODeadline.now().uptimeNanoseconds
        let answer = body.withUnsafeReadableBytes { body in
            method.withUTF8 { method in
                path.withUTF8 { path in
                    func answer(_ authorization: UnsafeRawBufferPointer?) -> FCMAnswer {
                        exchange.answer(
                            FCMRequest(
                                method: UnsafeRawBufferPointer(method),
                                path: UnsafeRawBufferPointer(path),
                                authorization: authorization,
                                body: body,
                                bodyLength: bodyLength
                            ),
                            now: now
                        )
                    }
                    guard authorization != nil else { return answer(nil) }
                    return authorization!.withUTF8 { answer(UnsafeRawBufferPointer($0)) }
                }
            }
        }
        var headers = HTTPHeaders()
        headers.add(name: "content-type", value: "application/json; charset=UTF-8")
        headers.add(name: "content-length", value: String(exchange.body.readableBytes))
        if answer.unauthenticated {
            headers.add(name: "www-authenticate", value: #"Bearer realm="https://accounts.google.com/""#)
        }
        if let retryAfter = answer.retryAfter { headers.add(name: "retry-after", value: String(retryAfter)) }
        requests += 1
        let retired = goAwayAfterRequests.map { requests >= $0 } ?? false
        let keepAlive = head.isKeepAlive && !draining() && !retired
        if !keepAlive { headers.add(name: "connection", value: "close") }
        let response = HTTPResponseHead(
            version: head.version,
            status: HTTPResponseStatus(statusCode: answer.status),
            headers: headers
        )
        guard answer.hold > 0 else {
            write(response, exchange.body, keepAlive: keepAlive, retired: retired, context: context)
            return
        }
        // Held for the sink's latency: NIO's pipelining helper reads no next request until this
        // one's answer ends, so answers keep their order.
        let body = exchange.body
        let handler = NIOLoopBound(self, eventLoop: context.eventLoop)
        let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
        context.eventLoop.scheduleTask(in: .nanoseconds(Int64(answer.hold))) {
            guard bound.value.channel.isActive else { return }
            handler.value.write(response, body, keepAlive: keepAlive, retired: retired, context: bound.value)
        }
    }

    /// Writes an answer; the connection closed after it unless `keepAlive`, by the sink when
    /// `retired` (`goAwayAfterRequests`) or draining.
    private func write(
        _ head: HTTPResponseHead,
        _ body: ByteBuffer,
        keepAlive: Bool,
        retired: Bool,
        context: ChannelHandlerContext
    ) {
        // Before the writes: writing `.end` hands NIO's pipelining helper's next request in
        // at once, and its head sets `begun` anew.
        begun = nil
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil)
        let ended = context.writeAndFlush(wrapOutboundOut(.end(nil)))
        if !keepAlive {
            // The sink's close when it is draining or retires the connection; a close the
            // client asked for (`connection: close`, HTTP/1.0) is the provider's, and may be churn.
            if draining() || retired { exchange.watch?.closedBySink = true }
            let channel = context.channel
            ended.whenComplete { _ in channel.close(promise: nil) }
        }
    }
}
