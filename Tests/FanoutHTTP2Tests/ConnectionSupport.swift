import FanoutHPACK
import NIOCore

@testable import FanoutHTTP2

/// An event reduced to values a test can compare.
enum Seen: Equatable, CustomStringConvertible {
    case message(stream: UInt32, tag: UInt64, status: Int, headers: [String], body: String, bodyLength: Int)
    case reset(stream: UInt32, tag: UInt64, code: HTTP2ErrorCode, byPeer: Bool)
    case settings(maxConcurrentStreams: UInt32?)
    case goAway(lastStream: UInt32, code: HTTP2ErrorCode, debug: String)
    case pingAck(UInt64)
    case connectionError(HTTP2ErrorCode)

    init(_ event: HTTP2Event) {
        switch event {
        case .message(let message):
            self = .message(
                stream: message.stream,
                tag: message.tag,
                status: message.status,
                headers: message.headers.fields.map { "\($0.name): \($0.value)" },
                body: String(decoding: message.body, as: UTF8.self),
                bodyLength: message.bodyLength
            )
        case .streamReset(let stream, let tag, let code, let byPeer):
            self = .reset(stream: stream, tag: tag, code: code, byPeer: byPeer)
        case .remoteSettingsChanged(let settings):
            self = .settings(maxConcurrentStreams: settings.maxConcurrentStreams)
        case .goAway(let lastStream, let code, let debugData):
            self = .goAway(lastStream: lastStream, code: code, debug: String(decoding: debugData, as: UTF8.self))
        case .pingAcknowledged(let opaque):
            self = .pingAck(opaque)
        case .connectionError(let error):
            self = .connectionError(error.code)
        }
    }

    var description: String {
        switch self {
        case .message(let stream, let tag, let status, let headers, let body, _):
            "message(stream \(stream), tag \(tag), status \(status), \(headers), body \(body.count) bytes)"
        case .reset(let stream, _, let code, let byPeer): "reset(\(stream), \(code), byPeer: \(byPeer))"
        case .settings(let max): "settings(max \(max.map(String.init) ?? "none"))"
        case .goAway(let last, let code, let debug): "goAway(\(last), \(code), \(debug))"
        case .pingAck(let opaque): "pingAck(\(opaque))"
        case .connectionError(let code): "connectionError(\(code))"
        }
    }

    var isSettings: Bool {
        if case .settings = self { return true }
        return false
    }
}

extension HTTP2Connection {
    /// Reads every whole frame in `buffer` and returns the events, reduced to values; a message
    /// goes to `respond` as it is seen.
    @discardableResult
    mutating func read(
        _ buffer: inout ByteBuffer,
        respond: (HTTP2Message, inout HTTP2Writer) -> Void = { _, _ in }
    ) -> [Seen] {
        var seen: [Seen] = []
        Self.receive(&self, from: &buffer) { event, connection in
            seen.append(Seen(event))
            if case .message(let message) = event { respond(message, &connection) }
        }
        return seen
    }
}

/// A client and a server connection joined in memory: bytes move between them until neither
/// has anything to send.
struct ConnectionPair: ~Copyable {
    var client: HTTP2Connection
    var server: HTTP2Connection
    var clientSeen: [Seen] = []
    var serverSeen: [Seen] = []
    /// Bytes of a frame not yet complete, for tests that deliver bytes in pieces.
    var clientPartial = ByteBuffer()
    var serverPartial = ByteBuffer()
    /// What the server does with a request; by default, 200 with no body.
    var respond: (HTTP2Message, inout HTTP2Writer) -> Void = { message, connection in
        connection.respond(stream: message.stream, HTTP2Fields([(":status", "200")]), body: nil)
    }

    init(client: HTTP2Connection.Configuration = .init(), server: HTTP2Connection.Configuration = .init()) {
        self.client = HTTP2Connection(role: .client, configuration: client)
        self.server = HTTP2Connection(role: .server, configuration: server)
    }

    /// Moves bytes until both sides are quiet (at most `rounds` round trips).
    mutating func run(rounds: Int = 100) {
        for _ in 0..<rounds {
            var toServer = client.takeOutbound()
            var toClient = server.takeOutbound()
            if toServer.readableBytes == 0 && toClient.readableBytes == 0 { return }
            serverSeen += server.read(&toServer, respond: respond)
            clientSeen += client.read(&toClient)
        }
    }

