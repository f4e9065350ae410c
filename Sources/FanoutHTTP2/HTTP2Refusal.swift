import FanoutHPACK
import NIOCore

/// Turns a connection away in words its peer can read, instead of a silent close that a client
/// can only guess at (a TLS server given `http://`? a dead one?): the server preface (SETTINGS,
/// RFC 9113 §3.4, here with MAX_CONCURRENT_STREAMS 0) and a GOAWAY that refuses every stream,
/// with the reason as its debug data, in one write:
///
/// ```
///   server ─► SETTINGS [MAX_CONCURRENT_STREAMS 0] · GOAWAY [last 0, ENHANCE_YOUR_CALM, reason] · FIN
///   client ─► preface · SETTINGS · …                 (read and dropped until it closes)
/// ```
///
/// The output is then closed and what the peer sends is read and dropped until it closes, or
/// `lingerTimeout` passes: closing at once with the client's preface unread would make the
/// kernel answer with a reset, which can throw the GOAWAY away before the client reads it
/// (`HTTP2ConnectionHandler` lingers after its own GOAWAY for the same reason). It keeps no
/// connection state: a refused connection costs its socket and this handler for at most
/// `lingerTimeout`.
public final class HTTP2Refusal: ChannelInboundHandler {
    public typealias InboundIn = ByteBuffer
    public typealias OutboundOut = ByteBuffer

    private let frames: [UInt8]
    private let lingerTimeout: TimeAmount
    private var refused = false
    private var lingerTimer: Scheduled<Void>?

    /// A handler that refuses its connection with `reason` (free text, sent as GOAWAY's debug data).
    public init(reason: String, lingerTimeout: TimeAmount = .seconds(1)) {
        frames = Self.frames(reason: reason)
        self.lingerTimeout = lingerTimeout
    }

    /// The frames the refusal writes (for tests and tools).
    public static func frames(reason: String) -> [UInt8] {
        var frames = OutputBuffer(capacity: 32 + reason.utf8.count)
        HTTP2FrameEncoder.writeSettings([HTTP2Setting(.maxConcurrentStreams, 0)], into: &frames)
        Array(reason.utf8).withUnsafeBytes { debugData in
            HTTP2FrameEncoder.writeGoAway(lastStream: 0, code: .enhanceYourCalm, debugData: debugData, into: &frames)
        }
        return Array(frames.bytes)
    }

    public func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { refuse(context) }
    }

    public func channelActive(context: ChannelHandlerContext) {
        refuse(context)
        context.fireChannelActive()
    }

    private func refuse(_ context: ChannelHandlerContext) {
        guard !refused else { return }
        refused = true
        var buffer = context.channel.allocator.buffer(capacity: frames.count)
        buffer.writeBytes(frames)
        let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
        context.writeAndFlush(wrapOutboundOut(buffer)).whenComplete { _ in
            let closed = bound.value.eventLoop.makePromise(of: Void.self)
            bound.value.close(mode: .output, promise: closed)
            // A channel that cannot close half of itself closes whole.
            closed.futureResult.whenFailure { _ in bound.value.close(promise: nil) }
        }
        lingerTimer = context.eventLoop.scheduleTask(in: lingerTimeout) { bound.value.close(promise: nil) }
    }

    public func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        // Dropped: read so that the close is a FIN, not a reset.
    }

    public func channelInactive(context: ChannelHandlerContext) {
        lingerTimer?.cancel()
        context.fireChannelInactive()
    }

    public func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}
