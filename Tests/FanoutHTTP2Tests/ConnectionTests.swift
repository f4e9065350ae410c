import FanoutHPACK
import Foundation
import NIOCore
import Testing

@testable import FanoutHTTP2

/// The connection state machine, client and server joined in memory.
@Suite struct ConnectionTests {
    @Test func requestAndResponseWithBodies() {
        var pair = ConnectionPair()
        pair.respond = { message, connection in
            let reply = HTTP2Fields([(":status", "200"), ("apns-id", "6E1F6F4A-0000-4000-8000-000000000001")])
            connection.respond(
                stream: message.stream,
                reply,
                body: bytes("echo:" + String(decoding: message.body, as: UTF8.self))
            )
        }
        pair.run()
        let stream = try? pair.client.sendRequest(apnsRequest(), body: bytes(#"{"aps":{"alert":"hi"}}"#), tag: 42)
        #expect(stream == 1)
        pair.run()
        pair.forgetSettings()
        let token = String(repeating: "ab", count: 32)
        #expect(
            pair.serverSeen == [
                .message(
                    stream: 1,
                    tag: 0,
                    status: 0,
                    headers: [
                        ":method: POST", ":scheme: https", ":path: /3/device/\(token)",
                        ":authority: api.push.apple.com", "apns-topic: com.example.app", "apns-push-type: alert",
                    ],
                    body: #"{"aps":{"alert":"hi"}}"#,
                    bodyLength: 22
                )
            ]
        )
        #expect(
            pair.clientSeen == [
                .message(
                    stream: 1,
                    tag: 42,
                    status: 200,
                    headers: [":status: 200", "apns-id: 6E1F6F4A-0000-4000-8000-000000000001"],
                    body: #"echo:{"aps":{"alert":"hi"}}"#,
                    bodyLength: 27
                )
            ]
        )
        #expect(pair.client.openStreams == 0)
        #expect(pair.server.openStreams == 0)
    }

    /// A message is a view of the read's bytes and of its slot's memory: it must stay whole
    /// while the application answers and opens streams (a load engine sends its next request
    /// before it has read the answer), through several answers in one read.
    @Test func aMessageStaysWholeWhileTheApplicationOpensStreams() throws {
        var pair = ConnectionPair()
        pair.respond = { message, connection in
            let id = "6E1F6F4A-0000-4000-8000-\(String(format: "%012d", message.stream))"
            connection.respond(
                stream: message.stream,
                HTTP2Fields([(":status", "200"), ("apns-id", id)]),
                body: bytes("answer to \(message.stream)")
            )
        }
        pair.run()
        for tag in 1...8 { try pair.client.sendRequest(apnsRequest(), body: bytes("{}"), tag: UInt64(tag)) }
        var toServer = pair.client.takeOutbound()
        pair.server.read(&toServer, respond: pair.respond)
        var toClient = pair.server.takeOutbound()
        var seen: [String] = []
        HTTP2Connection.receive(&pair.client, from: &toClient) { event, client in
            guard case .message(let answer) = event else { return }
            // Two new streams first: slots freed by earlier answers are reused.
            for _ in 0..<2 { _ = try? client.sendRequest(apnsRequest(), body: bytes("{}"), tag: 99) }
            let id = answer.headers["apns-id"] ?? "none"
            seen.append("\(answer.stream) \(id.suffix(3)) \(String(decoding: answer.body, as: UTF8.self))")
        }
        #expect(seen == (0..<8).map { "\(2 * $0 + 1) \(String(format: "%03d", 2 * $0 + 1)) answer to \(2 * $0 + 1)" })
    }

    /// A body over `maxBodySize` is cut to it whether it came in one DATA frame or in several;
    /// `bodyLength` counts all of it.
    @Test func aBodyIsKeptUpToTheLimitInOneFrameOrMany() throws {
        var server = HTTP2Connection.Configuration()
        server.maxBodySize = 10
        var pair = ConnectionPair(server: server)
        pair.run()
        let long = String((0..<20_000).map { Character(UnicodeScalar(UInt8(48 + $0 % 10))) })
        try pair.client.sendRequest(apnsRequest(), body: bytes("0123456789abcdef"), tag: 1)
        try pair.client.sendRequest(apnsRequest(), body: bytes(long), tag: 2)  // 16,384 + 3,616 bytes
        pair.run()
        pair.forgetSettings()
        let bodies = pair.serverSeen.compactMap { seen -> String? in
            guard case .message(_, _, _, _, let body, let length) = seen else { return nil }
            return "\(body) \(length)"
        }
        #expect(bodies == ["0123456789 16", "0123456789 20000"])
    }

