import FanoutHPACK
import FanoutRandom
import FanoutTestSupport
import NIOCore
import Testing

@testable import FanoutHTTP2

/// A peer that breaks RFC 9113 gets the error code the RFC names, as GOAWAY (connection
/// errors) or RST_STREAM (stream errors), and never a crash.
@Suite struct ConnectionErrorTests {
    static let request = [(":method", "POST"), (":scheme", "http"), (":path", "/3/device/ab"), (":authority", "x")]

    static func headers(_ stream: UInt32, _ fields: [(String, String)] = request, endStream: Bool = false) -> [UInt8] {
        var encoder = HPACKEncoder(huffman: .never)
        return RawFrame.headers(stream: stream, block: RawFrame.block(fields, encoder: &encoder), endStream: endStream)
    }

    /// Bytes a peer sends and the error code they must earn.
    struct Violation: CustomTestStringConvertible, Sendable {
        let name: String
        let input: [UInt8]
        let code: HTTP2ErrorCode
        var testDescription: String { name }
        /// The request is whole before the error (DATA after END_STREAM).
        var completesTheRequest: Bool { name == "DATA after END_STREAM" }
    }

    static let connectionCases: [Violation] = [
        .init(
            name: "no connection preface",
            input: Array("GET / HTTP/1.1\r\nHost: x\r\n\r\n".utf8),
            code: .protocolError
        ),
        .init(
            name: "first frame not SETTINGS",
            input: http2ConnectionPreface
                + RawFrame.frame(type: 6, flags: 0, stream: 0, payload: [UInt8](repeating: 0, count: 8)),
            code: .protocolError
        ),
        .init(
            name: "frame over SETTINGS_MAX_FRAME_SIZE",
            input: RawFrame.clientStart
                + RawFrame.data(stream: 1, [UInt8](repeating: 0, count: 100_001), endStream: true),
            code: .frameSizeError
        ),
        .init(
            name: "DATA on an idle stream",
            input: RawFrame.clientStart + RawFrame.data(stream: 1, [1], endStream: true),
            code: .protocolError
        ),
        .init(name: "HEADERS on an even stream", input: RawFrame.clientStart + headers(2), code: .protocolError),
        .init(
            name: "HEADERS on a closed stream",
            input: RawFrame.clientStart + headers(3, endStream: true) + headers(1, endStream: true),
            code: .streamClosed
        ),
        .init(name: "HEADERS on stream 0", input: RawFrame.clientStart + headers(0), code: .protocolError),
        .init(
            name: "CONTINUATION without HEADERS",
            input: RawFrame.clientStart + RawFrame.frame(type: 9, flags: 4, stream: 1, payload: [0x82]),
            code: .protocolError
        ),
        .init(
            name: "a frame inside a header block",
            input: RawFrame.clientStart + RawFrame.frame(type: 1, flags: 0, stream: 1, payload: [0x83])
                + RawFrame.data(stream: 1, [1], endStream: false),
            code: .protocolError
        ),
        .init(
            name: "PUSH_PROMISE from a client",
            input: RawFrame.clientStart + RawFrame.frame(type: 5, flags: 4, stream: 1, payload: [0, 0, 0, 2]),
            code: .protocolError
        ),
        .init(
            name: "SETTINGS with a bad length",
            input: http2ConnectionPreface + RawFrame.frame(type: 4, flags: 0, stream: 0, payload: [0, 3, 0]),
            code: .frameSizeError
        ),
        .init(
            name: "SETTINGS_ENABLE_PUSH of 2",
            input: http2ConnectionPreface + RawFrame.settings([(2, 2)]),
            code: .protocolError
        ),
        .init(
            name: "SETTINGS_INITIAL_WINDOW_SIZE over 2^31-1",
            input: http2ConnectionPreface + RawFrame.settings([(4, 0x8000_0000)]),
            code: .flowControlError
        ),
        .init(
            name: "SETTINGS_MAX_FRAME_SIZE under 16384",
            input: http2ConnectionPreface + RawFrame.settings([(5, 100)]),
            code: .protocolError
        ),
        .init(
            name: "connection window over 2^31-1",
            input: RawFrame.clientStart + RawFrame.windowUpdate(stream: 0, increment: 0x7FFF_FFFF),
            code: .flowControlError
        ),
        .init(
            name: "WINDOW_UPDATE of 0 on the connection",
            input: RawFrame.clientStart + RawFrame.windowUpdate(stream: 0, increment: 0),
            code: .protocolError
        ),
        .init(
            name: "DATA beyond the connection window",
            input: RawFrame.clientStart + headers(1)
                + RawFrame.data(stream: 1, [UInt8](repeating: 0, count: 70_000), endStream: false),
            code: .flowControlError
        ),
        .init(
            name: "HPACK index beyond the tables",
            input: RawFrame.clientStart + RawFrame.headers(stream: 1, block: [0xFF, 0x00], endStream: true),
            code: .compressionError
        ),
        .init(
            name: "HPACK table size over the setting",
            input: RawFrame.clientStart + RawFrame.headers(stream: 1, block: [0x3F, 0xE1, 0x7F], endStream: true),
            code: .compressionError
        ),
        .init(
            name: "RST_STREAM on an idle stream",
            input: RawFrame.clientStart + RawFrame.frame(type: 3, flags: 0, stream: 9, payload: [0, 0, 0, 8]),
            code: .protocolError
        ),
        .init(
            name: "PING of 7 bytes",
            input: RawFrame.clientStart
                + RawFrame.frame(type: 6, flags: 0, stream: 0, payload: [UInt8](repeating: 0, count: 7)),
            code: .frameSizeError
        ),
        .init(
            name: "GOAWAY on a stream",
            input: RawFrame.clientStart
                + RawFrame.frame(type: 7, flags: 0, stream: 1, payload: [UInt8](repeating: 0, count: 8)),
            code: .protocolError
        ),
    ]

