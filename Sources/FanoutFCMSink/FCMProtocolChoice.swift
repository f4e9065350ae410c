import FanoutHTTP2
import FanoutListening
import NIOCore
import NIOHTTP1
import NIOTLS

/// Puts a connection's protocol handlers in place once it is known which protocol it speaks:
/// HTTP/2 (`FCMHTTP2Connection` under Fanout's HTTP/2) or HTTP/1.1 (NIO's parser and
/// `FCMHTTP1Handler`). One port serves both, as Google's front end does: over TLS, ALPN
/// chooses (`ApplicationProtocolNegotiationHandler`); in cleartext, the first bytes do
/// (`FCMFirstBytes`).
struct FCMProtocolChoice: Sendable {
    let service: FCMService
    let draining: @Sendable () -> Bool
    let seed: @Sendable () -> UInt64
    /// A connection proved who it is (its first send with a good bearer, or a token granted):
    /// no longer one a newcomer may have evicted (`OpenConnections`).
    let proved: @Sendable (ObjectIdentifier) -> Void

    func configure(_ channel: any Channel, as transport: FCMSinkStatistics.Transport) throws {
        let peer = channel.remoteAddress.map(\.hostAndPort) ?? "unknown"
        let key = ObjectIdentifier(channel)
        let proved = proved
        var exchange = FCMExchange(service: service, transport: transport, peer: peer, seed: seed())
        exchange.proved = { proved(key) }
        service.statistics.connectionOpened(transport)
        let operations = channel.pipeline.syncOperations
        // Chosen: the protocol's own timers hold it from here.
        if let deadline = try? operations.handler(type: FCMChoiceDeadline.self) {
            operations.removeHandler(deadline, promise: nil)
        }
        switch transport {
        case .http2:
            try operations.addHandler(
                HTTP2ConnectionHandler(
                    role: .server,
                    configuration: FCMHTTP2Connection.configuration(service.configuration),
                    delegate: FCMHTTP2Connection(exchange: exchange, draining: draining)
                )
            )
        case .http1:
            try operations.configureHTTPServerPipeline(withPipeliningAssistance: true, withErrorHandling: true)
            try operations.addHandler(FCMHTTP1Handler(exchange: exchange, draining: draining))
        }
    }

    /// Over TLS: the handler that waits for ALPN, `h2` or else HTTP/1.1 (`http/1.1` or none).
    func negotiation() -> ApplicationProtocolNegotiationHandler {
        ApplicationProtocolNegotiationHandler { result, channel in
            channel.eventLoop.makeCompletedFuture {
                if case .negotiated("h2") = result {
                    try configure(channel, as: .http2)
                } else {
                    try configure(channel, as: .http1)
                }
            }
        }
    }
}

/// In cleartext, chooses by the connection's first bytes: HTTP/2's preface (prior knowledge,
/// RFC 9113 §3.3) or anything else, read as HTTP/1.1. Holds what it read until it can tell,
/// puts the chosen handlers after itself, hands them the bytes, and leaves.
///
/// ```
///   PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n …   ─► HTTP/2
///   POST /token HTTP/1.1\r\n …          ─► HTTP/1.1   (told apart at the first byte)
/// ```
final class FCMFirstBytes: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    static let preface = Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8)
    private var held: ByteBuffer?
    private let choice: FCMProtocolChoice

    init(choice: FCMProtocolChoice) { self.choice = choice }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var bytes = unwrapInboundIn(data)
        if var held {
            held.writeBuffer(&bytes)
            self.held = held
        } else {
            held = bytes
        }
        let view = held!.readableBytesView
        let compared = min(view.count, Self.preface.count)
        let isPreface = view.prefix(compared).elementsEqual(Self.preface.prefix(compared))
        if isPreface && compared < Self.preface.count { return }
        do {
            try choice.configure(context.channel, as: isPreface ? .http2 : .http1)
        } catch {
            // Handlers half added cannot serve it: end the connection.
            held = nil
            context.close(promise: nil)
            return
        }
        let read = held!
        held = nil
        context.fireChannelRead(wrapInboundOut(read))
        context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
    }
}

/// Bounds the time before a connection's protocol is chosen (a TLS handshake and its ALPN, or
/// the first bytes in cleartext) to the idle timeout: until then no protocol's handler, and so
/// no timer of `FCMConnectionTimers`, holds it, and a connection that sends nothing, half a
/// preface or half a handshake would be held forever. Removed once the choice is made
/// (`FCMProtocolChoice.configure`); past its time it closes the connection and says so.
final class FCMChoiceDeadline: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny

    private let timeout: Duration
    private let service: FCMService
    private var timer: Scheduled<Void>?

    init(timeout: Duration, service: FCMService) {
        self.timeout = timeout
        self.service = service
    }

    func handlerAdded(context: ChannelHandlerContext) {
        let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
        let (service, timeout) = (service, timeout)
        timer = context.eventLoop.scheduleTask(in: .nanoseconds(Int64(timeout.wholeNanoseconds))) {
            let context = bound.value
            let peer = context.channel.remoteAddress.map(\.hostAndPort) ?? "unknown"
            service.limitReached(
                .idleTimeout,
                peer: peer,
                "closed: no protocol chosen within \(FCMConnectionTimers.format(timeout)) (no HTTP/2 preface, HTTP/1.1 request or TLS handshake)"
            )
            context.close(promise: nil)
        }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
    }
}
