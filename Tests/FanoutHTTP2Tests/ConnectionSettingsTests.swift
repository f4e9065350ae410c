import FanoutHPACK
import NIOCore
import Testing

@testable import FanoutHTTP2

/// The peer's SETTINGS take effect as they arrive, mid-connection included, and long header
/// blocks go out as HEADERS plus CONTINUATION.
@Suite struct ConnectionSettingsTests {
    /// A client that has opened with `settings` from its server; returns it with the frames it wrote since.
    static func client(after settings: [(UInt16, UInt32)]) -> HTTP2Connection {
        var client = HTTP2Connection(role: .client)
        var input = ByteBuffer(bytes: RawFrame.settings(settings))
        client.read(&input)
        _ = client.takeOutbound()
        return client
    }

    /// The frames `connection` has queued, taken out of its outbound buffer.
    static func frames(_ connection: inout HTTP2Connection) -> [HTTP2Frame] {
        frames(in: connection.takeOutbound())
    }

    static func frames(in bytes: ByteBuffer) -> [HTTP2Frame] {
        var out = bytes
        var decoder = HTTP2FrameDecoder(maxFrameSize: 1 << 24 - 1, maxHeaderBlockSize: 1 << 20)
        var frames: [HTTP2Frame] = []
        while let frame = try? decoder.nextFrame(from: &out) { frames.append(frame) }
        return frames
    }

    static func dataLengths(_ frames: [HTTP2Frame]) -> [(Int, Bool)] {
        frames.compactMap { frame in
            if case .data(_, let payload, let endStream, _) = frame { return (payload.readableBytes, endStream) }
            return nil
        }
    }

    @Test func aWindowRaisedMidConnectionReleasesTheWaitingBody() throws {
        var client = Self.client(after: [(4, 10)])  // SETTINGS_INITIAL_WINDOW_SIZE = 10
        _ = Self.frames(&client)
        try client.sendRequest(apnsRequest(), body: ByteBuffer(repeating: 0x61, count: 100))
        var frames = Self.frames(&client)
        #expect(Self.dataLengths(frames).map(\.0) == [10])
        #expect(Self.dataLengths(frames).map(\.1) == [false])
        var input = ByteBuffer(bytes: RawFrame.settings([(4, 1000)]))
        client.read(&input)
        frames = Self.frames(&client)
        #expect(Self.dataLengths(frames).map(\.0) == [90])
        #expect(Self.dataLengths(frames).map(\.1) == [true])
        #expect(frames.contains(.settingsAck))
    }

    @Test func aWindowLoweredBelowWhatWasSentGoesNegativeAndWaits() throws {
        var client = Self.client(after: [(4, 100)])
        try client.sendRequest(apnsRequest(), body: ByteBuffer(repeating: 0x61, count: 150))
        #expect(Self.dataLengths(Self.frames(&client)).map(\.0) == [100])
        // The window is now 0; lowering the initial size by 50 makes it -50 (RFC 9113 §6.9.2).
        var input = ByteBuffer(bytes: RawFrame.settings([(4, 50)]) + RawFrame.windowUpdate(stream: 1, increment: 60))
        client.read(&input)
        #expect(Self.dataLengths(Self.frames(&client)).map(\.0) == [10])
        input = ByteBuffer(bytes: RawFrame.windowUpdate(stream: 1, increment: 100))
        client.read(&input)
        #expect(Self.dataLengths(Self.frames(&client)).map(\.0) == [40])
    }

    @Test func theConnectionWindowHoldsBodiesInOrder() throws {
        var client = Self.client(after: [])
        // 65,535 bytes of connection window: the third 30,000-byte body waits.
        for _ in 0..<3 { try client.sendRequest(apnsRequest(), body: ByteBuffer(repeating: 0x61, count: 30_000)) }
        let sent = Self.dataLengths(Self.frames(&client)).map(\.0).reduce(0, +)
        #expect(sent == 65_535)
        var input = ByteBuffer(bytes: RawFrame.windowUpdate(stream: 0, increment: 1_000_000))
        client.read(&input)
        let rest = Self.frames(&client)
        #expect(Self.dataLengths(rest).map(\.0).reduce(0, +) == 90_000 - 65_535)
        #expect(Self.dataLengths(rest).last?.1 == true)
    }

    @Test func dataFollowsThePeersMaximumFrameSize() throws {
        var client = Self.client(after: [(4, 1 << 20), (5, 20_000)])
        var input = ByteBuffer(bytes: RawFrame.windowUpdate(stream: 0, increment: 1 << 20))
        client.read(&input)
        try client.sendRequest(apnsRequest(), body: ByteBuffer(repeating: 0x61, count: 50_000))
        let lengths = Self.dataLengths(Self.frames(&client))
        #expect(lengths.map(\.0) == [20_000, 20_000, 10_000])
        #expect(lengths.map(\.1) == [false, false, true])
    }

    @Test func aSmallerHeaderTableIsSignalledAndHonoured() throws {
        var client = Self.client(after: [(1, 0)])  // SETTINGS_HEADER_TABLE_SIZE = 0
        try client.sendRequest(apnsRequest(), body: nil)
        let frames = Self.frames(&client)
        guard case .headers(_, let block, _) = frames.first else {
            Issue.record("no HEADERS")
            return
        }
        // The block opens with a dynamic table size update to 0 (§6.3) …
        #expect(block.getInteger(at: block.readerIndex, as: UInt8.self) == 0x20)
        // … and decodes with a table of size 0.
        var decoder = HPACKDecoder(maximumTableSize: 0)
        var names: [String] = []
        try block.withUnsafeReadableBytes { bytes in
            try decoder.decode(bytes) { name, _, _ in names.append(String(decoding: name, as: UTF8.self)) }
        }
        #expect(names == [":method", ":scheme", ":path", ":authority", "apns-topic", "apns-push-type"])
        #expect(decoder.dynamicTableCount == 0)
    }

    @Test func aLongHeaderBlockGoesOutWithContinuationFrames() throws {
        var server = HTTP2Connection.Configuration()
        server.maxHeaderListSize = 65_535
        var pair = ConnectionPair(server: server)
        pair.run()
        let long = String(repeating: "x", count: 40_000)
        try pair.client.sendRequest(apnsRequest(extra: [("x-long", long)]), body: nil, tag: 9)
        var raw = pair.client.takeOutbound()
        let frames = Self.frames(in: raw)
        // The frame decoder joins CONTINUATION frames; count the raw frame types instead.
        var types: [UInt8] = []
        while raw.readableBytes >= 9 {
            let length =
                Int(raw.getInteger(at: raw.readerIndex, as: UInt16.self)!) << 8
                | Int(raw.getInteger(at: raw.readerIndex + 2, as: UInt8.self)!)
            types.append(raw.getInteger(at: raw.readerIndex + 3, as: UInt8.self)!)
            raw.moveReaderIndex(forwardBy: 9 + length)
        }
        #expect(types == [1, 9, 9])  // HEADERS, CONTINUATION, CONTINUATION
        #expect(frames.count == 1)
        raw.moveReaderIndex(to: 0)
        pair.serverSeen += pair.server.read(&raw)
        let request = pair.serverSeen.first { if case .message = $0 { true } else { false } }
        guard case .message(_, _, _, let headers, _, _) = request else {
            Issue.record("the server saw no request")
            return
        }
        #expect(headers.last == "x-long: \(long)")
    }
}
