import FanoutHPACK
import NIOCore

/// What a delegate is handed while it is called: the connection's state to read, and the frames
/// it may queue — requests, responses, resets, GOAWAY, PING, a new stream limit.
///
/// ```
///   owner (HTTP2ConnectionHandler, HTTP2InMemoryPair)      delegate (a client, a sink)
///   ─────────────────────────────────────────────────      ───────────────────────────────
///   bytesArrived · receive · moveOutbound · timers    ──►  reads: now, streams, windows, GOAWAY
///   owns HTTP2Connection                                   queues: sendRequest, respond,
///                                                                  resetStream, goAway, ping, …
/// ```
///
/// It reads no bytes in and takes none out: those are the owner's, between calls, so a
/// delegate can never re-enter `receive` in the middle of a read. It lives only for the call
/// it is passed to: it is not copyable, only `HTTP2Connection.withWriter` makes one, and a
/// delegate gets it `inout`, so it cannot keep one (short of swapping it with another writer
/// it was handed, which would leave that one's owner a dangling pointer: never do that).
public struct HTTP2Writer: ~Copyable {
    /// The connection, exclusively accessed for as long as this writer lives.
    @usableFromInline let connection: UnsafeMutablePointer<HTTP2Connection>

    @usableFromInline init(_ connection: UnsafeMutablePointer<HTTP2Connection>) {
        self.connection = connection
    }

    // MARK: Reading

    /// Which side of the connection this is.
    @inlinable public var role: HTTP2Connection.Role { connection.pointee.role }
    /// What this side announces and enforces.
    @inlinable public var configuration: HTTP2Connection.Configuration { connection.pointee.configuration }
    /// When the bytes being read arrived (uptime nanoseconds).
    @inlinable public var now: UInt64 { connection.pointee.now }
    /// When the read burst holding the bytes being read began (uptime nanoseconds).
    @inlinable public var readStartedAt: UInt64 { connection.pointee.readStartedAt }
    /// The peer's settings as it last sent them.
    @inlinable public var remoteSettings: HTTP2Settings { connection.pointee.remoteSettings }
    /// Whether the peer's first SETTINGS has arrived.
    @inlinable public var hasPeerSettings: Bool { connection.pointee.hasPeerSettings }
    /// SETTINGS this side sent that the peer has not acknowledged yet.
    @inlinable public var unacknowledgedSettings: Int { connection.pointee.unacknowledgedSettings }
    /// The MAX_CONCURRENT_STREAMS of the last SETTINGS the peer acknowledged.
    @inlinable public var acknowledgedMaxConcurrentStreams: UInt32? {
        connection.pointee.acknowledgedMaxConcurrentStreams
    }
    /// The TLS version, when the connection runs over TLS.
    @inlinable public var tlsVersion: String? { connection.pointee.tlsVersion }
    /// The number of open streams.
    @inlinable public var openStreams: Int { connection.pointee.openStreams }
    /// The concurrent-stream limit in force now.
    @inlinable public var streamLimit: Int { connection.pointee.streamLimit }
    /// How many more streams this side may open now (client).
    @inlinable public var availableStreams: Int { connection.pointee.availableStreams }
    /// Whether `stream` is open.
    @inlinable public func isOpen(_ stream: UInt32) -> Bool { connection.pointee.isOpen(stream) }
    /// What this side may still send on the connection before the peer's next WINDOW_UPDATE.
    @inlinable public var connectionWindow: Int { connection.pointee.connectionWindow }
    /// The bytes queued to send that the owner has not taken out yet: what a call queued is
    /// this after it less this before it (nothing leaves during a call).
    @inlinable public var queuedBytes: Int { connection.pointee.outbound.count }
    /// Body bytes this side has sent in DATA frames.
    @inlinable public var dataBytesSent: Int { connection.pointee.dataBytesSent }
    /// The last stream id in a GOAWAY we received, and in one we sent.
    @inlinable public var receivedGoAway: UInt32? { connection.pointee.receivedGoAway }
    @inlinable public var sentGoAway: UInt32? { connection.pointee.sentGoAway }
    /// Streams the peer opened past the concurrent-stream limit, refused.
    @inlinable public var refusedStreams: Int { connection.pointee.refusedStreams }
    /// Streams the peer opened after it had read this side's GOAWAY.
    @inlinable public var streamsAfterGoAway: Int { connection.pointee.streamsAfterGoAway }
    /// Streams the peer opened in the GOAWAY's race.
    @inlinable public var streamsInGoAwayRace: Int { connection.pointee.streamsInGoAwayRace }
    /// Whether the peer has read this side's GOAWAY.
    @inlinable public var goAwayRead: Bool { connection.pointee.goAwayRead }
    /// The connection error that ended the connection, once it has.
    @inlinable public var error: HTTP2FrameError? { connection.pointee.error }
    /// Whether the connection can carry no more streams and has none open.
    @inlinable public var isFinished: Bool { connection.pointee.isFinished }
    /// Whether `abort()` was called.
    @inlinable public var isAborted: Bool { connection.pointee.isAborted }