    @Test func theClientFollowsTheServersConcurrencyLimitAsItChanges() throws {
        var server = HTTP2Connection.Configuration()
        server.maxConcurrentStreams = 1
        var pair = ConnectionPair(server: server)
        pair.respond = { _, _ in }  // hold every stream open
        pair.run()
        #expect(pair.clientSeen == [.settings(maxConcurrentStreams: 1)])
        #expect(pair.client.availableStreams == 1)
        try pair.client.sendRequest(apnsRequest(), body: bytes("{}"))
        #expect(throws: HTTP2Connection.OpenError.atCapacity) { try pair.client.sendRequest(apnsRequest(), body: nil) }
        pair.run()
        // APNs raises the limit after the first authenticated request.
        pair.server.setMaxConcurrentStreams(1000)
        pair.run()
        #expect(pair.clientSeen.last == .settings(maxConcurrentStreams: 1000))
        #expect(pair.client.availableStreams == 999)
        for _ in 0..<999 { try pair.client.sendRequest(apnsRequest(), body: bytes("{}")) }
        #expect(throws: HTTP2Connection.OpenError.atCapacity) { try pair.client.sendRequest(apnsRequest(), body: nil) }
        pair.run()
        #expect(pair.server.openStreams == 1000)
        #expect(pair.serverSeen.count { if case .message = $0 { true } else { false } } == 1000)
    }

    @Test func aLowLimitIsEnforcedOnceThePeerAcknowledgesIt() {
        var configuration = HTTP2Connection.Configuration()
        configuration.maxConcurrentStreams = 1
        configuration.maxConcurrentStreamsBeforeAcknowledgement = 3
        var encoder = HPACKEncoder()
        let request = [(":method", "POST"), (":scheme", "http"), (":path", "/"), (":authority", "x")]
        // Three streams before the client has seen the limit: served; a fourth is refused.
        var input = RawFrame.clientStart
        for stream in [1, 3, 5, 7] as [UInt32] {
            input += RawFrame.headers(
                stream: stream,
                block: RawFrame.block(request, encoder: &encoder),
                endStream: false
            )
        }
        #expect(feedServer(input, configuration: configuration).written.resets == [7: .refusedStream])
        // After its ACK, one stream is all it may have open (a new connection, a new encoder).
        encoder = HPACKEncoder()
        input = RawFrame.clientStart + RawFrame.frame(type: 4, flags: 1, stream: 0, payload: [])
        for stream in [1, 3] as [UInt32] {
            input += RawFrame.headers(
                stream: stream,
                block: RawFrame.block(request, encoder: &encoder),
                endStream: false
            )
        }
        #expect(feedServer(input, configuration: configuration).written.resets == [3: .refusedStream])
    }

