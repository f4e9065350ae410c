import NIOCore
import NIOSSL
import NIOTLS

/// Runs an `HTTP2Connection` on a NIO channel: frames are read straight from the received
/// bytes (a partial frame waits in one reused buffer), and what the connection and its delegate
/// queue during a burst of reads goes out in one write when the burst ends — or sooner, 16 KB
/// at a time, when a long read queues that much (`process`).
public final class HTTP2ConnectionHandler<Delegate: HTTP2ConnectionDelegate>: ChannelDuplexHandler {
    public typealias InboundIn = ByteBuffer
    public typealias OutboundIn = ByteBuffer
    public typealias OutboundOut = ByteBuffer

    private var connection: HTTP2Connection
    /// The delegate, with its state (counters, pending work).
    public private(set) var delegate: Delegate
    private var partial: ByteBuffer
    /// What goes to the channel: the connection's queued frames moved in once per flush, kept
    /// and reused (NIO lets go of it once written).
    private var sending = ByteBuffer()
    private var context: ChannelHandlerContext?
    private var started = false
    private var ended = false
    private var failure: (any Error)?
    /// With TLS, the handshake must have chosen ALPN `h2`.
    private let requiresALPN: Bool
    /// How long the SETTINGS exchange may take before the connection ends with SETTINGS_TIMEOUT.
    private let settingsTimeout: TimeAmount
    private var settingsTimer: Scheduled<Void>?
    /// Whether `flush` is writing (a write may call back into the handler).
    private var isFlushing = false
    /// The timer for the delegate's `nextWakeUp`, and when it fires.
    private var wakeUp: (deadline: NIODeadline, task: Scheduled<Void>)?
    /// `Configuration.wakeUpWindow` in nanoseconds.
    private let wakeUpWindow: UInt64
    /// A read asked for while the channel could not take our writes (servers only): held until
    /// it can, so a client that does not read what it provokes (PING and SETTINGS floods,
    /// requests whose answers it leaves unread) stops being read instead of filling memory. A
    /// client keeps reading: were both sides to hold their reads while their writes back up,
    /// neither would move again; a server's floods to a client meet `maxQueuedControlReplies`.
    private var readHeld = false
    /// The timer for a frame whose start has arrived and whose rest has not
    /// (`incompleteFrameTimeout`): set when `partial` starts holding bytes, cancelled when it
    /// empties, so a peer dribbling one frame a byte at a time does not restart it.
    private var incompleteFrameTimer: Scheduled<Void>?
    /// Between a burst's first `channelRead` and its `channelReadComplete`.
    private var isReading = false
    /// When bytes were last written in the middle of a read (`process`), uptime nanoseconds on
    /// the loop's clock; `nil` before the first.
    private var midReadWrittenAt: UInt64?
    /// Whether a read's frames are being handled (`channelRead`), and the bytes that arrived
    /// meanwhile: a write in the middle of the read can call back in with more (NIO reads what
    /// is left in the socket before it closes a channel whose write failed). Handled after the
    /// read's own, in order, never inside them: the frames being read lie in `partial` or the
    /// read's buffer, borrowed, and HPACK must see every block in order.
    private var isHandling = false
    private var arrivedWhileHandling = ByteBuffer()
    /// Whether the peer's first bytes have come: a server's any byte, a client's the 4 it judges
    /// for another protocol (`judgeFirstBytes`).
    private var heardPeer = false
    /// A server's connection that ended with its GOAWAY: its output is closed (FIN after the
    /// last frame) and what the peer still sends is read and dropped until the peer closes or
    /// `lingerTimeout` passes. Closing at once with the peer's bytes unread would make the
    /// kernel answer with a reset, and a reset throws away what the peer has not read yet —
    /// the GOAWAY and the last answers among it (RFC 9113 §6.8: the peer's streams in flight
    /// are the race a GOAWAY leaves; nghttp2 lingers the same way).
    private var lingering = false
    private var lingerTimer: Scheduled<Void>?
    /// How long a lingering connection waits for its peer to close.
    public static var lingerTimeout: TimeAmount { .seconds(1) }

