import NIOCore

/// An HTTP/2 frame as the connection reads it (RFC 9113 §6): payloads are views of the bytes
/// being read (or, for a header block joined from CONTINUATION frames, of the decoder's own
/// memory), valid until the decoder's next frame. No copy and no reference counting: the
/// connection handles each frame in place.
enum HTTP2FrameView {
    /// DATA. `flowControlledLength` is the whole payload, padding included (§6.9.1).
    case data(stream: UInt32, payload: UnsafeRawBufferPointer, endStream: Bool, flowControlledLength: Int)
    /// HEADERS with its whole header block.
    case headers(stream: UInt32, block: UnsafeRawBufferPointer, endStream: Bool)
    case priority(stream: UInt32)
    case rstStream(stream: UInt32, code: HTTP2ErrorCode)
    /// SETTINGS: the payload, a whole number of 6-byte settings (`HTTP2Setting.forEach(in:)`).
    case settings(UnsafeRawBufferPointer)
    case settingsAck
    case ping(opaque: UInt64, ack: Bool)
    case goAway(lastStream: UInt32, code: HTTP2ErrorCode, debugData: UnsafeRawBufferPointer)
    case windowUpdate(stream: UInt32, increment: UInt32)
    /// A frame of a type RFC 9113 does not define: ignored (§4.1), but still a frame the peer
    /// made us read (`HTTP2Connection.Configuration.maxFramesWithoutRequest`).
    case unknown
}

/// An HTTP/2 frame as received (RFC 9113 §6), owning its payload: what
/// `HTTP2FrameDecoder.nextFrame(from:)` gives tools and tests. HEADERS arrives with its
/// CONTINUATION frames already joined into one block.
public enum HTTP2Frame: Sendable, Equatable {
    /// DATA. `flowControlledLength` is the whole payload, padding included (§6.9.1).
    case data(stream: UInt32, payload: ByteBuffer, endStream: Bool, flowControlledLength: Int)
    /// HEADERS with its whole header block.
    case headers(stream: UInt32, block: ByteBuffer, endStream: Bool)
    case priority(stream: UInt32)
    case rstStream(stream: UInt32, code: HTTP2ErrorCode)
    case settings([HTTP2Setting])
    case settingsAck
    case ping(opaque: UInt64, ack: Bool)
    case goAway(lastStream: UInt32, code: HTTP2ErrorCode, debugData: ByteBuffer)
    case windowUpdate(stream: UInt32, increment: UInt32)

    /// The frame `view` shows, its payload copied; `nil` for a frame of an unknown type.
    init?(copying view: HTTP2FrameView) {
        switch view {
        case .data(let stream, let payload, let endStream, let flowControlledLength):
            self = .data(
                stream: stream,
                payload: ByteBuffer(bytes: payload),
                endStream: endStream,
                flowControlledLength: flowControlledLength
            )
        case .headers(let stream, let block, let endStream):
            self = .headers(stream: stream, block: ByteBuffer(bytes: block), endStream: endStream)
        case .priority(let stream): self = .priority(stream: stream)
        case .rstStream(let stream, let code): self = .rstStream(stream: stream, code: code)
        case .settings(let payload):
            var settings: [HTTP2Setting] = []
            HTTP2Setting.forEach(in: payload) { settings.append($0) }
            self = .settings(settings)
        case .settingsAck: self = .settingsAck
        case .ping(let opaque, let ack): self = .ping(opaque: opaque, ack: ack)
        case .goAway(let lastStream, let code, let debugData):
            self = .goAway(lastStream: lastStream, code: code, debugData: ByteBuffer(bytes: debugData))
        case .windowUpdate(let stream, let increment): self = .windowUpdate(stream: stream, increment: increment)
        case .unknown: return nil
        }
    }
}

/// The frame type codes (RFC 9113 §6).
enum HTTP2FrameType: UInt8 {
    case data = 0x0
    case headers = 0x1
    case priority = 0x2
    case rstStream = 0x3
    case settings = 0x4
    case pushPromise = 0x5
    case ping = 0x6
    case goAway = 0x7
    case windowUpdate = 0x8
    case continuation = 0x9
}

/// Frame flags (RFC 9113 §6).
enum HTTP2Flags {
    static let endStream: UInt8 = 0x1
    static let ack: UInt8 = 0x1
    static let endHeaders: UInt8 = 0x4
    static let padded: UInt8 = 0x8
    static let priority: UInt8 = 0x20
}

/// The bytes a client sends first (RFC 9113 §3.4).
public let http2ConnectionPreface: [UInt8] = Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8)