    /// What the sink's conformance card reads: streams refused past the limit, and streams opened
    /// after this side's GOAWAY (ignored), each counted.
    @Test func refusedStreamsAndStreamsAfterGoAwayAreCounted() {
        var configuration = HTTP2Connection.Configuration()
        configuration.maxConcurrentStreams = 1
        var encoder = HPACKEncoder()
        let request = [(":method", "POST"), (":scheme", "http"), (":path", "/"), (":authority", "x")]
        var server = HTTP2Connection(role: .server, configuration: configuration)
        var input = RawFrame.clientStart + RawFrame.frame(type: 4, flags: 1, stream: 0, payload: [])
        for stream in [1, 3, 5] as [UInt32] {
            input += RawFrame.headers(
                stream: stream,
                block: RawFrame.block(request, encoder: &encoder),
                endStream: false
            )
        }
        var buffer = ByteBuffer(bytes: input)
        _ = server.read(&buffer)
        #expect(server.refusedStreams == 2)
        #expect(server.streamsAfterGoAway == 0)
        server.goAway(code: .noError, debugData: [])
        var after = ByteBuffer(
            bytes: RawFrame.headers(stream: 7, block: RawFrame.block(request, encoder: &encoder), endStream: false)
                + RawFrame.headers(stream: 9, block: RawFrame.block(request, encoder: &encoder), endStream: false)
        )
        _ = server.read(&after)
        // On the wire when the GOAWAY left: the peer had not read it (no acknowledgement of the
        // PING written in front of it). Ignored, and no fault.
        #expect(server.streamsInGoAwayRace == 2)
        #expect(server.streamsAfterGoAway == 0)
        // The peer acknowledges that PING: it has read the GOAWAY. A stream after that is its
        // fault; DATA on a stream the GOAWAY left out is ignored, not answered RST_STREAM.
        var opaque = [UInt8](repeating: 0, count: 8)
        for index in 0..<8 {
            opaque[index] = UInt8(truncatingIfNeeded: HTTP2Connection.goAwayPingOpaque >> (56 - 8 * index))
        }
        _ = server.takeOutbound()
        var acknowledged = ByteBuffer(
            bytes: RawFrame.frame(type: 6, flags: 1, stream: 0, payload: opaque)
                + RawFrame.headers(stream: 11, block: RawFrame.block(request, encoder: &encoder), endStream: false)
                + RawFrame.frame(type: 0, flags: 1, stream: 7, payload: Array("{}".utf8))
        )
        _ = server.read(&acknowledged)
        let read = server.goAwayRead
        #expect(read)
        #expect(server.streamsAfterGoAway == 1 && server.streamsInGoAwayRace == 2)
        #expect(server.refusedStreams == 2)
        #expect(server.error == nil)
        let written = server.takeOutbound()
        #expect(!RawFrame.types(in: written).contains(3), "no RST_STREAM for the ignored DATA")
    }

    @Test func streamsOverTheLimitAreRefused() {
        var configuration = HTTP2Connection.Configuration()
        configuration.maxConcurrentStreams = 2
        var encoder = HPACKEncoder()
        let request = [(":method", "POST"), (":scheme", "http"), (":path", "/"), (":authority", "x")]
        var input = RawFrame.clientStart
        for stream in [1, 3, 5] as [UInt32] {
            input += RawFrame.headers(
                stream: stream,
                block: RawFrame.block(request, encoder: &encoder),
                endStream: false
            )
        }
        let (events, written) = feedServer(input, configuration: configuration)
        #expect(written.resets == [5: .refusedStream])
        #expect(written.goAway == nil)
        #expect(!events.contains(.connectionError(.protocolError)))
    }

    @Test func bodiesLargerThanEveryWindowArriveWhole() throws {
        var small = HTTP2Connection.Configuration()
        small.initialWindowSize = 65_535
        small.connectionWindowSize = 65_535
        small.maxBodySize = 1 << 20
        var pair = ConnectionPair(client: small, server: small)
        pair.respond = { message, connection in
            // Echo the body back: the server's sending side is flow-controlled too.
            connection.respond(
                stream: message.stream,
                HTTP2Fields([(":status", "200")]),
                body: ByteBuffer(bytes: message.body)
            )
        }
        pair.run()
        let body = String((0..<300_000).map { Character(UnicodeScalar(UInt8(97 + $0 % 26))) })
        try pair.client.sendRequest(apnsRequest(), body: bytes(body), tag: 1)
        try pair.client.sendRequest(apnsRequest(), body: bytes(String(body.prefix(100_000))), tag: 2)
        pair.run(rounds: 1000)
        pair.forgetSettings()
        let echoed = pair.clientSeen.compactMap { seen -> (UInt64, Int)? in
            if case .message(_, let tag, _, _, _, let length) = seen { return (tag, length) }
            return nil
        }
        #expect(echoed.map(\.0).sorted() == [1, 2])
        #expect(echoed.first { $0.0 == 1 }?.1 == 300_000)
        #expect(echoed.first { $0.0 == 2 }?.1 == 100_000)
        #expect(pair.client.openStreams == 0)
    }

