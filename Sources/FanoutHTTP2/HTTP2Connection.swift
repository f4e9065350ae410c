import FanoutHPACK
import NIOCore

/// One side of an HTTP/2 connection (RFC 9113) as a state machine over bytes: received bytes
/// go in through `receive(_:from:pausingAt:_:)`, which answers what the protocol requires by itself
/// (SETTINGS ACK, PING ACK, WINDOW_UPDATE, RST_STREAM, GOAWAY) and hands the application what
/// it must act on; the application's requests and responses go out through
/// `sendRequest` and `respond`. Everything to send accumulates in `outbound`, which the owner
/// moves to its transport once per batch of reads.
///
/// Built for APNs-style traffic: many short POSTs with small bodies, up to ~1000 concurrent
/// streams. Frames are read in place; stream state lives in reused slots, header lists and
/// bodies in memory the slots keep; a message reaches the application as views of those bytes
/// (a body that arrives in one DATA frame, of the received bytes), with no copy and no
/// reference counting between the socket's bytes and the application.
public struct HTTP2Connection: ~Copyable {
    /// Which side of the connection this is.
    public enum Role: Sendable, Hashable {
        case client
        case server
    }

    /// What this side announces and enforces.
    public struct Configuration: Sendable, Hashable {
        /// SETTINGS_MAX_CONCURRENT_STREAMS: streams the peer may open (server). 100 is RFC 9113
        /// §6.5.2's recommended minimum and nghttpd's default.
        public var maxConcurrentStreams: UInt32 = 100
        /// Streams the peer may open before it acknowledges our first SETTINGS, when that should
        /// differ from `maxConcurrentStreams` (a setting is in force once acknowledged: a client
        /// may open streams before it has seen a low limit). `nil`: `maxConcurrentStreams`.
        public var maxConcurrentStreamsBeforeAcknowledgement: UInt32?
        /// The most streams we open at once, whatever the peer allows (client); by default no
        /// cap of our own: the peer's MAX_CONCURRENT_STREAMS alone.
        public var maxOutboundStreams: Int = .max
        /// The peer's limit assumed until its SETTINGS arrive: RFC 9113 §6.5.2's recommended
        /// minimum, as nghttp2 assumes; opening more risks REFUSED_STREAM.
        public var assumedPeerMaxConcurrentStreams: Int = 100
        /// SETTINGS_INITIAL_WINDOW_SIZE: what the peer may send on a stream before we
        /// update the window.
        public var initialWindowSize: UInt32 = 1 << 20
        /// What the peer may send on the connection before we update the window: RFC 9113's
        /// 65,535 or more (a connection window starts at 65,535 and only a WINDOW_UPDATE
        /// raises it; none lowers it).
        public var connectionWindowSize: UInt32 = 16 << 20
        /// When the windows we grant are topped up again (`WindowRefill`): nghttp2's rule,
        /// once half is consumed, by default.
        public var windowRefill: WindowRefill = .half
        /// SETTINGS_MAX_FRAME_SIZE.
        public var maxFrameSize: UInt32 = 16_384
        /// SETTINGS_HEADER_TABLE_SIZE: the dynamic table the peer's encoder may use.
        public var headerTableSize: UInt32 = 4096
        /// The largest dynamic table our encoder uses, whatever the peer allows.
        public var encoderTableSize: Int = 4096
        /// SETTINGS_MAX_HEADER_LIST_SIZE (at most 65,535: lengths are kept in 16 bits).
        public var maxHeaderListSize: UInt32 = 16_384
        /// Body bytes kept per message; `HTTP2Message.bodyLength` still counts all of them.
        public var maxBodySize: Int = 65_536

        // Flood limits: a peer past one gets GOAWAY ENHANCE_YOUR_CALM with the reason. The
        // defaults are nghttp2's.