    // MARK: Writing

    /// `HTTP2Connection.sendRequest(_:body:tag:)`.
    @inlinable @discardableResult
    public mutating func sendRequest(
        _ fields: some HTTP2HeaderFields,
        body: ByteBuffer?,
        tag: UInt64 = 0
    ) throws(HTTP2Connection.OpenError) -> UInt32 {
        try connection.pointee.sendRequest(fields, body: body, tag: tag)
    }

    /// `HTTP2Connection.sendRequest(_:bodyBytes:tag:)`.
    @inlinable @discardableResult
    public mutating func sendRequest(
        _ fields: some HTTP2HeaderFields,
        bodyBytes body: UnsafeRawBufferPointer,
        tag: UInt64 = 0
    ) throws(HTTP2Connection.OpenError) -> UInt32 {
        try connection.pointee.sendRequest(fields, bodyBytes: body, tag: tag)
    }

    /// `HTTP2Connection.respond(stream:_:body:)`.
    @inlinable @discardableResult
    public mutating func respond(stream: UInt32, _ fields: some HTTP2HeaderFields, body: ByteBuffer?) -> Bool {
        connection.pointee.respond(stream: stream, fields, body: body)
    }

    /// `HTTP2Connection.resetStream(_:code:)`.
    @inlinable public mutating func resetStream(_ stream: UInt32, code: HTTP2ErrorCode = .cancel) {
        connection.pointee.resetStream(stream, code: code)
    }

    /// `HTTP2Connection.resetIncompleteRequests(openedBy:)`.
    @inlinable public mutating func resetIncompleteRequests(
        openedBy cutoff: UInt64
    ) -> (reset: Int, oldestOpenedAt: UInt64?) {
        connection.pointee.resetIncompleteRequests(openedBy: cutoff)
    }

    /// `HTTP2Connection.goAway(code:debugData:)`.
    @inlinable public mutating func goAway(code: HTTP2ErrorCode = .noError, debugData: [UInt8] = []) {
        connection.pointee.goAway(code: code, debugData: debugData)
    }

    /// `HTTP2Connection.ping(opaque:)`.
    @inlinable public mutating func ping(opaque: UInt64) { connection.pointee.ping(opaque: opaque) }

    /// `HTTP2Connection.setMaxConcurrentStreams(_:)`.
    @inlinable public mutating func setMaxConcurrentStreams(_ value: UInt32) {
        connection.pointee.setMaxConcurrentStreams(value)
    }

    /// `HTTP2Connection.recordWindowUpdates()`.
    @inlinable public mutating func recordWindowUpdates() { connection.pointee.recordWindowUpdates() }

    /// `HTTP2Connection.takeWindowUpdates()`.
    @inlinable public mutating func takeWindowUpdates() -> [HTTP2Connection.WindowUpdate] {
        connection.pointee.takeWindowUpdates()
    }

    /// `HTTP2Connection.abort()`: the owner closes the transport without a word.
    @inlinable public mutating func abort() { connection.pointee.abort() }
}

extension HTTP2Connection {
    /// Runs `body` with a writer on this connection: how its owner hands it to a delegate.
    @inlinable
    public mutating func withWriter<Result: ~Copyable, Failure: Error>(
        _ body: (inout HTTP2Writer) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        try withUnsafeMutablePointer(to: &self) { (connection) throws(Failure) -> Result in
            var writer = HTTP2Writer(connection)
            return try body(&writer)
        }
    }
}
