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
        #expect(calm?.reason == "more than 8 CONTINUATION frames in one header block", "\(String(describing: calm))")
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
        #expect(calm?.reason == "more than 1000 PING and SETTINGS acknowledgements queued unread")
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
        #expect(
            calm?.reason == "more than 1000 streams reset at once, or over 33 a second after (rapid reset)",
            "\(String(describing: calm))"
        )

        var server = HTTP2Connection(role: .server)
        var bytes = ByteBuffer(bytes: RawFrame.clientStart)
        server.read(&bytes)
        var stream: UInt32 = 1
        // The burst, then 33 a second for ten seconds.
        for second in 0..<11 {
            server.bytesArrived(at: UInt64(second) * 1_000_000_000, beginningBurst: true)
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

/// Issue 61, case 12: frames that bring no request closer (the CVE-2019-9518 family) are capped
/// per connection; requests arriving whole, or time, start the count again.
@Suite struct CheapFrameLimitTests {
    /// The kinds of frame a flood is made of, each valid on its own.
    enum Kind: String, CaseIterable, Sendable {
        case emptyData, priority, windowUpdate, unknownType, ping, settings
        /// Refused on their stream (RST_STREAM each): a PRIORITY of 4 bytes, a zero WINDOW_UPDATE.
        case priorityOfWrongLength, zeroWindowUpdateOnAStream

        var frame: [UInt8] {
            switch self {
            case .emptyData: RawFrame.data(stream: 1, [], endStream: false)
            case .priority: RawFrame.frame(type: 2, flags: 0, stream: 1, payload: [0, 0, 0, 0, 16])
            case .windowUpdate: RawFrame.windowUpdate(stream: 0, increment: 1)
            case .unknownType: RawFrame.frame(type: 0x20, flags: 0, stream: 0, payload: [1, 2, 3])
            case .ping: FloodLimitTests.ping(1)
            case .settings: RawFrame.settings()
            case .priorityOfWrongLength: RawFrame.frame(type: 2, flags: 0, stream: 1, payload: [0, 0, 0, 0])
            case .zeroWindowUpdateOnAStream: RawFrame.windowUpdate(stream: 1, increment: 0)
            }
        }
    }

    /// A server fed the client's start, a request whose body never comes (stream 1), then
    /// `count` frames of `kind` at `now`, in batches whose acknowledgements the client reads.
    static func flood(
        _ kind: Kind,
        count: Int,
        server: inout HTTP2Connection,
        now: UInt64 = 0
    ) -> [HTTP2Frame] {
        server.bytesArrived(at: now, beginningBurst: true)
        var written: [HTTP2Frame] = []
        var decoder = HTTP2FrameDecoder(maxFrameSize: 1 << 24 - 1)
        var left = count
        while left > 0 {
            let batch = min(left, 500)
            left -= batch
            var bytes = ByteBuffer(bytes: (0..<batch).flatMap { _ in kind.frame })
            _ = server.read(&bytes)
            var out = server.takeOutbound()
            while let frame = try? decoder.nextFrame(from: &out) { written.append(frame) }
            server.controlRepliesDelivered()
        }
        return written
    }

    static func started(_ configuration: HTTP2Connection.Configuration = .init(), now: UInt64 = 0) -> HTTP2Connection {
        var server = HTTP2Connection(role: .server, configuration: configuration)
        server.bytesArrived(at: now, beginningBurst: true)
        var start = ByteBuffer(bytes: RawFrame.clientStart + FloodLimitTests.headers(1, endStream: false))
        _ = server.read(&start)
        _ = server.takeOutbound()
        return server
    }

    @Test(arguments: Kind.allCases)
    func aFloodPastTheLimitIsEndedWithEnhanceYourCalm(kind: Kind) {
        var server = Self.started()
        let limit = HTTP2Connection.Configuration().maxFramesWithoutRequest
        // The start's SETTINGS and HEADERS count: the limit is reached within the flood.
        let written = Self.flood(kind, count: limit, server: &server)
        let calm = FloodLimitTests.goAway(in: written)
        #expect(calm?.code == .enhanceYourCalm, "\(kind)")
        #expect(
            calm?.reason
                == "more than 10000 frames within 10.0 seconds with no request arriving whole (empty DATA, PRIORITY, "
                + "WINDOW_UPDATE, PING, SETTINGS, RST_STREAM or unknown frames)",
            "\(String(describing: calm))"
        )
        #expect(server.error?.code == .enhanceYourCalm)
    }

    /// The window starts with the connection (and again with each request), not at the
    /// uptime clock's zero: a connection hours into the machine's uptime flooding at once is
    /// ended at the limit, not given the limit again when first past it.
    @Test func theFirstWindowStartsWithTheConnection() {
        let hours: UInt64 = 3 * 3600 * 1_000_000_000
        var server = Self.started(now: hours)
        let limit = HTTP2Connection.Configuration().maxFramesWithoutRequest
        let written = Self.flood(.emptyData, count: limit, server: &server, now: hours + 1_000_000)
        #expect(FloodLimitTests.goAway(in: written)?.code == .enhanceYourCalm)
    }

    @Test(arguments: Kind.allCases)
    func framesBelowTheLimitAreServed(kind: Kind) {
        var server = Self.started()
        let limit = HTTP2Connection.Configuration().maxFramesWithoutRequest
        let written = Self.flood(kind, count: limit - 2, server: &server)
        #expect(FloodLimitTests.goAway(in: written) == nil, "\(kind)")
        #expect(server.error == nil)
    }

    /// A request arriving whole starts the count again: cheap frames between requests never
    /// add up.
    @Test func requestsBetweenStartTheCountAgain() {
        var configuration = HTTP2Connection.Configuration()
        configuration.maxFramesWithoutRequest = 100
        var server = Self.started(configuration)
        var stream: UInt32 = 3
        for _ in 0..<50 {
            // With the start's 2 frames (the first time) and the request's own: 100 at most.
            _ = Self.flood(.emptyData, count: 97, server: &server)
            var request = ByteBuffer(bytes: FloodLimitTests.headers(stream))
            let seen = server.read(&request)
            #expect(seen.contains { if case .message = $0 { true } else { false } })
            stream += 2
        }
        #expect(server.error == nil)
        #expect(server.sentGoAway == nil)
        // Without the request, the same frames pass it.
        _ = Self.flood(.emptyData, count: 101, server: &server)
        #expect(server.error?.code == .enhanceYourCalm)
    }

    /// Time starts the count again too, once a window: a connection without requests costs at
    /// most the limit's frames a window.
    @Test func aWindowLaterTheCountStartsAgain() {
        var configuration = HTTP2Connection.Configuration()
        configuration.maxFramesWithoutRequest = 100
        configuration.framesWithoutRequestWindow = .seconds(1)
        var server = Self.started(configuration)
        // The start's 2 frames and 98: 100, the limit.
        _ = Self.flood(.priority, count: 98, server: &server, now: 0)
        #expect(server.error == nil)
        _ = Self.flood(.priority, count: 100, server: &server, now: 1_000_000_000)
        #expect(server.error == nil)
        _ = Self.flood(.priority, count: 1, server: &server, now: 1_500_000_000)
        #expect(server.error?.code == .enhanceYourCalm)
    }

    /// A client is not held to it (a server's windows and PINGs are not a client's to judge).
    @Test func aClientIsNotLimited() {
        var client = HTTP2Connection(role: .client)
        _ = client.takeOutbound()
        var frames = ByteBuffer(
            bytes: RawFrame.settings() + (0..<20_000).flatMap { _ in Kind.priority.frame }
        )
        _ = client.read(&frames)
        #expect(client.error == nil)
    }
}
