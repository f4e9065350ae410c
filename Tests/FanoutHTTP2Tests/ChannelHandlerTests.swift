import FanoutTestSupport
import Foundation
import NIOCore
import NIOEmbedded
import Testing

@testable import FanoutHTTP2

/// The NIO channel handler's own duties: bounded waits, and what a peer that breaks the
/// protocol over a real socket receives before the connection closes.
@Suite struct ChannelHandlerTests {
    /// Connects to `port`, writes `bytes`, and reads until the server closes (within 10 s).
    static func exchange(port: Int, sending bytes: [UInt8]) throws -> [UInt8] {
        let fd = try #require(connectLoopback(port: port))
        defer { close(fd) }
        _ = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, 0) }
        return receive(fd, waitingUpTo: timeval(tv_sec: 10, tv_usec: 0))
    }

    /// What `fd` receives until the peer closes it or nothing arrives for `timeout`.
    static func receive(_ fd: Int32, waitingUpTo timeout: timeval) -> [UInt8] {
        var timeout = timeout
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var received: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { break }
            received += chunk[..<count]
        }
        return received
    }

    /// Whether the peer has not closed `fd`: a look at the next byte, without taking it or
    /// waiting (unread bytes before a close count as open; the frames they hold tell the rest).
    static func isOpen(_ fd: Int32) -> Bool {
        var byte: UInt8 = 0
        return recv(fd, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT)) != 0
    }

    static func frames(_ bytes: [UInt8]) -> [HTTP2Frame] {
        var buffer = ByteBuffer(bytes: bytes)
        var decoder = HTTP2FrameDecoder(maxFrameSize: 1 << 24 - 1)
        var frames: [HTTP2Frame] = []
        while let frame = try? decoder.nextFrame(from: &buffer) { frames.append(frame) }
        return frames
    }

    @Test func aPeerThatNeverSendsSettingsIsClosedWithSettingsTimeout() throws {
        let server = try FanoutServer(settingsTimeout: .milliseconds(300))
        defer { server.stop() }
        let started = ContinuousClock.now
        let received = try Self.exchange(port: server.port, sending: http2ConnectionPreface)
        #expect(ContinuousClock.now - started < .seconds(5))
        #expect(Self.frames(received).goAway?.code == .settingsTimeout)
    }

    /// Half a HEADERS frame, then silence: the connection ends with ENHANCE_YOUR_CALM once the
    /// rest has been awaited for `incompleteFrameTimeout`, not at the idle or settings timeout.
    @Test func aFrameLeftHalfSentEndsTheConnectionAtTheFrameTimeout() throws {
        var configuration = HTTP2Connection.Configuration()
        configuration.incompleteFrameTimeout = .milliseconds(300)
        let server = try FanoutServer(configuration: configuration)
        defer { server.stop() }
        let headers = FloodLimitTests.headers(1)
        let started = ContinuousClock.now
        let received = try Self.exchange(port: server.port, sending: RawFrame.clientStart + headers.prefix(12))
        let waited = ContinuousClock.now - started
        #expect(waited >= .milliseconds(300) && waited < .seconds(5), "\(waited)")
        let goAway = FloodLimitTests.goAway(in: Self.frames(received))
        #expect(goAway?.code == .enhanceYourCalm)
        #expect(goAway?.reason == "12 bytes of a frame waited 0.3 seconds for the rest")
    }

    /// Whole frames arriving slower than the timeout are not an incomplete frame: only a frame
    /// whose rest is late counts.
    @Test func wholeFramesSentSlowlyAreServed() throws {
        var configuration = HTTP2Connection.Configuration()
        configuration.incompleteFrameTimeout = .milliseconds(200)
        let server = try FanoutServer(configuration: configuration)
        defer { server.stop() }
        let fd = try #require(connectLoopback(port: server.port))
        defer { close(fd) }
        for part in [RawFrame.clientStart, FloodLimitTests.ping(1), FloodLimitTests.ping(2)] {
            _ = part.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, 0) }
            // The pause is the behaviour under test: whole frames 0.3 s apart, past the 0.2 s
            // timeout, with the connection open throughout.
            let stayedOpen = hold(for: .milliseconds(300)) { Self.isOpen(fd) }
            #expect(stayedOpen, "the server closed the connection between whole frames")
        }
        let frames = Self.frames(Self.receive(fd, waitingUpTo: timeval(tv_sec: 0, tv_usec: 300_000)))
        #expect(frames.goAway == nil)
        #expect(frames.filter { if case .ping(_, ack: true) = $0 { true } else { false } }.count == 2)
    }

    @Test func aProtocolErrorGetsGoAwayAndTheConnectionCloses() throws {
        let server = try FanoutServer()
        defer { server.stop() }
        let received = try Self.exchange(
            port: server.port,
            sending: RawFrame.clientStart + RawFrame.data(stream: 1, [1, 2, 3], endStream: true)
        )
        let goAway = Self.frames(received).first { if case .goAway = $0 { true } else { false } }
        guard case .goAway(let lastStream, let code, let debugData) = goAway else {
            Issue.record("no GOAWAY in \(received.count) bytes")
            return
        }
        #expect(lastStream == 0)
        #expect(code == .protocolError)
        #expect(String(buffer: debugData) == "DATA on idle stream 1")
    }

    @Test func anHTTP1RequestIsRefused() throws {
        let server = try FanoutServer()
        defer { server.stop() }
        let received = try Self.exchange(port: server.port, sending: Array("GET / HTTP/1.1\r\nHost: x\r\n\r\n".utf8))
        #expect(Self.frames(received).goAway?.code == .protocolError)
    }
}

