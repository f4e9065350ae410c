/// What `HTTP2Connection.receive(_:from:_:)` hands to the application.
///
/// An event's bytes (a message's header list and body, GOAWAY's debug data) are views of the
/// bytes being read or of the connection's own memory: valid during the call that hands the
/// event over, not after. Nothing is copied or reference-counted on the way: copy what must
/// outlive the call.
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
    case goAway(lastStream: UInt32, code: HTTP2ErrorCode, debugData: UnsafeRawBufferPointer)
    /// The peer answered our PING.
    case pingAcknowledged(opaque: UInt64)
    /// The peer broke the protocol: GOAWAY is in `outbound`; write it and close.
    case connectionError(HTTP2FrameError)
}

/// A request or response with its header list and body: views, valid while the event that
/// carries it is handled.
public struct HTTP2Message {
    public var stream: UInt32
    /// The tag given to `sendRequest` (client); 0 on the server.
    public var tag: UInt64
    /// The response's `:status` (client); 0 for a request.
    public var status: Int
    /// The header fields, then any trailer fields.
    public var headers: HTTP2HeaderList
    /// The body, up to the configured `maxBodySize`.
    public var body: UnsafeRawBufferPointer
    /// The body's whole length, even beyond `maxBodySize`.
    public var bodyLength: Int
}
