import NIOCore

/// One side of an HTTP/2 connection (RFC 9113) as a state machine over bytes: received bytes
/// go in through `nextEvent(from:)`, which answers what the protocol requires by itself
/// (SETTINGS ACK, PING ACK, WINDOW_UPDATE, RST_STREAM, GOAWAY) and returns what the
/// application must act on; the application's requests and responses go out through
/// `sendRequest` and `respond`. Everything to send accumulates in `outbound`, which the owner
/// writes and clears, once per batch of reads.
///
/// Built for APNs-style traffic: many short POSTs with small bodies, up to ~1000 concurrent
/// streams. Stream state lives in reused slots, header lists and bodies in reused buffers; a
/// body that arrives in one DATA frame is handed over as a slice of the received bytes.
public struct HTTP2Connection {
    /// Which side of the connection this is.
    public enum Role: Sendable, Hashable {
        case client
        case server
    }

    /// What this side announces and enforces.
    public struct Configuration: Sendable, Hashable {
        /// SETTINGS_MAX_CONCURRENT_STREAMS: streams the peer may open (server).
        public var maxConcurrentStreams: UInt32 = 1000
        /// Streams the peer may open before it acknowledges our first SETTINGS, when that should
        /// differ from `maxConcurrentStreams` (a setting is in force once acknowledged: a client
        /// may open streams before it has seen a low limit). `nil`: `maxConcurrentStreams`.
        public var maxConcurrentStreamsBeforeAcknowledgement: UInt32?
        /// The most streams we open at once, whatever the peer allows (client).
        public var maxOutboundStreams: Int = 1000
        /// The peer's limit assumed until its SETTINGS arrive: RFC 9113 §6.5.2's recommended
        /// minimum, as nghttp2 assumes; opening more risks REFUSED_STREAM.
        public var assumedPeerMaxConcurrentStreams: Int = 100
        /// SETTINGS_INITIAL_WINDOW_SIZE: what the peer may send on a stream before we
        /// update the window.
        public var initialWindowSize: UInt32 = 1 << 20
        /// What the peer may send on the connection before we update the window.
        public var connectionWindowSize: UInt32 = 16 << 20
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

        public init() {}
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
    public private(set) var remoteSettings = HTTP2Settings()
    /// Bytes to send: the owner writes them and then clears the buffer (keeping its storage).
    public var outbound: ByteBuffer

    private var frameDecoder: HTTP2FrameDecoder
    private var hpackDecoder: HPACKDecoder
    private var hpackEncoder: HPACKEncoder
    private var streams: HTTP2StreamTable
    /// MAX_CONCURRENT_STREAMS as enforced: raised at once, lowered when the peer ACKs; one
    /// entry per SETTINGS frame sent and not yet acknowledged.
    private var enforcedMaxConcurrentStreams: UInt32
    private var unacknowledgedMaxConcurrentStreams: [UInt32] = []
    private var prefaceReceived = false
    /// Until the peer acknowledges our SETTINGS it may use RFC 9113's default window.
    private var localSettingsAcknowledged = false
    private var settingsReceived = false
    private var highestPeerStream: UInt32 = 0
    private var nextStreamID: UInt32
    private var connectionSendWindow = 65_535
    private var connectionReceiveWindow: Int
    private var connectionConsumed = 0
    /// Streams with body bytes waiting for the connection window, oldest first.
    private var blocked: [UInt32] = []
    private var blockedHead = 0
    /// Events produced by one frame beyond the first (GOAWAY refusing many streams).
    private var queuedEvents: [HTTP2Event] = []
    private var queuedHead = 0
    /// The last stream id in a GOAWAY we received, and in one we sent.
    public private(set) var receivedGoAway: UInt32?
    public private(set) var sentGoAway: UInt32?
    /// The connection error that ended the connection, once it has.
    public private(set) var error: HTTP2FrameError?

