/// HTTP/2 error codes (RFC 9113 §7), as carried by RST_STREAM and GOAWAY.
public struct HTTP2ErrorCode: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    public let rawValue: UInt32

    public init(rawValue: UInt32) {
        self.rawValue = rawValue
    }

    public static let noError = HTTP2ErrorCode(rawValue: 0x0)
    public static let protocolError = HTTP2ErrorCode(rawValue: 0x1)
    public static let internalError = HTTP2ErrorCode(rawValue: 0x2)
    public static let flowControlError = HTTP2ErrorCode(rawValue: 0x3)
    public static let settingsTimeout = HTTP2ErrorCode(rawValue: 0x4)
    public static let streamClosed = HTTP2ErrorCode(rawValue: 0x5)
    public static let frameSizeError = HTTP2ErrorCode(rawValue: 0x6)
    public static let refusedStream = HTTP2ErrorCode(rawValue: 0x7)
    public static let cancel = HTTP2ErrorCode(rawValue: 0x8)
    public static let compressionError = HTTP2ErrorCode(rawValue: 0x9)
    public static let connectError = HTTP2ErrorCode(rawValue: 0xA)
    public static let enhanceYourCalm = HTTP2ErrorCode(rawValue: 0xB)
    public static let inadequateSecurity = HTTP2ErrorCode(rawValue: 0xC)
    public static let http11Required = HTTP2ErrorCode(rawValue: 0xD)

    public var description: String {
        let names = [
            "NO_ERROR", "PROTOCOL_ERROR", "INTERNAL_ERROR", "FLOW_CONTROL_ERROR", "SETTINGS_TIMEOUT",
            "STREAM_CLOSED", "FRAME_SIZE_ERROR", "REFUSED_STREAM", "CANCEL", "COMPRESSION_ERROR", "CONNECT_ERROR",
            "ENHANCE_YOUR_CALM", "INADEQUATE_SECURITY", "HTTP_1_1_REQUIRED",
        ]
        return rawValue < names.count ? names[Int(rawValue)] : "0x\(String(rawValue, radix: 16))"
    }
}

/// A frame the peer must not have sent: the connection ends with GOAWAY carrying `code`
/// (a connection error), or only the stream with RST_STREAM (a stream error, `stream` set).
public struct HTTP2FrameError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The error code to send.
    public var code: HTTP2ErrorCode
    /// The stream, for a stream error; `nil` for a connection error.
    public var stream: UInt32?
    /// What was wrong, for logs and GOAWAY debug data.
    public var reason: String

    init(_ code: HTTP2ErrorCode, _ reason: String, stream: UInt32? = nil) {
        self.code = code
        self.reason = reason
        self.stream = stream
    }

    public var description: String {
        if let stream { return "stream \(stream): \(code): \(reason)" }
        return "connection: \(code): \(reason)"
    }
}
