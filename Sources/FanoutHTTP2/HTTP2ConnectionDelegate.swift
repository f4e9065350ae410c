import NIOCore
import NIOSSL

/// What the owner of a connection does with it: the sink answers requests, the load engine
/// sends them and counts responses. Called on the channel's event loop, each call with the
/// connection's `HTTP2Writer` (its state to read, the frames it may queue), not the connection
/// itself: reading bytes in and writing them out stay the owner's. Only `connectionEnded` gets
/// the connection, borrowed, to read what it ended with.
public protocol HTTP2ConnectionDelegate: SendableMetatype {
    /// The preface and SETTINGS are queued: a client may open streams now.
    mutating func connectionStarted(_ connection: inout HTTP2Writer)
    /// TLS is up with ALPN `h2`, before any frame is read; `peerCertificate` is the peer's
    /// certificate, verified against the configured authorities, when it sent one.
    mutating func tlsEstablished(peerCertificate: NIOSSLCertificate?, connection: inout HTTP2Writer)
    /// An event from the peer; the delegate may respond or send more on `connection`.
    mutating func handle(_ event: HTTP2Event, connection: inout HTTP2Writer)
    /// The channel's writability changed: a sender stops opening streams while it is not
    /// writable (the peer or the network is slower than we are) and resumes when it is.
    mutating func writabilityChanged(_ isWritable: Bool, connection: inout HTTP2Writer)
    /// The connection is gone: closed by either side, after a connection error, or lost.
    mutating func connectionEnded(_ connection: borrowing HTTP2Connection, error: (any Error)?)
    /// When the delegate next wants `wake` (a deferred response, a timeout); `nil` for never.
    /// Asked after every call into the delegate; one timer per connection serves it.
    var nextWakeUp: NIODeadline? { get }
    /// The time asked for by `nextWakeUp` has come.
    mutating func wake(now: NIODeadline, connection: inout HTTP2Writer)
    /// What the connection had queued was handed to the socket at `now` (uptime nanoseconds):
    /// the moment an answer really leaves, which the sink times its own lateness to.
    mutating func outboundWritten(at now: UInt64)
}

/// What a delegate need not say: every call but `handle` does nothing by default.
extension HTTP2ConnectionDelegate {
    public mutating func connectionStarted(_ connection: inout HTTP2Writer) {}
    public mutating func tlsEstablished(peerCertificate: NIOSSLCertificate?, connection: inout HTTP2Writer) {}
    public mutating func writabilityChanged(_ isWritable: Bool, connection: inout HTTP2Writer) {}
    public var nextWakeUp: NIODeadline? { nil }
    public mutating func wake(now: NIODeadline, connection: inout HTTP2Writer) {}
    public mutating func connectionEnded(_ connection: borrowing HTTP2Connection, error: (any Error)?) {}
    public mutating func outboundWritten(at now: UInt64) {}
}

/// What `HTTP2Connection.receive(_:from:pausingAt:_:)` hands to the application.
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