    /// Creates a connection and writes what this side sends first (the client preface,
    /// SETTINGS and a connection WINDOW_UPDATE) into `outbound`.
    public init(role: Role, configuration: Configuration = Configuration(), allocator: ByteBufferAllocator = .init()) {
        precondition(configuration.maxHeaderListSize <= 65_535, "maxHeaderListSize is kept in 16 bits")
        self.role = role
        self.configuration = configuration
        outbound = allocator.buffer(capacity: 64 * 1024)
        frameDecoder = HTTP2FrameDecoder(
            maxFrameSize: Int(configuration.maxFrameSize),
            maxHeaderBlockSize: Int(configuration.maxHeaderListSize) * 2
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

        if role == .client { outbound.writeBytes(http2ConnectionPreface) }
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

    /// The number of open streams.
    public var openStreams: Int { streams.count }

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

    /// Ends the connection with SETTINGS_TIMEOUT if the SETTINGS exchange is still incomplete
    /// (RFC 9113 §6.5.3); the owner calls this when its timer fires.
    public mutating func settingsTimerExpired() -> HTTP2Event? {
        guard error == nil, isAwaitingSettings else { return nil }
        let missing = settingsReceived ? "the peer did not acknowledge our SETTINGS" : "the peer sent no SETTINGS"
        return fail(.settingsTimeout, missing)
    }

    /// Whether the connection can carry no more streams and has none open: time to close it.
    public var isFinished: Bool {
        isAborted || error != nil || ((receivedGoAway != nil || sentGoAway != nil) && streams.count == 0)
    }

    /// Whether `abort()` was called: the owner closes the transport without a word.
    public private(set) var isAborted = false

    /// Marks the connection for an abrupt close: what is already queued is written (it was
    /// said: a sink counted those answers), then the transport closes without GOAWAY and open
    /// streams stay unanswered (a fault a sink injects to test a client's recovery).
    public mutating func abort() {
        isAborted = true
    }
}

// MARK: - Receiving

extension HTTP2Connection {
    /// Processes frames from `buffer` until one needs the application, and returns that
    /// event; `nil` when `buffer` holds no more whole frames. Slices in the event refer to
    /// `buffer`'s bytes and to reused storage: use them before the next call.
    public mutating func nextEvent(from buffer: inout ByteBuffer) -> HTTP2Event? {
        if queuedHead < queuedEvents.count { return dequeueEvent() }
        guard error == nil else {
            buffer.moveReaderIndex(to: buffer.writerIndex)
            return nil
        }
        if !prefaceReceived {
            guard buffer.readableBytes >= http2ConnectionPreface.count else {
                let partial = buffer.readableBytesView.elementsEqual(
                    http2ConnectionPreface.prefix(buffer.readableBytes)
                )
                return partial ? nil : fail(.protocolError, "the client did not send the HTTP/2 connection preface")
            }
            guard buffer.readableBytesView.prefix(http2ConnectionPreface.count).elementsEqual(http2ConnectionPreface)
            else { return fail(.protocolError, "the client did not send the HTTP/2 connection preface") }
            buffer.moveReaderIndex(forwardBy: http2ConnectionPreface.count)
            prefaceReceived = true
        }
        while true {
            let frame: HTTP2Frame?
            do {
                frame = try frameDecoder.nextFrame(from: &buffer)
            } catch {
                if let stream = error.stream {
                    if let event = streamError(stream, error.code) { return event }
                    continue
                }
                return fail(error)
            }
            guard let frame else { return nil }
            if let event = handle(frame) { return event }
            if self.error != nil { return nil }
        }
    }

    private mutating func dequeueEvent() -> HTTP2Event {
        let event = queuedEvents[queuedHead]
        queuedHead += 1
        if queuedHead == queuedEvents.count {
            queuedEvents.removeAll(keepingCapacity: true)
            queuedHead = 0
        }
        return event
    }

    private mutating func handle(_ frame: HTTP2Frame) -> HTTP2Event? {
        if !settingsReceived {
            guard case .settings = frame else {
                return fail(.protocolError, "the peer's first frame is not SETTINGS")
            }
        }
        switch frame {
        case .data(let stream, let payload, let endStream, let flowControlledLength):
            return receiveData(stream, payload, endStream, flowControlledLength)
        case .headers(let stream, let block, let endStream):
            return receiveHeaders(stream, block, endStream)
        case .priority:
            return nil
        case .rstStream(let stream, let code):
            if let slot = streams.slot(of: stream) {
                let tag = streams[slot].tag
                close(slot)
                return .streamReset(stream: stream, tag: tag, code: code, byPeer: true)
            }
            if isIdle(stream) { return fail(.protocolError, "RST_STREAM on idle stream \(stream)") }
            return nil
        case .settings(let settings):
            return receiveSettings(settings)
        case .settingsAck:
            localSettingsAcknowledged = true
            if !unacknowledgedMaxConcurrentStreams.isEmpty {
                enforcedMaxConcurrentStreams = unacknowledgedMaxConcurrentStreams.removeFirst()
            }
            return nil
        case .ping(let opaque, let ack):
            if ack { return .pingAcknowledged(opaque: opaque) }
            HTTP2FrameEncoder.writePing(opaque: opaque, ack: true, into: &outbound)
            return nil
        case .goAway(let lastStream, let code, let debugData):
            return receiveGoAway(lastStream, code, debugData)
        case .windowUpdate(let stream, let increment):
            return receiveWindowUpdate(stream, Int(increment))
        }
    }

    /// Whether `stream` is one neither side has opened yet (RFC 9113 §5.1).
    private func isIdle(_ stream: UInt32) -> Bool {
        let peerInitiated = (stream & 1 == 1) == (role == .server)
        return peerInitiated ? stream > highestPeerStream : stream >= nextStreamID
    }

    private mutating func receiveHeaders(_ stream: UInt32, _ block: ByteBuffer, _ endStream: Bool) -> HTTP2Event? {
        let peerInitiated = (stream & 1 == 1) == (role == .server)
        if let slot = streams.slot(of: stream) {
            guard streams[slot].remoteOpen else {
                if let failure = discard(block) { return failure }
                return streamError(stream, .streamClosed)
            }
            if streams[slot].headersReceived {
                // Trailers: they end the stream and carry no pseudo-header fields.
                guard endStream else {
                    _ = discard(block)
                    return streamError(stream, .protocolError)
                }
                if let failure = decode(block, into: slot, kind: .trailers) { return failure }
                return endOfMessage(slot, body: nil)
            }
            let kind: HeaderListValidator.Kind = role == .server ? .request : .response
            if let failure = decode(block, into: slot, kind: kind) { return failure }
            if role == .client && (100..<200).contains(streams[slot].status) {
                // An informational response: the final one follows.
                guard !endStream else { return streamError(stream, .protocolError) }
                streams[slot].headers.clear()
                return nil
            }
            streams[slot].headersReceived = true
            return endStream ? endOfMessage(slot, body: nil) : nil
        }
        guard peerInitiated, role == .server else {
            if let failure = discard(block) { return failure }
            if stream & 1 == 0 || isIdle(stream) {
                return fail(.protocolError, "HEADERS on stream \(stream), which this client did not open")
            }
            return nil  // A response on a stream we reset: ignored.
        }
        guard stream > highestPeerStream else {
            if let failure = discard(block) { return failure }
            return fail(.streamClosed, "HEADERS on closed stream \(stream)")
        }
        highestPeerStream = stream
        if sentGoAway != nil { return discard(block) }
        guard streams.count < enforcedMaxConcurrentStreams else {
            if let failure = discard(block) { return failure }
            return streamError(stream, .refusedStream)
        }
        let window = Int(configuration.initialWindowSize)
        let slot = streams.open(
            id: stream,
            tag: 0,
            sendWindow: Int(remoteSettings.initialWindowSize),
            receiveWindow: localSettingsAcknowledged ? window : max(window, 65_535)
        )
        if let failure = decode(block, into: slot, kind: .request) { return failure }
        streams[slot].headersReceived = true
        return endStream ? endOfMessage(slot, body: nil) : nil
    }

    /// Decodes a header block into the stream's list. A malformed list resets the stream
    /// (the slot is then free: callers check the id); an HPACK failure ends the connection.
    private mutating func decode(_ block: ByteBuffer, into slot: Int, kind: HeaderListValidator.Kind) -> HTTP2Event? {
        var validator = HeaderListValidator(kind: kind)
        var storage = streams[slot].headers
        streams[slot].headers = ByteBuffer()
        let outcome: HPACKError? = block.withUnsafeReadableBytes { bytes in
            do throws(HPACKError) {
                try hpackDecoder.decode(bytes) { name, value, _ in
                    validator.check(name: name, value: value)
                    HTTP2HeaderList.append(name: name, value: value, to: &storage)
                }
                return nil
            } catch {
                return error
            }
        }
        streams[slot].headers = storage
        if let outcome { return fail(.compressionError, "HPACK: \(outcome)") }
        let stream = streams[slot].id
        if validator.finish() != nil { return streamError(stream, .protocolError) }
        if kind != .trailers {
            streams[slot].status = validator.status
            streams[slot].contentLength = validator.contentLength
        }
        return nil
    }

    /// Decodes a header block only to keep the HPACK state in step with the peer.
    private mutating func discard(_ block: ByteBuffer) -> HTTP2Event? {
        let outcome: HPACKError? = block.withUnsafeReadableBytes { bytes in
            do throws(HPACKError) {
                try hpackDecoder.decode(bytes) { _, _, _ in }
                return nil
            } catch {
                return error
            }
        }
        if let outcome { return fail(.compressionError, "HPACK: \(outcome)") }
        return nil
    }

    private mutating func receiveData(
        _ stream: UInt32,
        _ payload: ByteBuffer,
        _ endStream: Bool,
        _ flowControlledLength: Int
    ) -> HTTP2Event? {
        guard flowControlledLength <= connectionReceiveWindow else {
            return fail(.flowControlError, "DATA of \(flowControlledLength) bytes over the connection window")
        }
        connectionReceiveWindow -= flowControlledLength
        connectionConsumed += flowControlledLength
        if connectionConsumed >= Int(configuration.connectionWindowSize) / 2 {
            HTTP2FrameEncoder.writeWindowUpdate(stream: 0, increment: UInt32(connectionConsumed), into: &outbound)
            connectionReceiveWindow += connectionConsumed
            connectionConsumed = 0
        }
        guard let slot = streams.slot(of: stream) else {
            if isIdle(stream) { return fail(.protocolError, "DATA on idle stream \(stream)") }
            return streamError(stream, .streamClosed)
        }
        guard streams[slot].remoteOpen, streams[slot].headersReceived else {
            return streamError(stream, streams[slot].remoteOpen ? .protocolError : .streamClosed)
        }
        guard flowControlledLength <= streams[slot].receiveWindow else {
            return streamError(stream, .flowControlError)
        }
        streams[slot].receiveWindow -= flowControlledLength
        streams[slot].bodyLength += payload.readableBytes
        if endStream && streams[slot].body.readableBytes == 0 {
            return endOfMessage(slot, body: payload)
        }
        let room = configuration.maxBodySize - streams[slot].body.readableBytes
        if room > 0 {
            var payload = payload
            if payload.readableBytes > room { payload = payload.getSlice(at: payload.readerIndex, length: room)! }
            streams[slot].body.writeImmutableBuffer(payload)
        }
        if endStream { return endOfMessage(slot, body: nil) }
        let initial = Int(configuration.initialWindowSize)
        if streams[slot].receiveWindow < initial / 2 {
            HTTP2FrameEncoder.writeWindowUpdate(
                stream: stream,
                increment: UInt32(initial - streams[slot].receiveWindow),
                into: &outbound
            )
            streams[slot].receiveWindow = initial
        }
        return nil
    }

    /// The peer ended its side of the stream: the message is whole.
    private mutating func endOfMessage(_ slot: Int, body: ByteBuffer?) -> HTTP2Event? {
        let stream = streams[slot].id
        if let expected = streams[slot].contentLength, expected != streams[slot].bodyLength {
            return streamError(stream, .protocolError)
        }
        streams[slot].remoteOpen = false
        let message = HTTP2Message(
            stream: stream,
            tag: streams[slot].tag,
            status: streams[slot].status,
            headers: HTTP2HeaderList(storage: streams[slot].headers),
            body: body ?? streams[slot].body,
            bodyLength: streams[slot].bodyLength
        )
        if !streams[slot].localOpen { close(slot) }
        return .message(message)
    }

    private mutating func receiveSettings(_ settings: [HTTP2Setting]) -> HTTP2Event? {
        settingsReceived = true
        let oldWindow = Int(remoteSettings.initialWindowSize)
        let oldTableSize = remoteSettings.headerTableSize
        for setting in settings {
            do {
                try remoteSettings.apply(setting)
            } catch {
                return fail(error)
            }
        }
        let delta = Int(remoteSettings.initialWindowSize) - oldWindow
        if delta != 0 {
            for slot in streams.openSlots {
                streams[slot].sendWindow += delta
                if streams[slot].sendWindow > 0x7FFF_FFFF {
                    return fail(.flowControlError, "SETTINGS_INITIAL_WINDOW_SIZE took a stream window over 2^31-1")
                }
            }
        }
        if remoteSettings.headerTableSize != oldTableSize {
            hpackEncoder.setMaximumTableSize(min(Int(remoteSettings.headerTableSize), configuration.encoderTableSize))
        }
        HTTP2FrameEncoder.writeSettingsAck(into: &outbound)
        if delta > 0 {
            for slot in streams.openSlots where streams[slot].pending.readableBytes > 0 {
                enqueueBlocked(slot)
            }
            flushBlocked()
        }
        return .remoteSettingsChanged(remoteSettings)
    }

    private mutating func receiveGoAway(
        _ lastStream: UInt32,
        _ code: HTTP2ErrorCode,
        _ debugData: ByteBuffer
    ) -> HTTP2Event? {
        receivedGoAway = min(lastStream, receivedGoAway ?? lastStream)
        // Streams we opened above `lastStream` were not processed: they may be sent again.
        for slot in streams.openSlots {
            let stream = streams[slot].id
            let ours = (stream & 1 == 1) == (role == .client)
            guard ours, stream > lastStream else { continue }
            queuedEvents.append(
                .streamReset(stream: stream, tag: streams[slot].tag, code: .refusedStream, byPeer: true)
            )
            close(slot)
        }
        queuedEvents.sort { lhs, rhs in
            guard case .streamReset(let left, _, _, _) = lhs, case .streamReset(let right, _, _, _) = rhs else {
                return false
            }
            return left < right
        }
        return .goAway(lastStream: lastStream, code: code, debugData: debugData)
    }

    private mutating func receiveWindowUpdate(_ stream: UInt32, _ increment: Int) -> HTTP2Event? {
        if stream == 0 {
            connectionSendWindow += increment
            guard connectionSendWindow <= 0x7FFF_FFFF else {
                return fail(.flowControlError, "WINDOW_UPDATE took the connection window over 2^31-1")
            }
            flushBlocked()
            return nil
        }
        guard let slot = streams.slot(of: stream) else {
            if isIdle(stream) { return fail(.protocolError, "WINDOW_UPDATE on idle stream \(stream)") }
            return nil
        }
        streams[slot].sendWindow += increment
        guard streams[slot].sendWindow <= 0x7FFF_FFFF else { return streamError(stream, .flowControlError) }
        if streams[slot].pending.readableBytes > 0 && !streams[slot].queued { resumeSending(slot) }
        return nil
    }

    /// A stream error (RFC 9113 §5.4.2): RST_STREAM, and the stream is gone.
    private mutating func streamError(_ stream: UInt32, _ code: HTTP2ErrorCode) -> HTTP2Event? {
        HTTP2FrameEncoder.writeRstStream(stream: stream, code: code, into: &outbound)
        guard let slot = streams.slot(of: stream) else { return nil }
        let tag = streams[slot].tag
        close(slot)
        return .streamReset(stream: stream, tag: tag, code: code, byPeer: false)
    }

    /// A connection error (RFC 9113 §5.4.1): GOAWAY with the reason as debug data.
    private mutating func fail(_ code: HTTP2ErrorCode, _ reason: String) -> HTTP2Event? {
        fail(HTTP2FrameError(code, reason))
    }

    private mutating func fail(_ error: HTTP2FrameError) -> HTTP2Event? {
        self.error = error
        let reason = Array(error.reason.utf8)
        reason.withUnsafeBytes { reason in
            HTTP2FrameEncoder.writeGoAway(
                lastStream: highestPeerStream,
                code: error.code,
                debugData: reason,
                into: &outbound
            )
        }
        sentGoAway = highestPeerStream
        return .connectionError(error)
    }
}

// MARK: - Sending

extension HTTP2Connection {
    /// Opens a stream with a request (client): HEADERS, then `body` as DATA as far as flow
    /// control allows (the rest follows as the peer opens its windows). `tag` comes back with
    /// the response. Returns the stream id.
    @discardableResult
    public mutating func sendRequest(
        _ fields: some HTTP2HeaderFields,
        body: ByteBuffer?,
        tag: UInt64 = 0
    ) throws(OpenError) -> UInt32 {
        guard error == nil else { throw .closed }
        guard receivedGoAway == nil, sentGoAway == nil else { throw .goingAway }
        guard availableStreams > 0 else { throw .atCapacity }
        guard nextStreamID <= 0x7FFF_FFFF else { throw .streamIDsExhausted }
        let stream = nextStreamID
        nextStreamID += 2
        let slot = streams.open(
            id: stream,
            tag: tag,
            sendWindow: Int(remoteSettings.initialWindowSize),
            receiveWindow: Int(configuration.initialWindowSize)
        )
        send(slot, fields, body: body)
        return stream
    }

    /// Answers a request (server): HEADERS, then `body` as DATA. Returns false when the stream
    /// is no longer open (the peer reset it).
    @discardableResult
    public mutating func respond(stream: UInt32, _ fields: some HTTP2HeaderFields, body: ByteBuffer?) -> Bool {
        guard error == nil, let slot = streams.slot(of: stream), streams[slot].localOpen else { return false }
        send(slot, fields, body: body)
        return true
    }

    /// Resets a stream (RST_STREAM), e.g. when a response is overdue.
    public mutating func resetStream(_ stream: UInt32, code: HTTP2ErrorCode = .cancel) {
        guard error == nil, let slot = streams.slot(of: stream) else { return }
        HTTP2FrameEncoder.writeRstStream(stream: stream, code: code, into: &outbound)
        close(slot)
    }

    /// Sends GOAWAY: no new streams; the open ones finish. `debugData` is free text (APNs
    /// sends `{"reason":"…"}`).
    public mutating func goAway(code: HTTP2ErrorCode = .noError, debugData: [UInt8] = []) {
        guard error == nil else { return }
        debugData.withUnsafeBytes { debugData in
            HTTP2FrameEncoder.writeGoAway(
                lastStream: highestPeerStream,
                code: code,
                debugData: debugData,
                into: &outbound
            )
        }
        sentGoAway = highestPeerStream
    }

    /// Sends PING; `.pingAcknowledged(opaque:)` follows.
    public mutating func ping(opaque: UInt64) {
        guard error == nil else { return }
        HTTP2FrameEncoder.writePing(opaque: opaque, ack: false, into: &outbound)
    }

    /// Changes SETTINGS_MAX_CONCURRENT_STREAMS mid-connection (server): a rise applies at
    /// once, a fall when the peer acknowledges it.
    public mutating func setMaxConcurrentStreams(_ value: UInt32) {
        guard error == nil else { return }
        HTTP2FrameEncoder.writeSettings([.init(.maxConcurrentStreams, value)], into: &outbound)
        if value > enforcedMaxConcurrentStreams { enforcedMaxConcurrentStreams = value }
        unacknowledgedMaxConcurrentStreams.append(value)
    }

    /// HEADERS (with CONTINUATION when the block is over the peer's frame size), then the body.
    private mutating func send(_ slot: Int, _ fields: some HTTP2HeaderFields, body: ByteBuffer?) {
        let stream = streams[slot].id
        let hasBody = body.map { $0.readableBytes > 0 } ?? false
        let frameStart = outbound.writerIndex
        outbound.writeRepeatingByte(0, count: 9)
        hpackEncoder.beginBlock(into: &outbound)
        fields.encode(with: &hpackEncoder, into: &outbound)
        let length = outbound.writerIndex - frameStart - 9
        if length <= Int(remoteSettings.maxFrameSize) {
            let flags = HTTP2Flags.endHeaders | (hasBody ? 0 : HTTP2Flags.endStream)
            outbound.setInteger(UInt16(truncatingIfNeeded: length >> 8), at: frameStart)
            outbound.setInteger(UInt8(truncatingIfNeeded: length), at: frameStart + 2)
            outbound.setInteger(HTTP2FrameType.headers.rawValue, at: frameStart + 3)
            outbound.setInteger(flags, at: frameStart + 4)
            outbound.setInteger(stream, at: frameStart + 5)
        } else {
            let block = outbound.getBytes(at: frameStart + 9, length: length)!
            outbound.moveWriterIndex(to: frameStart)
            block.withUnsafeBytes { block in
                HTTP2FrameEncoder.writeHeaders(
                    stream: stream,
                    block: block,
                    endStream: !hasBody,
                    maxFrameSize: Int(remoteSettings.maxFrameSize),
                    into: &outbound
                )
            }
        }
        guard var body, hasBody else {
            finishSending(slot)
            return
        }
        if writeData(slot, &body) {
            finishSending(slot)
        } else {
            streams[slot].pending.writeImmutableBuffer(body)
            if connectionSendWindow <= 0 { enqueueBlocked(slot) }
        }
    }

    /// Sends what a window update now allows of a stream's waiting body.
    private mutating func resumeSending(_ slot: Int) {
        // Taken out of the slot while frames are written, so the buffer stays uniquely held.
        var pending = streams[slot].pending
        streams[slot].pending = ByteBuffer()
        let done = writeData(slot, &pending)
        if done { pending.clear() }
        streams[slot].pending = pending
        if done {
            finishSending(slot)
        } else if connectionSendWindow <= 0 {
            enqueueBlocked(slot)
        }
    }

    /// Writes DATA frames from `bytes` while both windows allow, END_STREAM on the last;
    /// returns whether all of `bytes` went out.
    private mutating func writeData(_ slot: Int, _ bytes: inout ByteBuffer) -> Bool {
        let stream = streams[slot].id
        let maxFrame = Int(remoteSettings.maxFrameSize)
        while bytes.readableBytes > 0 {
            let allowed = min(bytes.readableBytes, connectionSendWindow, streams[slot].sendWindow, maxFrame)
            guard allowed > 0 else { return false }
            let last = allowed == bytes.readableBytes
            HTTP2FrameEncoder.writeHeader(
                length: allowed,
                type: .data,
                flags: last ? HTTP2Flags.endStream : 0,
                stream: stream,
                into: &outbound
            )
            outbound.writeImmutableBuffer(bytes.readSlice(length: allowed)!)
            connectionSendWindow -= allowed
            streams[slot].sendWindow -= allowed
        }
        return true
    }

    /// END_STREAM has gone out: the stream is half-closed (local), or closed.
    private mutating func finishSending(_ slot: Int) {
        streams[slot].localOpen = false
        if !streams[slot].remoteOpen { close(slot) }
    }

    private mutating func enqueueBlocked(_ slot: Int) {
        guard !streams[slot].queued else { return }
        streams[slot].queued = true
        blocked.append(streams[slot].id)
    }

    /// Sends waiting bodies, oldest stream first, while the connection window lasts.
    private mutating func flushBlocked() {
        while blockedHead < blocked.count && connectionSendWindow > 0 {
            let stream = blocked[blockedHead]
            blockedHead += 1
            guard let slot = streams.slot(of: stream) else { continue }
            streams[slot].queued = false
            resumeSending(slot)
        }
        if blockedHead == blocked.count {
            blocked.removeAll(keepingCapacity: true)
            blockedHead = 0
        }
    }

    private mutating func close(_ slot: Int) {
        streams.close(slot: slot)
    }
}