    /// Creates the handler; `requiresALPN` when a TLS handler sits before it.
    public init(
        role: HTTP2Connection.Role,
        configuration: HTTP2Connection.Configuration = .init(),
        requiresALPN: Bool = false,
        settingsTimeout: TimeAmount = .seconds(10),
        delegate: Delegate
    ) {
        connection = HTTP2Connection(role: role, configuration: configuration)
        self.delegate = delegate
        self.requiresALPN = requiresALPN
        self.settingsTimeout = settingsTimeout
        wakeUpWindow = UInt64(max(0, TimeAmount(configuration.wakeUpWindow).nanoseconds))
        partial = ByteBufferAllocator().buffer(capacity: 0)
    }

    public func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        if context.channel.isActive { start(context) }
    }

    public func channelActive(context: ChannelHandlerContext) {
        start(context)
        context.fireChannelActive()
    }

    private func start(_ context: ChannelHandlerContext) {
        guard !started else { return }
        started = true
        connection.withWriter { delegate.connectionStarted(&$0) }
        flush(context)
        // A peer that never completes the SETTINGS exchange does not hold the connection.
        let handler = NIOLoopBound(self, eventLoop: context.eventLoop)
        settingsTimer = context.eventLoop.scheduleTask(in: settingsTimeout) {
            handler.value.settingsTimerFired()
        }
    }

    private func settingsTimerFired() {
        guard let context, let event = connection.settingsTimerExpired() else { return }
        connection.withWriter { delegate.handle(event, connection: &$0) }
        flush(context)
    }

    public func channelWritabilityChanged(context: ChannelHandlerContext) {
        connection.withWriter { delegate.writabilityChanged(context.channel.isWritable, connection: &$0) }
        flush(context)
        if context.channel.isWritable && readHeld {
            readHeld = false
            context.read()
        }
        context.fireChannelWritabilityChanged()
    }

    public func read(context: ChannelHandlerContext) {
        if connection.role == .client || context.channel.isWritable {
            context.read()
        } else {
            readHeld = true
        }
    }

    public func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        // Lingering after the GOAWAY: read and dropped, so the close is a FIN, not a reset.
        if lingering { return }
        var bytes = unwrapInboundIn(data)
        // A write in the middle of this read called back in with more (NIO reads what is left
        // in the socket when a write fails): they wait behind the bytes being handled.
        if isHandling {
            arrivedWhileHandling.writeBuffer(&bytes)
            return
        }
        if !heardPeer && !judgeFirstBytes(context, bytes) { return }
        connection.bytesArrived(at: NIODeadline.now().uptimeNanoseconds, beginningBurst: !isReading)
        isReading = true
        isHandling = true
        if partial.readableBytes == 0 {
            process(&bytes)
            if bytes.readableBytes > 0 { partial.writeBuffer(&bytes) }
        } else {
            partial.writeBuffer(&bytes)
            process(&partial)
            partial.discardReadBytes()
        }
        while arrivedWhileHandling.readableBytes > 0 && !ended {
            partial.writeBuffer(&arrivedWhileHandling)
            arrivedWhileHandling.clear()
            process(&partial)
            partial.discardReadBytes()
        }
        isHandling = false
        // A write in the middle of the read closed the channel: the connection has ended.
        if ended { return }
        watchIncompleteFrame(context)
        // A long burst of reads (1000 streams on one connection) should not hold every answer
        // back until it ends: the peer would sit idle waiting for them.
        if connection.outbound.count >= Self.earlyWriteBytes { flush(context) }
    }

    /// A client judges the server's first bytes (`HTTP2ChannelError(otherProtocolIn:)`): an
    /// HTTP/1 status line, a TLS record or anything but a SETTINGS frame closes the channel
    /// with that failure (false). A first read can be shorter than a judgement needs — 4 bytes,
    /// or all of `HTTP/1.` when they begin it — so its bytes wait in `partial` (no frame header
    /// is whole yet), and the next read is judged with them, until enough have come.
    private func judgeFirstBytes(_ context: ChannelHandlerContext, _ bytes: ByteBuffer) -> Bool {
        guard connection.role == .client else {
            heardPeer = true
            return true
        }
        var first = bytes
        if partial.readableBytes > 0 {
            first = partial
            first.writeImmutableBuffer(bytes)
        }
        let view = first.readableBytesView
        // Fewer than 4 bytes, or the start of "HTTP/1." (7): not yet judged.
        if view.count < 4 || (view.count < 7 && "HTTP/1.".utf8.starts(with: view)) { return true }
        heardPeer = true
        if let wrong = HTTP2ChannelError(otherProtocolIn: first) {
            failure = wrong
            context.close(promise: nil)
            return false
        }
        return true
    }

    /// Starts the incomplete-frame timer when `partial` starts holding bytes, stops it when
    /// `partial` empties.
    private func watchIncompleteFrame(_ context: ChannelHandlerContext) {
        if partial.readableBytes == 0 || connection.error != nil {
            incompleteFrameTimer?.cancel()
            incompleteFrameTimer = nil
        } else if incompleteFrameTimer == nil, let timeout = connection.configuration.incompleteFrameTimeout {
            let handler = NIOLoopBound(self, eventLoop: context.eventLoop)
            incompleteFrameTimer = context.eventLoop.scheduleTask(in: TimeAmount(timeout)) {
                handler.value.incompleteFrameTimerFired()
            }
        }
    }

    private func incompleteFrameTimerFired() {
        incompleteFrameTimer = nil
        guard let context, !ended, partial.readableBytes > 0,
            let event = connection.incompleteFrameTimerExpired(waiting: partial.readableBytes)
        else { return }
        connection.withWriter { delegate.handle(event, connection: &$0) }
        flush(context)
    }

    /// Queued bytes that are written without waiting for the end of the read burst.
    static var earlyWriteBytes: Int { 2 * 1024 }

    /// Queued bytes past which a read's handling stops to write them before it reads on: a full
    /// TLS record's worth. A client that refills each answered stream at once would otherwise
    /// hold all of a read's requests until its last answer was handled (for a read of 1000
    /// answers, about 1.5 ms for the first request), and the server would sit idle meanwhile.
    static var midReadWriteBytes: Int { 16 * 1024 }
    /// The least time between two of those writes, after the first: each costs a write, and
    /// downstream a read and whatever the peer does per read (a held answer's timer), so they
    /// are spaced rather than made every 16 KB; a request queued between two waits half of
    /// it on average. Half a millisecond: a burst's p50 within 85 ± 1 ms where a millisecond
    /// read 86.0–86.5, at the CPU of a millisecond's spacing (docs/performance.md, "A
    /// connection's burst").
    static var midReadWriteSpacing: UInt64 { 500_000 }

    /// Handles `bytes`' whole frames, writing what they queue in the middle of the read each time
    /// it passes `midReadWriteBytes`, at most once a `midReadWriteSpacing`:
    ///
    /// ```
    ///   frames handled ─────────────────────────────────────────────────► the read ends
    ///   16 KB queued:        ▲ written            ┊ not: < 0.5 ms since   ▲ the rest written
    ///                        (the first, or ≥ 0.5 ms after the last)        (channelRead's end)
    /// ```
    ///
    /// A finished connection (GOAWAY sent or received and its streams done, or an error) reads
    /// the rest without writing in between, so the events it queued (streams a GOAWAY refused)
    /// are all handed over, as before the writes. The write can end the channel (a write that
    /// fails closes it, after NIO has read what is left): then nothing more is handed over.
    private func process(_ bytes: inout ByteBuffer) {
        var limit = Self.midReadWriteBytes
        while HTTP2Connection.receive(
            &connection,
            from: &bytes,
            pausingAt: limit,
            { event, writer in
                delegate.handle(event, connection: &writer)
            }
        ) {
            guard let context else { return }
            if lingering || connection.isFinished {
                limit = .max
                continue
            }
            // The loop's clock: an embedded loop's in tests.
            let now = context.eventLoop.now.uptimeNanoseconds
            if let last = midReadWrittenAt, now - min(now, last) < Self.midReadWriteSpacing {
                limit = connection.outbound.count + Self.midReadWriteBytes
                continue
            }
            midReadWrittenAt = now
            limit = Self.midReadWriteBytes
            flush(context)
            if ended { return }
        }
    }

    public func channelReadComplete(context: ChannelHandlerContext) {
        // Told by NIO after reading what was left before it closes a channel whose write failed,
        // inside a write in the middle of a read: that read completes when it ends.
        if isHandling { return }
        isReading = false
        flush(context)
        context.fireChannelReadComplete()
    }

    public func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is HTTP2WakeUp {
            guard !ended else { return }
            connection.withWriter { delegate.wake(now: .now(), connection: &$0) }
            flush(context)
            return
        }
        if requiresALPN, let event = event as? TLSUserEvent, case .handshakeCompleted(let negotiated) = event {
            if negotiated == "h2" {
                let certificate = try? context.pipeline.syncOperations.nioSSL_peerCertificate()
                connection.tlsVersion = (try? context.pipeline.syncOperations.nioSSL_tlsVersion()).map { version in
                    switch version {
                    case .tlsv1: "TLSv1.0"
                    case .tlsv11: "TLSv1.1"
                    case .tlsv12: "TLSv1.2"
                    case .tlsv13: "TLSv1.3"
                    }
                }
                connection.withWriter { delegate.tlsEstablished(peerCertificate: certificate, connection: &$0) }
                flush(context)
            } else {
                failure = HTTP2ChannelError.alpnNotNegotiated(negotiated)
                context.close(promise: nil)
            }
        }
        context.fireUserInboundEventTriggered(event)
    }

    public func channelInactive(context: ChannelHandlerContext) {
        end()
        context.fireChannelInactive()
    }

    public func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if failure == nil { failure = error }
        context.close(promise: nil)
    }

    public func handlerRemoved(context: ChannelHandlerContext) {
        end()
        self.context = nil
    }

    private func end() {
        guard !ended else { return }
        ended = true
        lingerTimer?.cancel()
        settingsTimer?.cancel()
        incompleteFrameTimer?.cancel()
        wakeUp?.task.cancel()
        wakeUp = nil
        delegate.connectionEnded(connection, error: failure ?? connection.error)
    }

    /// Runs `body` with the connection and delegate (on the event loop), then writes what it
    /// queued: how a client sends requests that no read prompted.
    public func withConnection<Result>(
        _ body: (inout HTTP2Writer, inout Delegate) -> Result
    ) -> Result {
        let result = connection.withWriter { body(&$0, &delegate) }
        if let context { flush(context) }
        return result
    }

    /// Writes the queued bytes in one write and reuses the buffer; closes the channel once the
    /// connection is finished (after a connection error, or GOAWAY with no open streams).
    ///
    /// A write can call back in before it returns (NIO reports the channel unwritable from
    /// inside `writeAndFlush` once its high watermark is passed): the inner call must not write
    /// the same bytes again, and bytes queued meanwhile must not be lost when the outer call
    /// moves past what it wrote.
    private func flush(_ context: ChannelHandlerContext) {
        guard !isFlushing else { return }
        isFlushing = true
        let wrote = connection.outbound.count > 0
        // A write can call back into the handler (writability), which may queue more.
        while connection.outbound.count > 0 {
            connection.moveOutbound(into: &sending)
            context.writeAndFlush(wrapOutboundOut(sending), promise: nil)
            sending.clear()
        }
        isFlushing = false
        if wrote { delegate.outboundWritten(at: NIODeadline.now().uptimeNanoseconds) }
        if context.channel.isWritable { connection.controlRepliesDelivered() }
        if connection.isFinished && context.channel.isActive && !lingering {
            if let error = connection.error, failure == nil { failure = error }
            if connection.error == nil && connection.role == .server && heardPeer {
                linger(context)
            } else {
                context.close(promise: nil)
            }
        }
        scheduleWakeUp(context)
    }

    /// Closes the output (a FIN after the last frame) and drops what the peer still sends until
    /// it closes too, or `lingerTimeout` passes; a channel that cannot close half of itself
    /// closes whole at once.
    private func linger(_ context: ChannelHandlerContext) {
        lingering = true
        let promise = context.eventLoop.makePromise(of: Void.self)
        context.close(mode: .output, promise: promise)
        let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
        promise.futureResult.whenFailure { _ in bound.value.close(promise: nil) }
        lingerTimer = context.eventLoop.scheduleTask(in: Self.lingerTimeout) { bound.value.close(promise: nil) }
    }

    /// Keeps one timer at the delegate's earliest wake-up, moved on to the wake-up window's
    /// next instant (`Configuration.wakeUpWindow`):
    ///
    /// ```
    ///   window │    ╷    ╷    ╷    ╷        three connections' due times (a b c), one loop:
    ///   due    │  a b   c                   a and b wake at the same instant, c at the next;
    ///   wakes  │    ▲    ▲                  each connection writes once a wake
    /// ```
    private func scheduleWakeUp(_ context: ChannelHandlerContext) {
        guard !ended, let asked = delegate.nextWakeUp else { return }
        let due = Self.onWindow(asked, window: wakeUpWindow)
        if let current = wakeUp {
            if current.deadline <= due { return }
            current.task.cancel()
        }
        let handler = NIOLoopBound(self, eventLoop: context.eventLoop)
        wakeUp = (due, context.eventLoop.scheduleTask(deadline: due) { handler.value.wakeUpFired() })
    }

    /// `deadline` moved on to the next multiple of `window` nanoseconds (itself when it is one,
    /// or when `window` is 0).
    static func onWindow(_ deadline: NIODeadline, window: UInt64) -> NIODeadline {
        guard window > 0 else { return deadline }
        let time = deadline.uptimeNanoseconds
        let remainder = time % window
        guard remainder > 0, time <= UInt64.max - window else { return deadline }
        return .uptimeNanoseconds(time - remainder + window)
    }

    private func wakeUpFired() {
        wakeUp = nil
        guard let context, !ended else { return }
        connection.withWriter { delegate.wake(now: .now(), connection: &$0) }
        flush(context)
    }
}

