import NIOCore

/// What `HTTP2Connection.nextEvent(from:)` hands to the application.
public enum HTTP2Event {
    /// A whole request (server) or final response (client).
    case message(HTTP2Message)
    /// A stream ended without a whole message: reset by the peer (`byPeer`), by us after a
    /// stream error, or refused by a GOAWAY whose last stream id is below it (code
    /// REFUSED_STREAM: the request was not processed and may be sent again).
    case streamReset(stream: UInt32, tag: UInt64, code: HTTP2ErrorCode, byPeer: Bool)
    /// The peer's SETTINGS changed (MAX_CONCURRENT_STREAMS above all).
    case remoteSettingsChanged(HTTP2Settings)
    /// The peer sent GOAWAY: no new streams; streams above `lastStream` follow as resets.
    case goAway(lastStream: UInt32, code: HTTP2ErrorCode, debugData: ByteBuffer)
    /// The peer answered our PING.
    case pingAcknowledged(opaque: UInt64)
    /// The peer broke the protocol: GOAWAY is in `outbound`; write it and close.
    case connectionError(HTTP2FrameError)
}

/// A request or response with its header list and body.
public struct HTTP2Message {
    public var stream: UInt32
    /// The tag given to `sendRequest` (client); 0 on the server.
    public var tag: UInt64
    /// The response's `:status` (client); 0 for a request.
    public var status: Int
    /// The header fields, then any trailer fields.
    public var headers: HTTP2HeaderList
    /// The body, up to the configured `maxBodySize`.
    public var body: ByteBuffer
    /// The body's whole length, even beyond `maxBodySize`.
    public var bodyLength: Int
}