        /// CONTINUATION frames in one header block (nghttp2: 8, `max_continuations`): empty
        /// ones cost the receiver without growing the block (CVE-2024-27316's family).
        public var maxContinuationFrames: Int = 8
        /// Replies the protocol makes us queue (PING and SETTINGS acknowledgements) while the
        /// peer does not read them (nghttp2: 1000, `max_outbound_ack`).
        public var maxQueuedControlReplies: Int = 1000
        /// RST_STREAM frames a client may send in a burst, and then per second (nghttp2:
        /// `stream_reset_burst` 1000, `stream_reset_rate` 33): open-and-reset in a loop is
        /// rapid reset (CVE-2023-44487). Servers only.
        public var streamResetBurst: Int = 1000
        public var streamResetsPerSecond: Int = 33
        /// Frames a client may send in a row without a request arriving whole (every frame counts,
        /// the one that completes a request too, and those refused on their stream), per
        /// `framesWithoutRequestWindow`: empty DATA, PRIORITY, WINDOW_UPDATE, PING, SETTINGS,
        /// RST_STREAM and unknown types cost us a frame's work each and bring no request closer.
        /// The count and its window start again at each request that arrives whole (the first
        /// window at the preface); when the count passes this limit it starts again only if its
        /// window is over, and otherwise the connection ends with GOAWAY
        /// ENHANCE_YOUR_CALM. So a flood of cheap frames (CVE-2019-9518's family) ends after at
        /// most twice this many, and a connection without requests costs at most this many
        /// frames a window. Servers only.
        ///
        /// 10,000 a 10 s window: a client at a server's 1000 streams that acknowledges every
        /// DATA frame of 1000 answers sends 2000 WINDOW_UPDATEs between two requests, and a
        /// PING every 10 ms is 1000 a window. swift-nio-http2 is stricter (one empty DATA frame
        /// in a row; 200 PING, SETTINGS and PRIORITY frames in 30 s).
        public var maxFramesWithoutRequest: Int = 10_000
        public var framesWithoutRequestWindow: Duration = .seconds(10)
        /// How long the start of a frame may wait for its rest (a peer that sends half a frame
        /// and stalls, or dribbles it a byte at a time, holds a connection and its buffer);
        /// `nil` waits forever. nghttp2 has no such limit of its own; nginx's
        /// `client_header_timeout` and h2o's read timeouts are of this kind.
        public var incompleteFrameTimeout: Duration? = .seconds(30)
        /// The window the delegate's wake-ups are gathered into (`HTTP2ConnectionHandler`): a
        /// wake-up falls on the next multiple of it on the uptime clock, the same instants for
        /// every connection of the process, so work falling due within one window (tickets,
        /// held answers, on every connection of an event loop) is done in one wake of the loop
        /// and written in one write a connection. It delays that work by less than the window;
        /// `.zero` wakes at each delegate's exact time.
        public var wakeUpWindow: Duration = .zero

        public init() {}
    }

    /// When a receiver gives back the window the peer's DATA consumed. The choice is what a
    /// connection far from its peer carries: the peer has at most a window in flight, and a
    /// WINDOW_UPDATE takes a round trip to come back.
    ///
    /// ```
    ///   .half       consumed ≥ window ÷ 2 → WINDOW_UPDATE(consumed)   nghttp2's default (nghttpd, h2load)
    ///   .eachFrame  every DATA frame      → WINDOW_UPDATE(its length)  the window is never short
    /// ```
    ///
    /// With `.half` a peer that keeps the window full gets about half of it back each round trip:
    /// the bytes past the first update stay below the threshold until more arrive (docs/planning.md,
    /// "What binds a connection").
    public enum WindowRefill: String, Sendable, Hashable, CaseIterable {
        case half
        case eachFrame = "each-frame"
    }

    /// Why a stream could not be opened.
    public enum OpenError: Error, Sendable, Hashable {
        /// As many streams are open as the peer's MAX_CONCURRENT_STREAMS (or ours) allows.
        case atCapacity
        /// The peer sent GOAWAY, or we did: no new streams on this connection.
        case goingAway
        /// The connection ended with an error.
        case closed
        /// Stream ids are used up (2^31): open a new connection.
        case streamIDsExhausted
    }

    public let role: Role
    public let configuration: Configuration
    /// The peer's settings in force.
    public internal(set) var remoteSettings = HTTP2Settings()
    /// Over TLS, the version the handshake chose (`TLSv1.3`), set before the delegate hears
    /// `tlsEstablished`; `nil` over cleartext.
    public internal(set) var tlsVersion: String?
    /// Bytes to send, in memory the connection owns: frames go in with plain stores. The owner
    /// moves them to its transport (`moveOutbound(into:)`) once per batch of reads.
    public internal(set) var outbound: OutputBuffer

