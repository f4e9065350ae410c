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