/// Writes that call back into the handler, as NIO does when a write passes the channel's high
/// watermark: every byte must go out once, in order.
@Suite struct ReentrantWriteTests {
    /// Reports a writability change from inside every write.
    final class WritabilityReporter: ChannelOutboundHandler {
        typealias OutboundIn = ByteBuffer

        func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
            context.write(data, promise: promise)
            context.fireChannelWritabilityChanged()
        }
    }

    /// Sends `count` requests as soon as it may, and one more each time writability changes.
    struct Sender: HTTP2ConnectionDelegate {
        var count: Int
        var sent = 0

        mutating func connectionStarted(_ connection: inout HTTP2Writer) { send(&connection, upTo: count) }

        mutating func writabilityChanged(_ isWritable: Bool, connection: inout HTTP2Writer) {
            send(&connection, upTo: min(sent + 1, count + 20))
        }

        mutating func handle(_ event: HTTP2Event, connection: inout HTTP2Writer) {}

        private mutating func send(_ connection: inout HTTP2Writer, upTo limit: Int) {
            while sent < limit, (try? connection.sendRequest(apnsRequest(), body: ByteBuffer(string: "{}"))) != nil {
                sent += 1
            }
        }
    }

    @Test func bytesQueuedDuringAWriteGoOutOnceAndInOrder() throws {
        let channel = EmbeddedChannel()
        defer { _ = try? channel.finish() }
        try channel.pipeline.syncOperations.addHandler(WritabilityReporter())
        try channel.pipeline.syncOperations.addHandler(
            HTTP2ConnectionHandler(role: .client, delegate: Sender(count: 30))
        )
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 443)).wait()
        var written = ByteBuffer()
        while var part = try channel.readOutbound(as: ByteBuffer.self) { written.writeBuffer(&part) }
        let preface = written.readBytes(length: http2ConnectionPreface.count)
        #expect(preface == http2ConnectionPreface)
        let frames = ChannelHandlerTests.frames(Array(written.readableBytesView))
        let headers = frames.compactMap { frame -> UInt32? in
            if case .headers(let stream, _, _) = frame { return stream }
            return nil
        }
        // 30 at the start, then one more for each write's writability report, each stream once.
        #expect(headers.count > 30)
        #expect(headers == Array(stride(from: 1, to: UInt32(2 * headers.count + 1), by: 2)))
        #expect(frames.filter { if case .settings = $0 { true } else { false } }.count == 1)
    }

    /// Wakes once, at the time it asks for.
    struct Waker: HTTP2ConnectionDelegate {
        var asks: NIODeadline?
        var wakes = 0

        mutating func handle(_ event: HTTP2Event, connection: inout HTTP2Writer) {}

        var nextWakeUp: NIODeadline? { asks }

        mutating func wake(now: NIODeadline, connection: inout HTTP2Writer) {
            wakes += 1
            asks = nil
        }
    }

    /// Two connections of one event loop asking to wake 0.3 ms and 0.7 ms past a window's
    /// instant both wake at the next instant, together, and not before; with no window each
    /// wakes at its own time.
    @Test(arguments: [true, false])
    func wakeUpsWithinAWindowComeTogetherAtItsNextInstant(windowed: Bool) throws {
        let loop = EmbeddedEventLoop()
        var configuration = HTTP2Connection.Configuration()
        if windowed { configuration.wakeUpWindow = .milliseconds(1) }
        let asks: [UInt64] = [1_300_000, 1_700_000]
        let handlers = try asks.map { ask in
            let channel = EmbeddedChannel(loop: loop)
            let handler = HTTP2ConnectionHandler(
                role: .client,
                configuration: configuration,
                delegate: Waker(asks: .uptimeNanoseconds(ask))
            )
            try channel.pipeline.syncOperations.addHandler(handler)
            try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 443)).wait()
            return (channel, handler)
        }
        defer { for (channel, _) in handlers { _ = try? channel.finish() } }
        func wakes() -> [Int] { handlers.map { $0.1.delegate.wakes } }
        loop.advanceTime(to: .uptimeNanoseconds(1_300_000))
        #expect(wakes() == (windowed ? [0, 0] : [1, 0]))
        loop.advanceTime(to: .uptimeNanoseconds(1_999_999))
        #expect(wakes() == (windowed ? [0, 0] : [1, 1]))
        loop.advanceTime(to: .uptimeNanoseconds(2_000_000))
        #expect(wakes() == [1, 1])
    }

    @Test func aDeadlineMovesOnToItsWindowsNextInstant() {
        typealias Handler = HTTP2ConnectionHandler<Waker>
        func on(_ time: UInt64, _ window: UInt64) -> UInt64 {
            Handler.onWindow(.uptimeNanoseconds(time), window: window).uptimeNanoseconds
        }
        #expect(on(1_000_001, 1_000) == 1_001_000)
        #expect(on(1_000_000, 1_000) == 1_000_000)  // on an instant already
        #expect(on(1_234_567, 0) == 1_234_567)  // no window
        // Past the last instant a deadline can hold, the end of time.
        let last = UInt64(Int64.max) - 5
        #expect(on(last, 1_000) >= last)
    }
}