    var frameDecoder: HTTP2FrameDecoder
    var hpackDecoder: HPACKDecoder
    var hpackEncoder: HPACKEncoder
    var streams: HTTP2StreamTable
    /// MAX_CONCURRENT_STREAMS as enforced: raised at once, lowered when the peer ACKs; one
    /// entry per SETTINGS frame sent and not yet acknowledged.
    var enforcedMaxConcurrentStreams: UInt32
    var unacknowledgedMaxConcurrentStreams: [UInt32] = []
    var prefaceReceived = false
    /// Until the peer acknowledges our SETTINGS it may use RFC 9113's default window.
    var localSettingsAcknowledged = false
    var settingsReceived = false
    var highestPeerStream: UInt32 = 0
    var nextStreamID: UInt32
    var connectionSendWindow = 65_535
    var connectionReceiveWindow: Int
    var connectionConsumed = 0
    /// Streams with body bytes waiting for the connection window, oldest first.
    var blocked: [UInt32] = []
    var blockedHead = 0
    /// Entries of `blocked` whose stream closed while it waited: dropped when they would be half
    /// of the list, so a peer that keeps the window shut and resets every stream cannot grow it.
    var staleBlocked = 0
    /// Control replies written since the owner last saw them delivered (`controlRepliesDelivered`).
    var queuedControlReplies = 0
    /// Frames received since a request last arrived whole or the count last started again
    /// (`Configuration.maxFramesWithoutRequest`), that limit (`Int.max` for a client), and
    /// when the count last started again.
    var framesWithoutRequest = 0
    let framesWithoutRequestLimit: Int
    let framesWithoutRequestWindow: UInt64
    var framesWithoutRequestSince: UInt64 = 0
    /// The reset budget (a token bucket, in resets) and when it was last refilled.
    var resetBudget: Double
    var resetBudgetRefilledAt: UInt64 = 0
    /// When the bytes being read arrived (uptime nanoseconds): told by the owner before
    /// `receive(_:from:pausingAt:_:)` (`bytesArrived(at:beginningBurst:)`); it refills the reset budget.
    public private(set) var now: UInt64 = 0
    /// When the read burst holding the bytes being read began (uptime nanoseconds): its first
    /// read's `now`. What an event waited between then and its handling is the reader's own
    /// delay (earlier frames of the burst were handled first), not the peer's.
    public private(set) var readStartedAt: UInt64 = 0
    /// An empty buffer made once per connection: what a slot holds while its own buffer of
    /// bytes to send is taken out. (`ByteBuffer()` reaches NIO's shared empty
    /// storage through a lazily made global: a `swift_once` each time.)
    let emptyBuffer: ByteBuffer
    /// Where a header block's fields are decoded before they go to their stream's buffer in one
    /// write: room for the largest list the HPACK decoder lets through (it counts a field as
    /// name + value + 32 bytes; its record takes name + value + 4). Owned by the connection.
    let decodedFields: UnsafeMutableRawBufferPointer
    /// Where an outgoing header block is encoded before its frame goes into `outbound` in one
    /// write. Owned by the connection and reused.
    var headerBlock = OutputBuffer()
    /// Events produced by one frame beyond the first (GOAWAY refusing many streams).
    var queuedEvents: [HTTP2Event] = []
    var queuedHead = 0
    /// The last stream id in a GOAWAY we received, and in one we sent.
    public internal(set) var receivedGoAway: UInt32?
    public internal(set) var sentGoAway: UInt32?
    /// Streams the peer opened past the concurrent-stream limit, refused (REFUSED_STREAM).
    public internal(set) var refusedStreams = 0
    /// Streams the peer opened after it had read this side's GOAWAY (it acknowledged the PING
    /// written in front of it, in the same write): ignored, as RFC 9113 §6.8 allows, and a
    /// fault of the peer's.
    public internal(set) var streamsAfterGoAway = 0
    /// Streams the peer opened after this side's GOAWAY left but before the peer could have
    /// read it (no acknowledgement yet of the PING behind it): ignored too, and no fault —
    /// they were on the wire when the GOAWAY was (RFC 9113 §6.8's race).
    public internal(set) var streamsInGoAwayRace = 0
    /// Whether the peer has read this side's GOAWAY: it acknowledged the PING written in front
    /// of it (the two go in one write and are read in one read).
    public internal(set) var goAwayRead = false
    /// The opaque data of the PING a server writes right in front of its GOAWAY: "GOAWAY?!".
    public static let goAwayPingOpaque: UInt64 = 0x474F_4157_4159_3F21
    /// The MAX_CONCURRENT_STREAMS of the last SETTINGS the peer acknowledged; `nil` before its
    /// first acknowledgement (until then it may not know any limit: RFC 9113 §6.5.3).
    public internal(set) var acknowledgedMaxConcurrentStreams: UInt32?
    /// The bytes about to be received (`receive(_:from:pausingAt:_:)`) arrived at `now` (uptime
    /// nanoseconds); `beginningBurst`: they are a read burst's first, so `readStartedAt` is
    /// `now` too (said each time: a read within a burst that reset it would hide the reader's
    /// own delay).
    public mutating func bytesArrived(at now: UInt64, beginningBurst: Bool) {
        self.now = now
        if beginningBurst { readStartedAt = now }
    }

