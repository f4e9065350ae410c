import FanoutHPACK
import NIOCore
import NIOEmbedded
import Testing

@testable import FanoutHTTP2

/// A connection refused in words: the server preface, then a GOAWAY a client can read.
@Suite struct HTTP2RefusalTests {
    /// Golden bytes: SETTINGS [MAX_CONCURRENT_STREAMS 0], GOAWAY [last 0, ENHANCE_YOUR_CALM, text].
    @Test func theFramesAreThePrefaceAndAGoAwayWithTheReason() {
        let reason = "fanout sink: 4 connections, its limit"
        let expected: [UInt8] =
            [0, 0, 6, 0x4, 0, 0, 0, 0, 0, 0, 0x3, 0, 0, 0, 0]
            + [0, 0, UInt8(8 + reason.utf8.count), 0x7, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xB]
            + Array(reason.utf8)
        #expect(HTTP2Refusal.frames(reason: reason) == expected)
    }

    /// A client reads the refusal as GOAWAY before any stream, with the reason: not a close
    /// before SETTINGS.
    @Test func aClientSeesTheServersSettingsThenTheGoAway() {
        var client = HTTP2Connection(role: .client)
        var bytes = ByteBuffer(bytes: HTTP2Refusal.frames(reason: "fanout sink: 4 connections, its limit"))
        let seen = client.read(&bytes)
        let heardSettings = client.hasPeerSettings
        #expect(heardSettings)
        #expect(
            seen.contains(
                .goAway(lastStream: 0, code: .enhanceYourCalm, debug: "fanout sink: 4 connections, its limit")
            )
        )
        let available = client.availableStreams
        #expect(available == 0)
    }

    /// On a channel: the frames go out once active, the output is closed, what the peer sends is
    /// dropped, and the channel closes after the linger.
    @Test func onAChannelItWritesClosesItsOutputAndLingers() throws {
        let loop = EmbeddedEventLoop()
        let channel = EmbeddedChannel(handler: HTTP2Refusal(reason: "full", lingerTimeout: .seconds(1)), loop: loop)
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
        let written = try #require(try channel.readOutbound(as: ByteBuffer.self))
        #expect(Array(written.readableBytesView) == HTTP2Refusal.frames(reason: "full"))
        try channel.writeInbound(ByteBuffer(bytes: RawFrame.clientStart))
        #expect(try channel.readInbound(as: ByteBuffer.self) == nil)
        loop.advanceTime(by: .seconds(1))
        #expect(!channel.isActive)
    }
}