/// `HTTP2WakeUp` fired into a pipeline wakes the handler's delegate at once (how the load
/// engine tells a connection to look again at what it shares), and not once it has ended.
@Suite struct WakeUpEventTests {
    struct Sleeper: HTTP2ConnectionDelegate {
        var wakes = 0
        mutating func handle(_ event: HTTP2Event, connection: inout HTTP2Writer) {}
        mutating func wake(now: NIODeadline, connection: inout HTTP2Writer) { wakes += 1 }
    }

    @Test func aWakeUpEventWakesTheDelegateUntilTheConnectionEnds() throws {
        let channel = EmbeddedChannel()
        let handler = HTTP2ConnectionHandler(role: .client, delegate: Sleeper())
        try channel.pipeline.syncOperations.addHandler(handler)
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 443)).wait()
        channel.pipeline.fireUserInboundEventTriggered(HTTP2WakeUp())
        channel.pipeline.fireUserInboundEventTriggered(HTTP2WakeUp())
        #expect(handler.delegate.wakes == 2)
        _ = try? channel.finish()
        channel.pipeline.fireUserInboundEventTriggered(HTTP2WakeUp())
        #expect(handler.delegate.wakes == 2)
    }
}

/// A client's view of a server that is not HTTP/2, whatever its first read holds.
@Suite struct FirstBytesTests {
    /// Sends nothing; keeps the error its connection ended with.
    struct EndWatcher: HTTP2ConnectionDelegate {
        var ended: (any Error)?? = nil

        mutating func handle(_ event: HTTP2Event, connection: inout HTTP2Writer) {}

        mutating func connectionEnded(_ connection: borrowing HTTP2Connection, error: (any Error)?) {
            ended = .some(error)
        }
    }