    @Test(arguments: connectionCases)
    func connectionErrors(_ testCase: Violation) {
        var configuration = HTTP2Connection.Configuration()
        configuration.connectionWindowSize = 65_535
        configuration.initialWindowSize = 1 << 20
        // Larger frames than the default, so one DATA frame can overrun a window.
        configuration.maxFrameSize = 100_000
        let (events, written) = feedServer(testCase.input, configuration: configuration)
        #expect(events.last == .connectionError(testCase.code))
        #expect(written.goAway?.code == testCase.code)
    }

    static let streamCases: [Violation] = [
        .init(
            name: "uppercase field name",
            input: headers(1, request + [("Apns-Topic", "x")], endStream: true),
            code: .protocolError
        ),
        .init(
            name: "no :path",
            input: headers(1, Array(request.filter { $0.0 != ":path" }), endStream: true),
            code: .protocolError
        ),
        .init(
            name: "empty :path",
            input: headers(1, [(":method", "POST"), (":scheme", "http"), (":path", "")], endStream: true),
            code: .protocolError
        ),
        .init(
            name: ":status in a request",
            input: headers(1, request + [(":status", "200")], endStream: true),
            code: .protocolError
        ),
        .init(
            name: "unknown pseudo-header",
            input: headers(1, request + [(":protocol", "x")], endStream: true),
            code: .protocolError
        ),
        .init(
            name: "pseudo-header after a regular field",
            input: headers(1, [("a", "b")] + request, endStream: true),
            code: .protocolError
        ),
        .init(
            name: "duplicate :method",
            input: headers(1, request + [(":method", "GET")], endStream: true),
            code: .protocolError
        ),
        .init(
            name: "connection-specific field",
            input: headers(1, request + [("connection", "keep-alive")], endStream: true),
            code: .protocolError
        ),
        .init(
            name: "te other than trailers",
            input: headers(1, request + [("te", "gzip")], endStream: true),
            code: .protocolError
        ),
        .init(
            name: "content-length that does not match",
            input: headers(1, request + [("content-length", "5")]) + RawFrame.data(stream: 1, [1, 2], endStream: true),
            code: .protocolError
        ),
        .init(
            name: "DATA after END_STREAM",
            input: headers(1, endStream: true) + RawFrame.data(stream: 1, [1], endStream: true),
            code: .streamClosed
        ),
        .init(
            name: "trailers without END_STREAM",
            input: headers(1) + headers(1, [("x-trailer", "1")], endStream: false),
            code: .protocolError
        ),
        .init(
            name: "WINDOW_UPDATE of 0 on a stream",
            input: headers(1) + RawFrame.windowUpdate(stream: 1, increment: 0),
            code: .protocolError
        ),
        .init(
            name: "stream window over 2^31-1",
            input: headers(1) + RawFrame.windowUpdate(stream: 1, increment: 0x7FFF_FFFF),
            code: .flowControlError
        ),
        .init(
            name: "DATA beyond the stream window",
            input: headers(1) + RawFrame.data(stream: 1, [UInt8](repeating: 0, count: 70_000), endStream: false),
            code: .flowControlError
        ),
        .init(
            name: "PRIORITY of 4 bytes",
            input: RawFrame.frame(type: 2, flags: 0, stream: 1, payload: [0, 0, 0, 0]),
            code: .frameSizeError
        ),
    ]

