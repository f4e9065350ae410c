import FanoutHPACK
import NIOCore
import Testing

@testable import FanoutHTTP2

/// A peer that floods the connection with frames that cost us work — empty CONTINUATIONs,
/// PINGs and SETTINGS whose acknowledgements it does not read, streams opened and reset in a
/// loop — is ended with GOAWAY ENHANCE_YOUR_CALM and a reason, at nghttp2's limits; a peer
/// within them is served.
@Suite struct FloodLimitTests {
    static func headers(_ stream: UInt32, endHeaders: Bool = true, endStream: Bool = true) -> [UInt8] {
        var encoder = HPACKEncoder(huffman: .never)
        let block = RawFrame.block(ConnectionErrorTests.request, encoder: &encoder)
        return RawFrame.frame(
            type: 1,
            flags: (endHeaders ? 0x4 : 0) | (endStream ? 0x1 : 0),
            stream: stream,
            payload: block
        )
    }

    static func continuation(_ stream: UInt32, endHeaders: Bool = false) -> [UInt8] {
        RawFrame.frame(type: 9, flags: endHeaders ? 0x4 : 0, stream: stream, payload: [])
    }

    static func ping(_ opaque: UInt8) -> [UInt8] {
        RawFrame.frame(type: 6, flags: 0, stream: 0, payload: [UInt8](repeating: opaque, count: 8))
    }

    static func reset(_ stream: UInt32) -> [UInt8] {
        RawFrame.frame(type: 3, flags: 0, stream: stream, payload: [0, 0, 0, 8])
    }

    /// The GOAWAY's code and debug text in what the server wrote.
    static func goAway(in written: [HTTP2Frame]) -> (code: HTTP2ErrorCode, reason: String)? {
        for frame in written {
            if case .goAway(_, let code, let debug) = frame { return (code, String(buffer: debug)) }
        }
        return nil
    }

    @Test func emptyContinuationsPastTheLimitAreRefused() {
        let many =
            RawFrame.clientStart + Self.headers(1, endHeaders: false)
            + (0..<100_000).flatMap { _ in Self.continuation(1) }
        let (_, written) = feedServer(many)
        let calm = Self.goAway(in: written)
        #expect(calm?.code == .enhanceYourCalm)
        #expect(calm?.reason.contains("more than 8 CONTINUATION frames") == true, "\(String(describing: calm))")
        // Eight are fine: the request is served.
        let eight =
            RawFrame.clientStart + Self.headers(1, endHeaders: false)
            + (0..<7).flatMap { _ in Self.continuation(1) } + Self.continuation(1, endHeaders: true)
        let (events, accepted) = feedServer(eight)
        #expect(Self.goAway(in: accepted) == nil)
        #expect(events.contains { if case .message = $0 { true } else { false } })
    }

    @Test(arguments: ["PING", "SETTINGS"])
    func unreadAcknowledgementsPastTheLimitEndTheConnection(kind: String) {
        let frame = kind == "PING" ? Self.ping(7) : RawFrame.settings()
        let (_, written) = feedServer(RawFrame.clientStart + (0..<1001).flatMap { _ in frame })
        let calm = Self.goAway(in: written)
        #expect(calm?.code == .enhanceYourCalm, "\(kind)")
        #expect(calm?.reason.contains("acknowledgements queued unread") == true)
    }

    /// Acknowledgements the peer reads (the owner reports them delivered) never add up.
    @Test func deliveredAcknowledgementsDoNotCount() {
        var server = HTTP2Connection(role: .server)
        var start = ByteBuffer(bytes: RawFrame.clientStart)
        server.read(&start)
        for _ in 0..<10 {
            var pings = ByteBuffer(bytes: (0..<900).flatMap { Self.ping(UInt8($0 % 256)) })
            server.read(&pings)
            _ = server.takeOutbound()
            server.controlRepliesDelivered()
        }
        #expect(server.error == nil)
        #expect(server.sentGoAway == nil)
    }

    /// Rapid reset: past a burst of 1000 resets, 33 a second; the clock refills the budget.
    @Test func rapidResetIsEndedAndAPatientOneIsNot() throws {
        var flood: [UInt8] = RawFrame.clientStart
        for index in 0..<1001 {
            flood += Self.headers(UInt32(2 * index + 1), endStream: false) + Self.reset(UInt32(2 * index + 1))
        }
        let (_, written) = feedServer(flood)
        let calm = Self.goAway(in: written)
        #expect(calm?.code == .enhanceYourCalm)
        #expect(calm?.reason.contains("rapid reset") == true, "\(String(describing: calm))")

        var server = HTTP2Connection(role: .server)
        var bytes = ByteBuffer(bytes: RawFrame.clientStart)
        server.read(&bytes)
        var stream: UInt32 = 1
        // The burst, then 33 a second for ten seconds.
        for second in 0..<11 {
            server.now = UInt64(second) * 1_000_000_000
            for _ in 0..<(second == 0 ? 1000 : 33) {
                var pair = ByteBuffer(bytes: Self.headers(stream, endStream: false) + Self.reset(stream))
                server.read(&pair)
                stream += 2
            }
        }
        #expect(server.sentGoAway == nil)
        // One more in the same second is one too many.
        var extra = ByteBuffer(bytes: Self.headers(stream, endStream: false) + Self.reset(stream))
        server.read(&extra)
        #expect(server.error?.code == .enhanceYourCalm)
    }

    /// A client is not held to the reset budget (it is the server's defence).
    @Test func aClientReceivingResetsIsNotLimited() throws {
        var pair = ConnectionPair()
        pair.respond = { message, connection in connection.resetStream(message.stream, code: .refusedStream) }
        pair.run()
        for tag in 0..<1500 {
            _ = try pair.client.sendRequest(apnsRequest(), body: nil, tag: UInt64(tag))
            pair.run()
        }
        #expect(pair.client.error == nil)
        #expect(pair.clientSeen.filter { if case .reset = $0 { true } else { false } }.count == 1500)
    }
}