    /// From now on, keeps the WINDOW_UPDATEs the peer sends (`windowUpdates`).
    public mutating func recordWindowUpdates() { recordsWindowUpdates = true }

    /// SETTINGS this side sent that the peer has not acknowledged yet (its initial one
    /// included): a server that changes its limits mid-connection bounds them by this.
    public var unacknowledgedSettings: Int { unacknowledgedMaxConcurrentStreams.count }
    /// The WINDOW_UPDATEs the peer sent since the owner last took them (`takeWindowUpdates`),
    /// when `recordsWindowUpdates` (the probe's record of how a server refills its windows);
    /// empty otherwise.
    public internal(set) var windowUpdates: [WindowUpdate] = []
    /// Whether to keep `windowUpdates` (`recordWindowUpdates()`).
    public private(set) var recordsWindowUpdates = false
    /// A WINDOW_UPDATE received: when (`now` as its read set it), on which stream (0: the
    /// connection), by how much, and what our send window on the connection was then.
    public struct WindowUpdate: Sendable, Hashable {
        public var at: UInt64
        public var stream: UInt32
        public var increment: Int
        public var connectionWindowAfter: Int
    }
    /// Hands over the WINDOW_UPDATEs recorded since the last call: what is kept never grows
    /// past what arrived between two calls.
    public mutating func takeWindowUpdates() -> [WindowUpdate] {
        defer { windowUpdates.removeAll(keepingCapacity: true) }
        return windowUpdates
    }

    /// What this side may still send on the connection before the peer's next WINDOW_UPDATE.
    public var connectionWindow: Int { connectionSendWindow }
    /// Body bytes this side has sent in DATA frames (flow-controlled bytes, padding aside).
    public internal(set) var dataBytesSent = 0
    /// The connection error that ended the connection, once it has.
    public internal(set) var error: HTTP2FrameError?

    /// Creates a connection and writes what this side sends first (the client preface,
    /// SETTINGS and a connection WINDOW_UPDATE) into `outbound`.
    public init(role: Role, configuration: Configuration = Configuration(), allocator: ByteBufferAllocator = .init()) {
        precondition(configuration.maxHeaderListSize <= 65_535, "maxHeaderListSize is kept in 16 bits")
        self.role = role
        self.configuration = configuration
        outbound = OutputBuffer(capacity: 64 * 1024)
        emptyBuffer = allocator.buffer(capacity: 0)
        decodedFields = .allocate(byteCount: Int(configuration.maxHeaderListSize), alignment: 1)
        frameDecoder = HTTP2FrameDecoder(
            maxFrameSize: Int(configuration.maxFrameSize),
            maxHeaderBlockSize: Int(configuration.maxHeaderListSize) * 2,
            maxContinuationFrames: configuration.maxContinuationFrames
        )
        hpackDecoder = HPACKDecoder(
            maximumTableSize: Int(configuration.headerTableSize),
            maximumHeaderListSize: Int(configuration.maxHeaderListSize)
        )
        hpackEncoder = HPACKEncoder(maximumTableSize: min(4096, configuration.encoderTableSize))
        if configuration.encoderTableSize < 4096 { hpackEncoder.setMaximumTableSize(configuration.encoderTableSize) }
        let expected = role == .server ? Int(configuration.maxConcurrentStreams) : configuration.maxOutboundStreams
        streams = HTTP2StreamTable(expectedStreams: min(expected, 4096))
        enforcedMaxConcurrentStreams =
            configuration.maxConcurrentStreamsBeforeAcknowledgement ?? configuration.maxConcurrentStreams
        // Each SETTINGS we send is acknowledged in turn; this entry is for the first.
        unacknowledgedMaxConcurrentStreams = [configuration.maxConcurrentStreams]
        nextStreamID = role == .client ? 1 : 2
        connectionReceiveWindow = Int(configuration.connectionWindowSize)
        prefaceReceived = role == .client
        resetBudget = Double(configuration.streamResetBurst)
        framesWithoutRequestLimit = role == .server ? max(1, configuration.maxFramesWithoutRequest) : .max
        framesWithoutRequestWindow = UInt64(max(0, TimeAmount(configuration.framesWithoutRequestWindow).nanoseconds))

        if role == .client { http2ConnectionPreface.withUnsafeBytes { outbound.write($0) } }
        var settings = [HTTP2Setting]()
        if role == .client { settings.append(.init(.enablePush, 0)) }
        if role == .server { settings.append(.init(.maxConcurrentStreams, configuration.maxConcurrentStreams)) }
        settings.append(.init(.initialWindowSize, configuration.initialWindowSize))
        if configuration.maxFrameSize != 16_384 { settings.append(.init(.maxFrameSize, configuration.maxFrameSize)) }
        if configuration.headerTableSize != 4096 {
            settings.append(.init(.headerTableSize, configuration.headerTableSize))
        }
        settings.append(.init(.maxHeaderListSize, configuration.maxHeaderListSize))
        HTTP2FrameEncoder.writeSettings(settings, into: &outbound)
        if configuration.connectionWindowSize > 65_535 {
            HTTP2FrameEncoder.writeWindowUpdate(
                stream: 0,
                increment: configuration.connectionWindowSize - 65_535,
                into: &outbound
            )
        } else {
            connectionReceiveWindow = 65_535
        }
        blocked.reserveCapacity(64)
    }