    @Test(arguments: streamCases)
    func streamErrors(_ testCase: Violation) {
        var configuration = HTTP2Connection.Configuration()
        configuration.initialWindowSize = 65_535
        configuration.maxFrameSize = 100_000
        let (events, written) = feedServer(RawFrame.clientStart + testCase.input, configuration: configuration)
        #expect(written.resets[1] == testCase.code)
        #expect(written.goAway == nil)
        if !testCase.completesTheRequest {
            #expect(!events.contains { if case .message = $0 { true } else { false } })
        }
        // The connection goes on: a later request on stream 3 is answered as usual.
        let (after, _) = feedServer(
            RawFrame.clientStart + testCase.input + Self.headers(3, endStream: true),
            configuration: configuration
        )
        #expect(after.contains { if case .message(stream: 3, _, _, _, _, _) = $0 { true } else { false } })
    }

    @Test func headerBlockOverTheListLimitEndsTheConnection() {
        var configuration = HTTP2Connection.Configuration()
        configuration.maxHeaderListSize = 1000
        let big = Self.headers(1, Self.request + [("x-big", String(repeating: "v", count: 2000))], endStream: true)
        let (events, written) = feedServer(RawFrame.clientStart + big, configuration: configuration)
        #expect(events.last.map { if case .connectionError = $0 { true } else { false } } == true)
        #expect(written.goAway != nil)
    }

    @Test func aTruncatedFrameWaitsForTheRest() {
        let whole = RawFrame.clientStart + Self.headers(1, endStream: true)
        for cut in 0..<whole.count {
            var server = HTTP2Connection(role: .server)
            var first = ByteBuffer(bytes: whole[..<cut])
            var seen: [Seen] = []
            seen += server.read(&first)
            var rest = first
            rest.writeBytes(whole[cut...])
            seen += server.read(&rest)
            #expect(seen.count { if case .message = $0 { true } else { false } } == 1, "cut at \(cut)")
        }
    }

    /// What one end did with random frames: nothing went wrong, or a connection error, which
    /// is then its last event and, on the wire, one GOAWAY with that code, the last frame it
    /// wrote (RFC 9113 §5.4.1); no GOAWAY otherwise. A description of what broke that, if
    /// anything did.
    static func endsAsItSays(_ events: [Seen], _ written: [HTTP2Frame]) -> (failed: Bool, wrong: String?) {
        let errors = events.compactMap { event -> HTTP2ErrorCode? in
            if case .connectionError(let code) = event { code } else { nil }
        }
        let goAways = written.compactMap { frame -> HTTP2ErrorCode? in
            if case .goAway(_, let code, _) = frame { code } else { nil }
        }
        guard let code = errors.first else {
            return (false, goAways.isEmpty ? nil : "a GOAWAY \(goAways) without a connection error")
        }
        if errors.count > 1 || events.last != .connectionError(code) {
            return (true, "the connection error is not its last event: \(events)")
        }
        guard goAways == [code], case .goAway = written.last else {
            return (true, "a connection error \(code) with GOAWAY \(goAways) in \(written.map(describe))")
        }
        return (true, nil)
    }

    /// Random frames after a valid opening never crash either end, and each end's outcome is
    /// the same in its events and on the wire (`endsAsItSays`). Both outcomes occur at the server.
    @Test func randomFramesEndAsTheirEventsSay() {
        var random = SeededRandom(seed: 7)
        var (served, failed) = (0, 0)
        for round in 0..<3000 {
            // Valid openings followed by random frames with plausible headers.
            var input = RawFrame.clientStart
            for _ in 0..<Int(random.next() % 6) {
                let length = Int(random.next() % 40)
                let type = UInt8(random.next() % 11)
                let flags = UInt8(truncatingIfNeeded: random.next())
                let stream = UInt32(random.next() % 8)
                let payload = (0..<length).map { _ in UInt8(truncatingIfNeeded: random.next()) }
                input += RawFrame.frame(type: type, flags: flags, stream: stream, payload: payload)
            }
            if round % 3 == 0 {
                input += (0..<Int(random.next() % 64)).map { _ in UInt8(truncatingIfNeeded: random.next()) }
            }
            let (events, written) = feedServer(input)
            let server = Self.endsAsItSays(events, written)
            if server.failed { failed += 1 } else { served += 1 }
            if let wrong = server.wrong { Issue.record("server, round \(round): \(wrong)") }
            // The same frames, less the preface, to a client.
            var client = HTTP2Connection(role: .client)
            var buffer = ByteBuffer(bytes: input.dropFirst(24))
            let clientEvents = client.read(&buffer)
            var outbound = client.takeOutbound()
            outbound.moveReaderIndex(forwardBy: 24)  // its connection preface
            var decoder = HTTP2FrameDecoder(maxFrameSize: 1 << 24 - 1)
            var clientWritten: [HTTP2Frame] = []
            while let frame = try? decoder.nextFrame(from: &outbound) { clientWritten.append(frame) }
            if let wrong = Self.endsAsItSays(clientEvents, clientWritten).wrong {
                Issue.record("client, round \(round): \(wrong)")
            }
        }
        #expect(served > 0 && failed > 0, "\(served) served, \(failed) failed")
    }
}
