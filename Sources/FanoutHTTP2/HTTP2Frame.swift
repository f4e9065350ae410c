import NIOCore

/// An HTTP/2 frame as received (RFC 9113 §6). Payloads are slices of the received buffer: no
/// copy; HEADERS arrives with its CONTINUATION frames already joined into one block.
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
