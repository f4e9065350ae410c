import NIOCore
import NIOEmbedded
import Testing

@testable import FanoutScenarioTerms
@testable import FanoutWire

/// The wire in front of a channel: bytes each way are held half a round trip, in order, and a
/// close waits for what was written before it. The handler times chunks by the uptime clock;
/// the embedded loop's time is moved past (or short of) each chunk's arrival.
@Suite struct WireHandlerTests {
    static func channel(_ roundTrip: LatencyDistribution) throws -> EmbeddedChannel {
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandler(
            WireHandler(wire: SinkWire(roundTrip: roundTrip), links: nil, seed: 1, allocator: channel.allocator)
        )
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
        return channel
    }

    static func moveLoop(_ channel: EmbeddedChannel, toNowPlus offset: TimeAmount) {
        channel.embeddedEventLoop.advanceTime(to: .now() + offset)
    }

    @Test func bytesReadArriveHalfARoundTripLater() throws {
        let channel = try Self.channel(.fixed(.milliseconds(200)))
        try channel.writeInbound(ByteBuffer(string: "SETTINGS"))
        Self.moveLoop(channel, toNowPlus: .milliseconds(50))
        #expect(try channel.readInbound(as: ByteBuffer.self) == nil)
        Self.moveLoop(channel, toNowPlus: .milliseconds(110))
        #expect(try channel.readInbound(as: ByteBuffer.self) == ByteBuffer(string: "SETTINGS"))
        _ = try channel.finish()
    }

    @Test func bytesWrittenLeaveHalfARoundTripLater() throws {
        let channel = try Self.channel(.fixed(.milliseconds(200)))
        // Not writeOutbound: it waits for the write, which the wire holds.
        let written = channel.writeAndFlush(ByteBuffer(string: "WINDOW_UPDATE"))
        Self.moveLoop(channel, toNowPlus: .milliseconds(50))
        #expect(try channel.readOutbound(as: ByteBuffer.self) == nil)
        Self.moveLoop(channel, toNowPlus: .milliseconds(110))
        #expect(try channel.readOutbound(as: ByteBuffer.self) == ByteBuffer(string: "WINDOW_UPDATE"))
        try written.wait()
        _ = try channel.finish()
    }

    /// A spread draws a delay a chunk, and no chunk overtakes the one before it.
    @Test func aSpreadKeepsTheOrder() throws {
        let channel = try Self.channel(.uniform(.zero, .milliseconds(100)))
        for index in 0..<200 { try channel.writeInbound(ByteBuffer(string: "\(index);")) }
        Self.moveLoop(channel, toNowPlus: .milliseconds(200))
        var received = ""
        while let chunk = try channel.readInbound(as: ByteBuffer.self) { received += String(buffer: chunk) }
        #expect(received == (0..<200).map { "\($0);" }.joined())
        _ = try channel.finish()
    }

    /// A GOAWAY written before a close reaches the peer before the close does.
    @Test func aCloseWaitsForTheBytesWrittenBeforeIt() throws {
        let channel = try Self.channel(.fixed(.milliseconds(200)))
        let written = channel.writeAndFlush(ByteBuffer(string: "GOAWAY"))
        let closed = channel.close()
        #expect(channel.isActive)
        Self.moveLoop(channel, toNowPlus: .milliseconds(110))
        #expect(try channel.readOutbound(as: ByteBuffer.self) == ByteBuffer(string: "GOAWAY"))
        try written.wait()
        try closed.wait()
        #expect(!channel.isActive)
    }

    /// Released chunks give back their room: a long stream through the wire keeps its buffer
    /// near what is in flight.
    @Test func theHeldBufferDoesNotGrowWithTheStream() throws {
        let channel = try Self.channel(.fixed(.milliseconds(20)))
        let chunk = ByteBuffer(repeating: 0x61, count: 4096)
        var received = 0
        for _ in 0..<2000 {
            try channel.writeInbound(chunk)
            Self.moveLoop(channel, toNowPlus: .milliseconds(5))
            while let bytes = try channel.readInbound(as: ByteBuffer.self) { received += bytes.readableBytes }
        }
        Self.moveLoop(channel, toNowPlus: .milliseconds(50))
        while let bytes = try channel.readInbound(as: ByteBuffer.self) { received += bytes.readableBytes }
        #expect(received == 2000 * 4096)
        _ = try channel.finish()
    }

    /// Nothing goes on the wire after a close was asked for: the close waits only for what was
    /// written before it.
    @Test func aWriteAfterACloseIsRefused() throws {
        let channel = try Self.channel(.fixed(.milliseconds(200)))
        let first = channel.writeAndFlush(ByteBuffer(string: "GOAWAY"))
        let closed = channel.close()
        let late = channel.writeAndFlush(ByteBuffer(string: "WINDOW_UPDATE"))
        #expect(throws: ChannelError.self) { try late.wait() }
        Self.moveLoop(channel, toNowPlus: .milliseconds(110))
        #expect(try channel.readOutbound(as: ByteBuffer.self) == ByteBuffer(string: "GOAWAY"))
        #expect(try channel.readOutbound(as: ByteBuffer.self) == nil)
        try first.wait()
        try closed.wait()
    }

    /// Bytes still on the path when this side closes never reach it; bytes a peer sent before
    /// it went do.
    @Test func whoClosedDecidesWhatHeldBytesBecome() throws {
        let closing = try Self.channel(.fixed(.milliseconds(200)))
        try closing.writeInbound(ByteBuffer(string: "HEADERS"))
        try closing.close().wait()
        #expect(try closing.readInbound(as: ByteBuffer.self) == nil)

        let left = try Self.channel(.fixed(.milliseconds(200)))
        try left.writeInbound(ByteBuffer(string: "HEADERS"))
        left.pipeline.fireChannelInactive()
        #expect(try left.readInbound(as: ByteBuffer.self) == ByteBuffer(string: "HEADERS"))
        _ = try? left.finish()
    }
}