    deinit {
        decodedFields.deallocate()
    }

    /// The number of open streams.
    public var openStreams: Int { streams.count }
    /// The concurrent-stream limit in force now (what a new peer stream is refused past).
    public var streamLimit: Int { Int(enforcedMaxConcurrentStreams) }

    /// Appends what is queued to send to `buffer` and empties `outbound`, keeping its memory:
    /// one copy and one `ByteBuffer` write per batch, however many frames it holds.
    public mutating func moveOutbound(into buffer: inout ByteBuffer) {
        buffer.writeBytes(outbound.bytes)
        outbound.clear()
    }

    /// What is queued to send, taken out into a buffer of its own (which it allocates: for tools
    /// and tests).
    public mutating func takeOutbound() -> ByteBuffer {
        var buffer = ByteBuffer()
        moveOutbound(into: &buffer)
        return buffer
    }

    /// Tells the connection that what it queued has reached the peer's side of the socket (the
    /// owner calls it when the channel is writable after a write): the control replies it
    /// counts towards `maxQueuedControlReplies` start again from zero.
    public mutating func controlRepliesDelivered() {
        queuedControlReplies = 0
    }

    /// Whether `stream` is open (a reset or answered one is not).
    public func isOpen(_ stream: UInt32) -> Bool { streams.slot(of: stream) != nil }

    /// Streams waiting for the connection's send window (those closed while waiting included,
    /// until they are dropped).
    var blockedStreams: Int { blocked.count - blockedHead }

    /// How many more streams this side may open now (client).
    public var availableStreams: Int {
        guard receivedGoAway == nil, sentGoAway == nil, error == nil else { return 0 }
        let peerLimit =
            settingsReceived
            ? remoteSettings.maxConcurrentStreams.map { Int($0) } ?? Int.max
            : configuration.assumedPeerMaxConcurrentStreams
        return max(0, min(peerLimit, configuration.maxOutboundStreams) - streams.count)
    }

    /// Whether the SETTINGS exchange is still incomplete: the peer's SETTINGS, or its ACK of
    /// ours, has not arrived.
    public var isAwaitingSettings: Bool { !settingsReceived || !localSettingsAcknowledged }

    /// Whether the peer's first SETTINGS has arrived: the peer is there and speaks HTTP/2.
    public var hasPeerSettings: Bool { settingsReceived }

    /// Ends the connection with SETTINGS_TIMEOUT if the SETTINGS exchange is still incomplete
    /// (RFC 9113 §6.5.3); the owner calls this when its timer fires.
    public mutating func settingsTimerExpired() -> HTTP2Event? {
        guard error == nil, isAwaitingSettings else { return nil }
        let missing = settingsReceived ? "the peer did not acknowledge our SETTINGS" : "the peer sent no SETTINGS"
        return fail(.settingsTimeout, missing)
    }

    /// Ends the connection with GOAWAY ENHANCE_YOUR_CALM: the owner has held the start of a
    /// frame for `incompleteFrameTimeout` without the rest arriving.
    public mutating func incompleteFrameTimerExpired(waiting bytes: Int) -> HTTP2Event? {
        guard error == nil, let timeout = configuration.incompleteFrameTimeout else { return nil }
        return fail(.enhanceYourCalm, "\(bytes) bytes of a frame waited \(timeout) for the rest")
    }

    /// Whether the connection can carry no more streams and has none open: time to close it.
    public var isFinished: Bool {
        isAborted || error != nil || ((receivedGoAway != nil || sentGoAway != nil) && streams.count == 0)
    }

    /// Whether `abort()` was called: the owner closes the transport without a word.
    public internal(set) var isAborted = false

    /// Marks the connection for an abrupt close: what is already queued is written (it was
    /// said: a sink counted those answers), then the transport closes without GOAWAY and open
    /// streams stay unanswered (a fault a sink injects to test a client's recovery).
    public mutating func abort() {
        isAborted = true
    }
}