    /// Drops the SETTINGS events of the handshake.
    mutating func forgetSettings() {
        clientSeen.removeAll { $0.isSettings }
        serverSeen.removeAll { $0.isSettings }
    }
}

/// A request the way APNs wants it.
func apnsRequest(token: String = String(repeating: "ab", count: 32), extra: [(String, String)] = []) -> HTTP2Fields {
    HTTP2Fields(
        [
            (":method", "POST"), (":scheme", "https"), (":path", "/3/device/\(token)"),
            (":authority", "api.push.apple.com"), ("apns-topic", "com.example.app"), ("apns-push-type", "alert"),
        ] + extra
    )
}

func bytes(_ text: String) -> ByteBuffer { ByteBuffer(string: text) }

/// Frames written by hand, for peers that misbehave.
enum RawFrame {
    /// The frame types in `bytes`, read frame by frame.
    static func types(in bytes: ByteBuffer) -> [UInt8] {
        let raw = Array(bytes.readableBytesView)
        var types: [UInt8] = []
        var offset = 0
        while offset + 9 <= raw.count {
            let length = Int(raw[offset]) << 16 | Int(raw[offset + 1]) << 8 | Int(raw[offset + 2])
            types.append(raw[offset + 3])
            offset += 9 + length
        }
        return types
    }

    static func frame(type: UInt8, flags: UInt8, stream: UInt32, payload: [UInt8]) -> [UInt8] {
        let length = payload.count
        return [UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF), type, flags]
            + withUnsafeBytes(of: stream.bigEndian, Array.init) + payload
    }

    static func settings(_ pairs: [(UInt16, UInt32)] = []) -> [UInt8] {
        frame(
            type: 4,
            flags: 0,
            stream: 0,
            payload: pairs.flatMap {
                withUnsafeBytes(of: $0.0.bigEndian, Array.init) + withUnsafeBytes(of: $0.1.bigEndian, Array.init)
            }
        )
    }

    /// A client's opening: preface and empty SETTINGS.
    static var clientStart: [UInt8] { http2ConnectionPreface + settings() }

    /// A header block for `fields`, from a fresh encoder (literals, indexed into its table).
    static func block(_ fields: [(String, String)], encoder: inout HPACKEncoder) -> [UInt8] {
        var block = OutputBuffer()
        for (name, value) in fields { encoder.encode(name: name, value: value, into: &block) }
        return Array(block.bytes)
    }

    static func headers(stream: UInt32, block: [UInt8], endStream: Bool) -> [UInt8] {
        frame(type: 1, flags: 0x4 | (endStream ? 0x1 : 0), stream: stream, payload: block)
    }

    static func data(stream: UInt32, _ payload: [UInt8], endStream: Bool) -> [UInt8] {
        frame(type: 0, flags: endStream ? 0x1 : 0, stream: stream, payload: payload)
    }

    static func windowUpdate(stream: UInt32, increment: UInt32) -> [UInt8] {
        frame(type: 8, flags: 0, stream: stream, payload: withUnsafeBytes(of: increment.bigEndian, Array.init))
    }
}

/// Feeds raw bytes to a server connection and returns its events and the frames it wrote.
func feedServer(
    _ input: [UInt8],
    configuration: HTTP2Connection.Configuration = .init()
) -> (events: [Seen], written: [HTTP2Frame]) {
    var server = HTTP2Connection(role: .server, configuration: configuration)
    var buffer = ByteBuffer(bytes: input)
    var events: [Seen] = []
    events += server.read(&buffer)
    var out = server.takeOutbound()
    var decoder = HTTP2FrameDecoder(maxFrameSize: 1 << 24 - 1)
    var written: [HTTP2Frame] = []
    while let frame = try? decoder.nextFrame(from: &out) { written.append(frame) }
    return (events, written)
}

extension [HTTP2Frame] {
    /// The GOAWAY among the frames, if any.
    var goAway: (lastStream: UInt32, code: HTTP2ErrorCode)? {
        for frame in self { if case .goAway(let last, let code, _) = frame { return (last, code) } }
        return nil
    }

    /// The RST_STREAM frames' streams and codes.
    var resets: [UInt32: HTTP2ErrorCode] {
        var resets: [UInt32: HTTP2ErrorCode] = [:]
        for frame in self { if case .rstStream(let stream, let code) = frame { resets[stream] = code } }
        return resets
    }
}