/// An event that wakes an `HTTP2ConnectionHandler`'s delegate now (`wake(now:connection:)`), fired
/// into its pipeline from any thread (`ChannelPipeline.fireUserInboundEventTriggered`): how
/// something off the connection's loop tells it to look again at what it shares.
public struct HTTP2WakeUp: Sendable {
    public init() {}
}

/// Why a channel was closed by Fanout's HTTP/2 layer rather than by the peer.
public enum HTTP2ChannelError: Error, Sendable, Hashable, CustomStringConvertible {
    /// TLS completed without choosing `h2` by ALPN.
    case alpnNotNegotiated(String?)
    /// The server's first bytes were an HTTP/1.x status line (given): it does not take HTTP/2
    /// with prior knowledge.
    case answeredInHTTP1(String)
    /// The server's first bytes were a TLS record: it wants `https://`.
    case answeredInTLS
    /// The server's first bytes (given, quoted) were not the SETTINGS frame every HTTP/2
    /// server starts with (RFC 9113 §3.4).
    case notHTTP2Preface(String)

    public var description: String {
        switch self {
        case .alpnNotNegotiated(let protocolName):
            "TLS chose \(protocolName.map { "ALPN \($0)" } ?? "no ALPN protocol"), not h2"
        case .answeredInHTTP1(let statusLine):
            "the server answered in HTTP/1: \(statusLine)"
        case .answeredInTLS:
            "the server answered in TLS: use https://"
        case .notHTTP2Preface(let quoted):
            "the server's first bytes were not an HTTP/2 SETTINGS frame: \(quoted)"
        }
    }

