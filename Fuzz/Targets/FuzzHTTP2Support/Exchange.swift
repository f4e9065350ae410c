import FanoutHTTP2
import FuzzSupport
import NIOCore

/// What the HTTP/2 fuzz targets share: the configurations an input picks, the conversation a
/// connection holds with whatever the input says, and the check that everything it writes in
/// return is well-formed HTTP/2.
public enum Exchange {
    static let request = HTTP2Fields([
        (":method", "POST"), (":scheme", "https"), (":path", "/3/device/" + String(repeating: "ab", count: 32)),
        (":authority", "localhost"), ("apns-topic", "com.example.app"), ("apns-push-type", "alert"),
    ])
    static let response = HTTP2Fields([(":status", "200"), ("apns-id", "8B9E4B2A-6C1F-4F9B-9D53-0F1E2D3C4B5A")])
    static let body: ByteBuffer = {
        var body = ByteBuffer()
        body.writeString(#"{"aps":{"alert":"hello"}}"#)
        return body
    }()

    /// A configuration picked by one input byte: small windows, few streams, small frames or a
    /// small header table, so that inputs reach the limits quickly.
    public static func configuration(_ options: UInt8) -> HTTP2Connection.Configuration {
        var configuration = HTTP2Connection.Configuration()
        // A client otherwise reserves room for 4096 streams, which ASan pays for on every input.
        configuration.maxOutboundStreams = 64
        if options & 0x01 != 0 { configuration.initialWindowSize = 16 }
        if options & 0x02 != 0 { configuration.connectionWindowSize = 65_535 }
        if options & 0x04 != 0 { configuration.maxConcurrentStreams = 2 }
        if options & 0x08 != 0 { configuration.headerTableSize = 64 }
        if options & 0x10 != 0 { configuration.maxHeaderListSize = 512 }
        if options & 0x20 != 0 { configuration.maxBodySize = 8 }
        if options & 0x40 != 0 {
            configuration.maxQueuedControlReplies = 4
            configuration.streamResetBurst = 4
            configuration.maxContinuationFrames = 2
        }
        if options & 0x80 != 0 { configuration.encoderTableSize = 0 }
        return configuration
    }

    /// A client that has sent three requests with bodies: the state a fuzzed server talks to.
    public static func client(_ configuration: HTTP2Connection.Configuration) -> HTTP2Connection {
        var client = HTTP2Connection(role: .client, configuration: configuration)
        for tag in 1...3 { _ = try? client.sendRequest(request, body: body, tag: UInt64(tag)) }
        return client
    }

    /// Hands `buffer`'s frames to `connection` and does what an application would with each
    /// event: a server answers every request (or resets every fifth), a client sends one more
    /// request for each answer. Returns false once the connection has failed.
    public static func converse(_ connection: inout HTTP2Connection, _ buffer: inout ByteBuffer) -> Bool {
        var answered = 0
        var failed = false
        HTTP2Connection.receive(&connection, from: &buffer) { event, connection in
            switch event {
            case .message(let message):
                answered += 1
                if connection.role == .server {
                    if answered % 5 == 0 {
                        connection.resetStream(message.stream, code: .refusedStream)
                    } else {
                        connection.respond(stream: message.stream, response, body: answered % 2 == 0 ? body : nil)
                    }
                } else {
                    // The stream limit binds when a stream is opened: a server may lower it
                    // below the streams already open (RFC 9113 §5.1.2), and they may finish.
                    let limit = connection.availableStreams
                    let open = connection.openStreams
                    if (try? connection.sendRequest(request, body: body, tag: UInt64(answered))) != nil {
                        precondition(limit > 0, "a stream opened beyond the server's limit")
                        precondition(connection.openStreams == open + 1, "a request opened no stream")
                    }
                }
            case .connectionError:
                failed = true
            case .streamReset, .remoteSettingsChanged, .goAway, .pingAcknowledged:
                break
            }
        }
        return !failed && connection.error == nil
    }

    /// The bytes each side writes in a whole, well-behaved conversation: the seeds.
    public static func transcript(_ options: UInt8 = 0) -> (client: [UInt8], server: [UInt8]) {
        let configuration = configuration(options)
        var client = Self.client(configuration)
        var server = HTTP2Connection(role: .server, configuration: configuration)
        var sentByClient: [UInt8] = []
        var sentByServer: [UInt8] = []
        for _ in 0..<4 {
            var toServer = client.takeOutbound()
            sentByClient += toServer.readableBytesView
            _ = converse(&server, &toServer)
            var toClient = server.takeOutbound()
            sentByServer += toClient.readableBytesView
            _ = converse(&client, &toClient)
        }
        return (Array(sentByClient.dropFirst(http2ConnectionPreface.count)), sentByServer)
    }
}

extension Exchange {
    /// Hands `input` to `connection`, `chunk` bytes at a time after `start`, with the clock
    /// moving 10 ms a chunk; after each, checks `invariant` and drains what the connection
    /// wrote through `check`. Stops when the connection fails.
    public static func feed(
        _ connection: inout HTTP2Connection,
        _ input: inout FuzzInput,
        chunk: Int,
        start: [UInt8] = [],
        check: inout OutboundCheck,
        invariant: (borrowing HTTP2Connection) -> Void
    ) {
        var buffer = ByteBuffer(bytes: start)
        var now: UInt64 = 0
        while !input.isEmpty {
            buffer.writeBytes(input.take(chunk))
            now += 10_000_000
            connection.bytesArrived(at: now, beginningBurst: true)
            let alive = converse(&connection, &buffer)
            invariant(connection)
            check.drain(&connection)
            if !alive { break }
            buffer.discardReadBytes()
        }
    }
}

/// Reads everything one side writes, as its peer would: a frame the peer's decoder refuses is a
/// bug in the writer, and so is an outbound buffer that keeps growing while it is drained.
public struct OutboundCheck: ~Copyable {
    private var decoder = HTTP2FrameDecoder(maxFrameSize: 1 << 24 - 1, maxHeaderBlockSize: 1 << 20)
    private var pending = ByteBuffer()
    private var prefaceLeft: Int

    public init(role: HTTP2Connection.Role) {
        prefaceLeft = role == .client ? http2ConnectionPreface.count : 0
    }

    /// Takes and checks what `connection` wrote since the last call.
    public mutating func drain(_ connection: inout HTTP2Connection) {
        connection.moveOutbound(into: &pending)
        connection.controlRepliesDelivered()
        if prefaceLeft > 0 {
            // The client's preface comes first, before any frame: nothing is pending before it.
            let skipped = min(prefaceLeft, pending.readableBytes)
            pending.moveReaderIndex(forwardBy: skipped)
            prefaceLeft -= skipped
        }
        do {
            while try decoder.nextFrame(from: &pending) != nil {}
        } catch {
            fatalError("the connection wrote a frame its peer refuses: \(error)")
        }
        pending.discardReadBytes()
    }
}