    /// The server's bytes in reads of the given sizes; the error the connection ended with
    /// (`nil` inside: ended without one; `nil` outside: not ended).
    static func ending(_ bytes: [UInt8], readsOf sizes: [Int]) throws -> (any Error)?? {
        let channel = EmbeddedChannel()
        defer { _ = try? channel.finish() }
        let handler = HTTP2ConnectionHandler(role: .client, delegate: EndWatcher())
        try channel.pipeline.syncOperations.addHandler(handler)
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 443)).wait()
        var offset = 0
        for size in sizes where channel.isActive && offset < bytes.count {
            try channel.writeInbound(ByteBuffer(bytes: bytes[offset..<min(bytes.count, offset + size)]))
            offset += size
        }
        return handler.delegate.ended
    }

    /// An HTTP/1 status line, a TLS alert or an HTML page is named for what it is when the first
    /// read holds fewer than the 4 bytes a judgement needs (1, 2, 3), or only part of `HTTP/1.`
    /// (4, 5, 6), as when it holds them all.
    @Test(arguments: [1, 2, 3, 4, 5, 6, 64])
    func aServerSpeakingAnotherProtocolIsNamedHoweverItsBytesAreSplit(firstRead: Int) throws {
        // A page is judged on the first 4 bytes or more: the ones it has then are quoted.
        let page = Array("<html>\n".utf8)
        let judged = firstRead >= 4 ? Array(page.prefix(firstRead)) : page
        let cases: [([UInt8], HTTP2ChannelError)] = [
            (Array("HTTP/1.1 400 Bad Request\r\n\r\n".utf8), .answeredInHTTP1("HTTP/1.1 400 Bad Request")),
            ([0x15, 0x03, 0x01, 0x00, 0x02, 0x02, 0x46], .answeredInTLS),
            (
                page,
                .notHTTP2Preface("\"" + String(decoding: judged, as: UTF8.self).replacing("\n", with: #"\x0a"#) + "\"")
            ),
        ]
        for (bytes, expected) in cases {
            let ended = try Self.ending(bytes, readsOf: [firstRead, 64])
            #expect((ended ?? nil) as? HTTP2ChannelError == expected, "\(bytes) split at \(firstRead)")
        }
    }

    /// A server's SETTINGS split after its first byte is HTTP/2: the connection goes on.
    @Test func aSettingsFrameSplitAfterItsFirstByteIsHTTP2() throws {
        let settings: [UInt8] = [0, 0, 6, 4, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 100]
        let ended = try Self.ending(settings, readsOf: [1, 2, 64])
        #expect(ended == nil)
    }
}

/// A read whose handling queues more than a TLS record's worth writes it before reading on
/// (`HTTP2Connection.receive(_:from:pausingAt:_:)`, the handler's `midReadWriteBytes`): a burst
/// of answers, each refilled with a request, does not hold the first request until the last
/// answer is handled.
@Suite struct MidReadWriteTests {
    /// 200 bytes of body with every answer: about 230 bytes an answer.
    static let answerBody = ByteBuffer(repeating: UInt8(ascii: "x"), count: 200)

    /// Answers every request at once, and counts what it was handed.
    struct Answerer: HTTP2ConnectionDelegate {
        var answered = 0
        var ended = false
        var handledAfterEnd = 0

        mutating func handle(_ event: HTTP2Event, connection: inout HTTP2Writer) {
            if ended { handledAfterEnd += 1 }
            guard case .message(let message) = event else { return }
            answered += 1
            _ = connection.respond(stream: message.stream, HTTP2Fields([(":status", "200")]), body: answerBody)
        }

        mutating func connectionEnded(_ connection: borrowing HTTP2Connection, error: (any Error)?) { ended = true }
    }

    /// The streams of the HEADERS frames in `bytes`, in order.
    static func answeredStreams(_ bytes: ByteBuffer) -> [UInt32] {
        ChannelHandlerTests.frames(Array(bytes.readableBytesView)).compactMap { frame in
            if case .headers(let stream, _, _) = frame { stream } else { nil }
        }
    }

    /// The read stops after the event whose answer took what is queued past the limit, and the
    /// next call goes on from the frame after it: each request answered once, in order, and
    /// every pause's bytes at least the limit and less than the limit and one answer more.
    @Test func aReadPausesPastTheLimitAndGoesOnFromWhereItStopped() throws {
        var pair = ConnectionPair(
            server: {
                var server = HTTP2Connection.Configuration()
                server.maxConcurrentStreams = 1000
                return server
            }()
        )
        pair.run()
        for tag in 0..<200 { try pair.client.sendRequest(apnsRequest(), body: bytes("{}"), tag: UInt64(tag)) }
        var toServer = pair.client.takeOutbound()
        let limit = 4096
        var answered: [UInt32] = []
        var largestAnswer = 0
        var writes: [(paused: Bool, bytes: Int)] = []
        while true {
            let paused = HTTP2Connection.receive(&pair.server, from: &toServer, pausingAt: limit) { event, writer in
                guard case .message(let message) = event else { return }
                let before = writer.queuedBytes
                _ = writer.respond(stream: message.stream, HTTP2Fields([(":status", "200")]), body: Self.answerBody)
                largestAnswer = max(largestAnswer, writer.queuedBytes - before)
                answered.append(message.stream)
            }
            writes.append((paused, pair.server.takeOutbound().readableBytes))
            if !paused { break }
        }
        #expect(answered == Array(stride(from: UInt32(1), through: 399, by: 2)))
        #expect(toServer.readableBytes == 0)
        // 200 answers of about 230 bytes: 11 pauses of 4 KB, then the rest.
        #expect(writes.count >= 10)
        #expect(writes.dropLast().allSatisfy { $0.paused && $0.bytes >= limit && $0.bytes < limit + largestAnswer })
        #expect(writes.last.map { !$0.paused && $0.bytes < limit + largestAnswer } == true)
    }

    /// Without a limit (the default) the whole read is handled in one call.
    @Test func withoutALimitAReadIsHandledWhole() throws {
        var pair = ConnectionPair()
        pair.run()
        for tag in 0..<50 { try pair.client.sendRequest(apnsRequest(), body: nil, tag: UInt64(tag)) }
        var toServer = pair.client.takeOutbound()
        var answered = 0
        let paused = HTTP2Connection.receive(&pair.server, from: &toServer) { event, writer in
            guard case .message(let message) = event else { return }
            _ = writer.respond(stream: message.stream, HTTP2Fields([(":status", "200")]), body: Self.answerBody)
            answered += 1
        }
        #expect(!paused && answered == 50 && toServer.readableBytes == 0)
        #expect(pair.server.outbound.count > 50 * 200)
    }

    /// Over a channel: one read of 200 requests (45 KB of answers) writes its first 16 KB
    /// before the read ends — a write holding some answers but not all — and all of them, once
    /// each and in order, by the end of the read.
    @Test func aLongReadWritesItsFirstAnswersBeforeItEnds() throws {
        let channel = EmbeddedChannel()
        defer { _ = try? channel.finish() }
        var configuration = HTTP2Connection.Configuration()
        configuration.maxConcurrentStreams = 1000
        try channel.pipeline.syncOperations.addHandler(
            HTTP2ConnectionHandler(role: .server, configuration: configuration, delegate: Answerer())
        )
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 443)).wait()
        var client = HTTP2Connection(role: .client)
        // The server's SETTINGS (1000 streams) read first: a client opens 100 before it knows.
        while var settings = try channel.readOutbound(as: ByteBuffer.self) { client.read(&settings) }
        for tag in 0..<200 { try client.sendRequest(apnsRequest(), body: bytes("{}"), tag: UInt64(tag)) }
        channel.pipeline.fireChannelRead(client.takeOutbound())
        var writes: [ByteBuffer] = []
        while let write = try channel.readOutbound(as: ByteBuffer.self) { writes.append(write) }
        let streams = writes.map(Self.answeredStreams)
        #expect(writes.count >= 2)
        #expect(writes.first.map { $0.readableBytes >= 16 * 1024 } == true)
        #expect((1..<200).contains(streams.first?.count ?? 0))
        #expect(streams.flatMap { $0 } == Array(stride(from: UInt32(1), through: 399, by: 2)))
    }

    /// A read whose answers stay under 16 KB is written once, at its end.
    @Test func aShortReadIsWrittenOnce() throws {
        let channel = EmbeddedChannel()
        defer { _ = try? channel.finish() }
        try channel.pipeline.syncOperations.addHandler(HTTP2ConnectionHandler(role: .server, delegate: Answerer()))
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 443)).wait()
        while try channel.readOutbound(as: ByteBuffer.self) != nil {}
        var client = HTTP2Connection(role: .client)
        for tag in 0..<40 { try client.sendRequest(apnsRequest(), body: bytes("{}"), tag: UInt64(tag)) }
        try channel.writeInbound(client.takeOutbound())
        var writes: [ByteBuffer] = []
        while let write = try channel.readOutbound(as: ByteBuffer.self) { writes.append(write) }
        #expect(writes.count == 1)
        #expect(writes.first.map(Self.answeredStreams) == Array(stride(from: UInt32(1), through: 79, by: 2)))
    }

    /// A server on an embedded channel whose SETTINGS (1000 streams) `client` has read.
    static func server(
        for client: inout HTTP2Connection,
        before: (any ChannelHandler)? = nil
    ) throws -> (EmbeddedChannel, HTTP2ConnectionHandler<Answerer>) {
        let channel = EmbeddedChannel()
        if let before { try channel.pipeline.syncOperations.addHandler(before) }
        var configuration = HTTP2Connection.Configuration()
        configuration.maxConcurrentStreams = 1000
        let handler = HTTP2ConnectionHandler(role: .server, configuration: configuration, delegate: Answerer())
        try channel.pipeline.syncOperations.addHandler(handler)
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 443)).wait()
        while var settings = try channel.readOutbound(as: ByteBuffer.self) { client.read(&settings) }
        return (channel, handler)
    }

    /// `count` more requests from `client`, as one read's bytes.
    static func requests(_ count: Int, from client: inout HTTP2Connection) throws -> ByteBuffer {
        for tag in 0..<count { try client.sendRequest(apnsRequest(), body: bytes("{}"), tag: UInt64(tag)) }
        return client.takeOutbound()
    }

    /// The writes a read of `count` requests makes before it completes.
    static func writes(
        reading count: Int,
        on channel: EmbeddedChannel,
        from client: inout HTTP2Connection
    ) throws -> Int {
        channel.pipeline.fireChannelRead(try requests(count, from: &client))
        var writes = 0
        while try channel.readOutbound(as: ByteBuffer.self) != nil { writes += 1 }
        channel.pipeline.fireChannelReadComplete()
        while try channel.readOutbound(as: ByteBuffer.self) != nil {}
        return writes
    }

    /// The writes in the middle of a read are half a millisecond apart at least, on the loop's
    /// clock: a read of 45 KB of answers at once writes its first 16 KB and then the rest at its
    /// end; another 0.4 ms later writes only at its end; one half a millisecond after the first
    /// write writes in the middle again.
    @Test func writesInTheMiddleOfReadsAreHalfAMillisecondApart() throws {
        var client = HTTP2Connection(role: .client)
        let (channel, _) = try Self.server(for: &client)
        defer { _ = try? channel.finish() }
        #expect(try Self.writes(reading: 200, on: channel, from: &client) == 2)
        channel.embeddedEventLoop.advanceTime(by: .microseconds(400))
        #expect(try Self.writes(reading: 200, on: channel, from: &client) == 1)
        channel.embeddedEventLoop.advanceTime(by: .microseconds(100))
        #expect(try Self.writes(reading: 200, on: channel, from: &client) == 2)
    }

    /// Hands the channel more bytes from inside the first flush it passes on once armed, as NIO
    /// does when a write fails (it reads what is left in the socket, tells the read complete,
    /// then closes); or closes the channel there.
    final class CallsBackOnFlush: ChannelDuplexHandler {
        typealias InboundIn = ByteBuffer
        typealias InboundOut = ByteBuffer
        typealias OutboundIn = ByteBuffer
        var pending: ByteBuffer?
        var closes = false
        var calledBack = false

        func flush(context: ChannelHandlerContext) {
            context.flush()
            guard !calledBack, pending != nil || closes else { return }
            calledBack = true
            if let pending {
                context.fireChannelRead(wrapInboundOut(pending))
                context.fireChannelReadComplete()
            }
            if closes { context.close(promise: nil) }
        }
    }

    /// Bytes that arrive from inside a write in the middle of a read are handled after the
    /// read's own, in order: 400 requests, answered once each and in order (handled inside the
    /// read, the later half's header blocks would reach HPACK first).
    @Test func bytesArrivingDuringAMidReadWriteWaitTheirTurn() throws {
        let callsBack = CallsBackOnFlush()
        var client = HTTP2Connection(role: .client)
        let (channel, _) = try Self.server(for: &client, before: callsBack)
        defer { _ = try? channel.finish() }
        let first = try Self.requests(200, from: &client)
        callsBack.pending = try Self.requests(200, from: &client)
        channel.pipeline.fireChannelRead(first)
        channel.pipeline.fireChannelReadComplete()
        var answered: [UInt32] = []
        while let write = try channel.readOutbound(as: ByteBuffer.self) { answered += Self.answeredStreams(write) }
        #expect(callsBack.calledBack)
        #expect(answered == Array(stride(from: UInt32(1), through: 799, by: 2)))
    }

    /// A write in the middle of a read that closes the channel ends the connection there:
    /// nothing more of the read is handed to the delegate once it was told the connection
    /// ended.
    @Test func aMidReadWriteThatClosesTheChannelEndsTheRead() throws {
        let callsBack = CallsBackOnFlush()
        var client = HTTP2Connection(role: .client)
        let (channel, handler) = try Self.server(for: &client, before: callsBack)
        callsBack.closes = true
        channel.pipeline.fireChannelRead(try Self.requests(200, from: &client))
        #expect(callsBack.calledBack)
        #expect(handler.delegate.ended)
        #expect(handler.delegate.handledAfterEnd == 0)
        #expect((1..<200).contains(handler.delegate.answered), "\(handler.delegate.answered)")
        _ = try? channel.finish()
    }
}