    @Test func goAwayRefusesTheStreamsAboveItsLastStream() throws {
        var pair = ConnectionPair()
        pair.respond = { _, _ in }
        pair.run()
        for tag in 1...4 as ClosedRange<UInt64> {
            try pair.client.sendRequest(apnsRequest(), body: bytes("{}"), tag: tag)
        }
        pair.run()
        // The server has seen streams 1, 3, 5, 7; it says it processed up to 3.
        pair.server.goAway(code: .noError, debugData: Array(#"{"reason":"Shutdown"}"#.utf8))
        pair.run()
        pair.forgetSettings()
        #expect(pair.clientSeen.first == .goAway(lastStream: 7, code: .noError, debug: #"{"reason":"Shutdown"}"#))
        #expect(throws: HTTP2Connection.OpenError.goingAway) { try pair.client.sendRequest(apnsRequest(), body: nil) }
        #expect(pair.client.openStreams == 4)
    }

    @Test func goAwayWithALowerLastStreamHandsBackTheUnprocessedRequests() throws {
        var client = HTTP2Connection(role: .client)
        try client.sendRequest(apnsRequest(), body: nil, tag: 10)
        try client.sendRequest(apnsRequest(), body: nil, tag: 11)
        try client.sendRequest(apnsRequest(), body: nil, tag: 12)
        var input = ByteBuffer(bytes: RawFrame.settings())
        input.writeBytes(RawFrame.frame(type: 7, flags: 0, stream: 0, payload: [0, 0, 0, 1, 0, 0, 0, 0]))
        var events: [Seen] = []
        events += client.read(&input)
        #expect(
            events == [
                .settings(maxConcurrentStreams: nil), .goAway(lastStream: 1, code: .noError, debug: ""),
                .reset(stream: 3, tag: 11, code: .refusedStream, byPeer: true),
                .reset(stream: 5, tag: 12, code: .refusedStream, byPeer: true),
            ]
        )
        #expect(client.openStreams == 1)
        let isFinished = client.isFinished
        #expect(!isFinished)
    }

    @Test func pingIsAnswered() {
        var pair = ConnectionPair()
        pair.run()
        pair.client.ping(opaque: 0x0102_0304_0506_0708)
        pair.run()
        #expect(pair.clientSeen.last == .pingAck(0x0102_0304_0506_0708))
    }

    @Test func anInformationalResponseThatEndsTheStreamIsMalformed() throws {
        var pair = ConnectionPair()
        pair.respond = { message, connection in
            connection.respond(stream: message.stream, HTTP2Fields([(":status", "100")]), body: nil)
        }
        pair.run()
        // A 100 with END_STREAM is malformed: the client resets the stream.
        try pair.client.sendRequest(apnsRequest(), body: nil, tag: 5)
        pair.run()
        pair.forgetSettings()
        #expect(pair.clientSeen == [.reset(stream: 1, tag: 5, code: .protocolError, byPeer: false)])
    }

    @Test func repeatedRequestsCostAFewBytesEach() throws {
        var pair = ConnectionPair()
        pair.run()
        try pair.client.sendRequest(apnsRequest(), body: nil)
        let first = pair.client.takeOutbound().readableBytes
        try pair.client.sendRequest(apnsRequest(), body: nil)
        let second = pair.client.outbound.count
        // 9 bytes of frame header; :path is the only field not served from the tables.
        #expect(first > 100)
        #expect(second < 9 + 6 + 50)
    }

    /// A peer that keeps the connection window shut while streams are reset leaves nothing
    /// behind: the blocked list drops the ids of closed streams (it once kept every one).
    @Test func streamsResetWhileBlockedLeaveNothingBehind() throws {
        var client = HTTP2Connection(role: .client)
        var fromServer = ByteBuffer(
            bytes: RawFrame.settings() + RawFrame.frame(type: 4, flags: 1, stream: 0, payload: [])
        )
        client.read(&fromServer)
        let body = ByteBuffer(repeating: UInt8(ascii: "x"), count: 1000)
        var blockedAtMost = 0
        for round in 0..<40 {
            var streams: [UInt32] = []
            for index in 0..<100 {
                streams.append(try client.sendRequest(apnsRequest(), body: body, tag: UInt64(round * 100 + index)))
            }
            _ = client.takeOutbound()
            for stream in streams { client.resetStream(stream, code: .cancel) }
            _ = client.takeOutbound()
            blockedAtMost = max(blockedAtMost, client.blockedStreams)
        }
        // The window (65,535 bytes) let the first ~65 bodies out; 3,935 streams blocked and were reset.
        #expect(client.openStreams == 0)
        #expect(blockedAtMost <= 2 * 100 + 64, "\(blockedAtMost) blocked entries")
    }
}