    /// A server's first bytes that cannot start an HTTP/2 frame and say what they are instead:
    ///
    /// ```
    ///   "HTTP/1.1 400 …"   48 54 54 50 2F  a status line (as a frame: length 0x485454, far past
    ///                                      any SETTINGS_MAX_FRAME_SIZE)
    ///   TLS alert/handshake 15|16 03 xx   a TLS record (length 0x1503xx or 0x1603xx: the same)
    ///   HTTP/2              ll ll ll 04   the server's SETTINGS: its preface, always first
    ///   anything else       "<!DOCTYPE…"  not HTTP/2 (quoted)
    /// ```
    /// Fewer than 4 bytes are not judged.
    public init?(otherProtocolIn bytes: ByteBuffer) {
        let view = bytes.readableBytesView
        if view.starts(with: "HTTP/1.".utf8) {
            let line = view.prefix(120).prefix { $0 != UInt8(ascii: "\r") && $0 != UInt8(ascii: "\n") }
            self = .answeredInHTTP1(String(decoding: line, as: UTF8.self))
        } else if view.count >= 2, [0x15, 0x16].contains(view.first!), view.dropFirst().first == 0x03 {
            self = .answeredInTLS
        } else if view.count >= 4, view[view.startIndex + 3] != HTTP2FrameType.settings.rawValue {
            let quoted = view.prefix(24).map { byte in
                (0x20..<0x7F).contains(byte)
                    ? String(UnicodeScalar(byte)) : "\\x" + (byte < 16 ? "0" : "") + String(byte, radix: 16)
            }
            self = .notHTTP2Preface("\"" + quoted.joined() + (view.count > 24 ? "…\"" : "\""))
        } else {
            return nil
        }
    }
}
