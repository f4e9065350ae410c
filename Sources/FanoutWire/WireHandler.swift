import FanoutScenarioTerms
import NIOCore

/// Puts a `SinkWire` between a connection's socket and everything above it (TLS, HTTP/2): each
/// chunk read is held until it "arrives" (`WireLine`), and so is each chunk written, so the
/// TLS handshake, SETTINGS, WINDOW_UPDATE, PING and answers all take the round trip.
///
/// Held bytes are copied into one buffer a direction, which is reused (a released chunk is a
/// slice of it, handed on and let go of before the next copy), and one timer waits for the
/// earliest chunk of either direction: no allocation a chunk once the buffers have grown. Past
/// `heldBytesCap` held inbound bytes the handler stops asking the socket for more, so a
/// provider faster than the path is held back by TCP, as a full path would hold it.
///
/// A close waits for the bytes written before it (the GOAWAY in front of it reaches the peer
/// first) and refuses writes after it; when the peer's side closes, what is held inbound is
/// handed on at once (the peer sent it before it went), and when this side closed it is dropped.
package final class WireHandler: ChannelDuplexHandler {
    package typealias InboundIn = ByteBuffer
    package typealias InboundOut = ByteBuffer
    package typealias OutboundIn = ByteBuffer
    package typealias OutboundOut = ByteBuffer

    /// Chunks held one way: their bytes in `bytes` in order, and each one's length and when it
    /// arrives in `chunks`.
    private struct Held {
        var line: WireLine
        /// The sink's shared link this direction crosses, if it has one.
        let link: SharedLink?
        var bytes: ByteBuffer
        var chunks = CircularBuffer<(length: Int, due: UInt64, promise: EventLoopPromise<Void>?)>(initialCapacity: 64)

        init(bandwidth: Double?, link: SharedLink?, allocator: ByteBufferAllocator) {
            line = WireLine(bandwidth: bandwidth)
            self.link = link
            bytes = allocator.buffer(capacity: 16 * 1024)
        }

        /// Copies `buffer`, handed over at `now`, in as a chunk that arrives when the line says,
        /// `delay` after it crossed the links. The room released chunks took is taken back when
        /// nothing is held, or (a path never empty) once it is as large as what is held: each
        /// byte is moved at most once on average.
        ///
        /// A link with a bandwidth delivers a segment at a time, so a chunk that crosses one is
        /// held as its segments (`WireLine.nextPiece`), each arriving once its own bytes have
        /// crossed: a 64 KiB read is 46 segments spread over 0.27 s at 2 Mbit/s, not one lump at
        /// the end of them (a lump made a bandwidth-bound sender's completions come 170 at a
        /// time: seconds of 513 to 746 about a mean of 637). Bytes that join the last segment
        /// lengthen the last piece and move its arrival. The write's promise goes with the last
        /// piece; a piece that carries a promise is not lengthened (its write would complete
        /// late): bytes that join its segment are held as a piece of their own.
        mutating func hold(
            _ buffer: inout ByteBuffer,
            now: UInt64,
            delay: UInt64,
            promise: EventLoopPromise<Void>?
        ) {
            if chunks.isEmpty {
                bytes.clear()
            } else if bytes.readerIndex >= 64 * 1024 && bytes.readerIndex >= bytes.readableBytes {
                bytes.discardReadBytes()
            }
            var left = buffer.readableBytes
            bytes.writeBuffer(&buffer)
            guard left > 0, line.serialises || link != nil else {
                chunks.append((left, line.arrival(bytes: left, now: now, delay: delay, shared: link), promise))
                return
            }
            while left > 0 {
                let piece = line.nextPiece(of: left, now: now, delay: delay, shared: link)
                left -= piece.length
                if piece.joins, let last = chunks.indices.last, chunks[last].promise == nil {
                    chunks[last].length += piece.length
                    chunks[last].due = piece.arrival
                    chunks[last].promise = left == 0 ? promise : nil
                } else {
                    chunks.append((piece.length, piece.arrival, left == 0 ? promise : nil))
                }
            }
        }

        /// What has arrived by `now`, as one slice of `bytes`: the first piece due and those due
        /// after it, up to the first that carries a write's promise (its promise is returned).
        mutating func nextArrived(by now: UInt64) -> (ByteBuffer, EventLoopPromise<Void>?)? {
            guard let due = chunks.first?.due, due <= now else { return nil }
            var length = 0
            var promise: EventLoopPromise<Void>?
            while let next = chunks.first, next.due <= now, promise == nil {
                chunks.removeFirst()
                length += next.length
                promise = next.promise
            }
            return (bytes.readSlice(length: length)!, promise)
        }
    }

    private let wire: SinkWire
    private var random: SinkRandom
    private var inbound: Held
    private var outbound: Held
    private var context: ChannelHandlerContext?
    /// A read the handler above asked for while the held inbound bytes were past the cap.
    private var readWaiting = false
    /// A close asked for while bytes were held outbound: done once they have left.
    private var closeWaiting: (mode: CloseMode, promise: EventLoopPromise<Void>?)?
    private var inactive = false
    /// Whether this side asked for the close: then what is held from the peer is dropped when
    /// the channel goes (a server that closed reads nothing more), not handed on.
    private var closedHere = false
    /// The callback waiting for the earliest held chunk, and when it is due.
    private var timer: (due: UInt64, callback: NIOScheduledCallback)?

    package init(
        wire: SinkWire,
        links: (inbound: SharedLink, outbound: SharedLink)?,
        seed: UInt64,
        allocator: ByteBufferAllocator
    ) {
        self.wire = wire
        random = SinkRandom(seed: seed)
        inbound = Held(bandwidth: wire.bandwidth, link: links?.inbound, allocator: allocator)
        outbound = Held(bandwidth: wire.bandwidth, link: links?.outbound, allocator: allocator)
    }

    package func handlerAdded(context: ChannelHandlerContext) { self.context = context }

    package func handlerRemoved(context: ChannelHandlerContext) {
        timer?.callback.cancel()
        timer = nil
        while let (_, promise) = outbound.nextArrived(by: .max) {
            promise?.fail(ChannelError.ioOnClosedChannel)
        }
        self.context = nil
    }

    /// Half of a round trip drawn for one chunk.
    private func oneWayDelay() -> UInt64 { wire.roundTrip.sample(&random) / 2 }

    // MARK: Inbound: the provider's bytes

    package func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var buffer = unwrapInboundIn(data)
        inbound.hold(&buffer, now: NIODeadline.now().uptimeNanoseconds, delay: oneWayDelay(), promise: nil)
        schedule(context: context)
    }

    package func channelReadComplete(context: ChannelHandlerContext) {
        // Fired with the held bytes when they arrive.
    }

    package func read(context: ChannelHandlerContext) {
        if inbound.bytes.readableBytes >= wire.heldBytesCap {
            readWaiting = true
        } else {
            context.read()
        }
    }

    package func channelInactive(context: ChannelHandlerContext) {
        inactive = true
        if closedHere {
            while inbound.nextArrived(by: .max) != nil {}
        } else {
            releaseInbound(context: context, by: .max)
        }
        if let waiting = closeWaiting {
            closeWaiting = nil
            context.close(mode: waiting.mode, promise: waiting.promise)
        }
        context.fireChannelInactive()
    }

    private func releaseInbound(context: ChannelHandlerContext, by now: UInt64) {
        var released = false
        while let (slice, _) = inbound.nextArrived(by: now) {
            released = true
            context.fireChannelRead(wrapInboundOut(slice))
        }
        if released { context.fireChannelReadComplete() }
        if readWaiting && inbound.bytes.readableBytes < wire.heldBytesCap {
            readWaiting = false
            context.read()
        }
    }

    // MARK: Outbound: the sink's bytes

    package func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        // After a close was asked for nothing more goes on the wire (NIO's own rule), so the
        // close waits only for what was written before it.
        guard !inactive, closeWaiting == nil else {
            promise?.fail(ChannelError.ioOnClosedChannel)
            return
        }
        var buffer = unwrapOutboundIn(data)
        outbound.hold(&buffer, now: NIODeadline.now().uptimeNanoseconds, delay: oneWayDelay(), promise: promise)
    }

    package func flush(context: ChannelHandlerContext) {
        schedule(context: context)
    }

    package func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        if mode == .all { closedHere = true }
        // A close of the output (the HTTP/2 handler's lingering close) waits for what is held
        // too: its FIN must follow the last byte, as on a wire.
        guard mode != .input, !outbound.chunks.isEmpty, !inactive else {
            context.close(mode: mode, promise: promise)
            return
        }
        guard let waiting = closeWaiting else {
            closeWaiting = (mode, promise)
            // Bytes written but never flushed have no timer yet.
            schedule(context: context)
            return
        }
        // A second close while the first waits: it completes with the first.
        switch (waiting.promise, promise) {
        case (let first?, let second?): first.futureResult.cascade(to: second)
        case (nil, let second?): closeWaiting = (waiting.mode, second)
        default: break
        }
    }

    private func releaseOutbound(context: ChannelHandlerContext, by now: UInt64) {
        var released = false
        while let (slice, promise) = outbound.nextArrived(by: now) {
            released = true
            context.write(wrapOutboundOut(slice), promise: promise)
        }
        if released { context.flush() }
        if outbound.chunks.isEmpty, let waiting = closeWaiting {
            closeWaiting = nil
            context.close(mode: waiting.mode, promise: waiting.promise)
        }
    }

    // MARK: The timer

    /// Keeps one callback at the earliest held chunk of either direction. A scheduled callback
    /// costs no allocation on NIO's event loops (a task's closure and promise would, once a
    /// wake).
    private func schedule(context: ChannelHandlerContext) {
        let next = min(inbound.chunks.first?.due ?? .max, outbound.chunks.first?.due ?? .max)
        guard next != .max else { return }
        if let timer {
            if timer.due <= next { return }
            timer.callback.cancel()
        }
        let target = Callback(handler: NIOLoopBound(self, eventLoop: context.eventLoop))
        do {
            timer = (next, try context.eventLoop.scheduleCallback(at: .uptimeNanoseconds(next), handler: target))
        } catch {
            // The loop is shutting down: nothing held will ever be released.
            context.close(promise: nil)
        }
    }

    /// The timer's target: the handler, reached on its loop (a class and a loop: it fits an
    /// existential's inline room, so scheduling it allocates nothing).
    private struct Callback: NIOScheduledCallbackHandler, Sendable {
        let handler: NIOLoopBound<WireHandler>
        func handleScheduledCallback(eventLoop: some EventLoop) { handler.value.timerFired() }
    }

    private func timerFired() {
        timer = nil
        guard let context else { return }
        let now = NIODeadline.now().uptimeNanoseconds
        releaseInbound(context: context, by: now)
        releaseOutbound(context: context, by: now)
        schedule(context: context)
    }
}

extension SinkWire {
    /// What puts a `WireHandler` in front of each connection a server accepts, its round trips
    /// drawn from `seed()`'s values; the sink's shared bandwidth, when the wire has one, is one
    /// pair of links for every connection this installer serves.
    package func installer(seed: @escaping @Sendable () -> UInt64) -> @Sendable (any Channel) throws -> Void {
        let links = sinkBandwidth.map { (inbound: SharedLink(bandwidth: $0), outbound: SharedLink(bandwidth: $0)) }
        return { channel in
            try channel.pipeline.syncOperations.addHandler(
                WireHandler(wire: self, links: links, seed: seed(), allocator: channel.allocator)
            )
        }
    }
}
