import FanoutHPACK
import NIOCore

extension HTTP2Connection {
    /// Handles every whole frame in `buffer`, answering what the protocol requires by itself,
    /// and calls `body` with each event the application must see, in order, and a writer to
    /// answer with (`HTTP2Writer`: it cannot read more in); the start of a frame not yet whole
    /// stays in `buffer`.
    ///
    /// The frames are read in place, within one view of `buffer`'s bytes: an event's views (a
    /// message's header list and body, GOAWAY's debug data) are valid during the call of `body`
    /// that gets them, and no frame or message is copied or reference-counted on the way.
    ///
    /// `pausingAt`: once an event's handling leaves at least this many bytes queued to send
    /// (`outbound`), it stops after that event and returns true, the frames not yet read left in
    /// `buffer`, so the owner can write them before reading on (a read of a thousand answers,
    /// each refilled with a request, would otherwise hold the first request until the last
    /// answer is handled). False when every whole frame was read.
    @discardableResult
    public static func receive(
        _ connection: inout HTTP2Connection,
        from buffer: inout ByteBuffer,
        pausingAt outboundLimit: Int = .max,
        _ body: (HTTP2Event, inout HTTP2Writer) -> Void
    ) -> Bool {
        var consumed = 0
        var paused = false
        buffer.withUnsafeReadableBytes { bytes in
            while let event = connection.nextEvent(in: bytes, consumed: &consumed) {
                connection.withWriter { writer in body(event, &writer) }
                if connection.outbound.count >= outboundLimit {
                    paused = true
                    break
                }
            }
        }
        buffer.moveReaderIndex(forwardBy: consumed)
        return paused
    }

    /// Processes frames from `bytes[consumed...]` until one needs the application, and returns
    /// that event; `nil` when no whole frame is left.
    private mutating func nextEvent(in bytes: UnsafeRawBufferPointer, consumed: inout Int) -> HTTP2Event? {
        if queuedHead < queuedEvents.count { return dequeueEvent() }
        guard error == nil else {
            consumed = bytes.count
            return nil
        }
        if !prefaceReceived {
            let preface = http2ConnectionPreface
            let available = bytes.count - consumed
            let compared = min(available, preface.count)
            guard bytes[consumed..<(consumed + compared)].elementsEqual(preface.prefix(compared)) else {
                return fail(.protocolError, "the client did not send the HTTP/2 connection preface")
            }
            guard available >= preface.count else { return nil }
            consumed += preface.count
            prefaceReceived = true
            framesWithoutRequestSince = now
        }
        while true {
            let frame: HTTP2FrameView?
            do {
                frame = try frameDecoder.nextFrame(in: bytes, consumed: &consumed)
            } catch {
                if let stream = error.stream {
                    // A frame refused on its stream (a PRIORITY of the wrong length, a zero
                    // WINDOW_UPDATE) is a frame too: counted, or a flood of them would buy
                    // RST_STREAMs beyond every cap.
                    framesWithoutRequest &+= 1
                    if framesWithoutRequest > framesWithoutRequestLimit, let calm = tooManyFramesWithoutRequest() {
                        return calm
                    }
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

    private mutating func handle(_ frame: HTTP2FrameView) -> HTTP2Event? {
        // One add and one compare a frame; a request arriving whole sets the count to 0.
        framesWithoutRequest &+= 1
        if framesWithoutRequest > framesWithoutRequestLimit, let calm = tooManyFramesWithoutRequest() { return calm }
        if !settingsReceived {
            guard case .settings = frame else {
                if case .unknown = frame { return nil }
                return fail(.protocolError, "the peer's first frame is not SETTINGS")
            }
        }
        switch frame {
        case .unknown:
            return nil
        case .data(let stream, let payload, let endStream, let flowControlledLength):
            return receiveData(stream, payload, endStream, flowControlledLength)
        case .headers(let stream, let block, let endStream):
            return receiveHeaders(stream, block, endStream)
        case .priority:
            return nil
        case .rstStream(let stream, let code):
            if role == .server, let calm = spendResetBudget() { return calm }
            if let slot = streams.slot(of: stream) {
                let tag = streams[slot].tag
                close(slot)
                return .streamReset(stream: stream, tag: tag, code: code, byPeer: true)
            }
            if isIdle(stream) { return fail(.protocolError, "RST_STREAM on idle stream \(stream)") }
            return nil
        case .settings(let payload):
            return receiveSettings(payload)
        case .settingsAck:
            localSettingsAcknowledged = true
            if !unacknowledgedMaxConcurrentStreams.isEmpty {
                let acknowledged = unacknowledgedMaxConcurrentStreams.removeFirst()
                enforcedMaxConcurrentStreams = acknowledged
                acknowledgedMaxConcurrentStreams = acknowledged
            }
            return nil
        case .ping(let opaque, let ack):
            if ack && opaque == Self.goAwayPingOpaque && role == .server {
                goAwayRead = true
                return nil
            }
            if ack { return .pingAcknowledged(opaque: opaque) }
            HTTP2FrameEncoder.writePing(opaque: opaque, ack: true, into: &outbound)
            return queuedControlReply()
        case .goAway(let lastStream, let code, let debugData):
            return receiveGoAway(lastStream, code, debugData)
        case .windowUpdate(let stream, let increment):
            return receiveWindowUpdate(stream, Int(increment))
        }
    }

    /// Counts a PING or SETTINGS acknowledgement queued; past the limit the peer is flooding
    /// us with frames it does not read the answers to.
    mutating func queuedControlReply() -> HTTP2Event? {
        queuedControlReplies += 1
        guard queuedControlReplies > configuration.maxQueuedControlReplies else { return nil }
        return fail(
            .enhanceYourCalm,
            "more than \(configuration.maxQueuedControlReplies) PING and SETTINGS acknowledgements queued unread"
        )
    }

    /// Past `maxFramesWithoutRequest` frames since the count last started: it starts again
    /// when that was `framesWithoutRequestWindow` or longer ago, and the connection ends with
    /// GOAWAY ENHANCE_YOUR_CALM when it was not.
    @inline(never)
    private mutating func tooManyFramesWithoutRequest() -> HTTP2Event? {
        if now >= framesWithoutRequestSince &+ framesWithoutRequestWindow {
            framesWithoutRequest = 1
            framesWithoutRequestSince = now
            return nil
        }
        return fail(
            .enhanceYourCalm,
            "more than \(configuration.maxFramesWithoutRequest) frames within \(configuration.framesWithoutRequestWindow) with no request arriving whole (empty DATA, PRIORITY, WINDOW_UPDATE, PING, SETTINGS, RST_STREAM or unknown frames)"
        )
    }

    /// Takes one reset from the budget (refilled at `streamResetsPerSecond` up to
    /// `streamResetBurst`); the GOAWAY when it is spent.
    private mutating func spendResetBudget() -> HTTP2Event? {
        if now > resetBudgetRefilledAt {
            let seconds = Double(now - resetBudgetRefilledAt) / 1e9
            resetBudget = min(
                Double(configuration.streamResetBurst),
                resetBudget + seconds * Double(configuration.streamResetsPerSecond)
            )
            resetBudgetRefilledAt = now
        }
        guard resetBudget < 1 else {
            resetBudget -= 1
            return nil
        }
        return fail(
            .enhanceYourCalm,
            "more than \(configuration.streamResetBurst) streams reset at once, or over \(configuration.streamResetsPerSecond) a second after (rapid reset)"
        )
    }

    /// Whether `stream` is one neither side has opened yet (RFC 9113 §5.1).
    func isIdle(_ stream: UInt32) -> Bool {
        let peerInitiated = (stream & 1 == 1) == (role == .server)
        return peerInitiated ? stream > highestPeerStream : stream >= nextStreamID
    }

    private mutating func receiveSettings(_ payload: UnsafeRawBufferPointer) -> HTTP2Event? {
        settingsReceived = true
        let oldWindow = Int(remoteSettings.initialWindowSize)
        let oldTableSize = remoteSettings.headerTableSize
        var problem: HTTP2FrameError?
        HTTP2Setting.forEach(in: payload) { setting in
            guard problem == nil else { return }
            do throws(HTTP2FrameError) {
                try remoteSettings.apply(setting)
            } catch {
                problem = error
            }
        }
        if let problem { return fail(problem) }
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
        if let calm = queuedControlReply() { return calm }
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
        _ debugData: UnsafeRawBufferPointer
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
        if recordsWindowUpdates {
            windowUpdates.append(
                WindowUpdate(
                    at: now,
                    stream: stream,
                    increment: increment,
                    connectionWindowAfter: connectionSendWindow + (stream == 0 ? increment : 0)
                )
            )
        }
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
    mutating func streamError(_ stream: UInt32, _ code: HTTP2ErrorCode) -> HTTP2Event? {
        HTTP2FrameEncoder.writeRstStream(stream: stream, code: code, into: &outbound)
        guard let slot = streams.slot(of: stream) else { return nil }
        let tag = streams[slot].tag
        close(slot)
        return .streamReset(stream: stream, tag: tag, code: code, byPeer: false)
    }

    /// A connection error (RFC 9113 §5.4.1): GOAWAY with the reason as debug data.
    mutating func fail(_ code: HTTP2ErrorCode, _ reason: String) -> HTTP2Event? {
        fail(HTTP2FrameError(code, reason))
    }

    mutating func fail(_ error: HTTP2FrameError) -> HTTP2Event? {
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

// MARK: A stream's HEADERS and DATA, gathered into the message the application gets

extension HTTP2Connection {
    mutating func receiveHeaders(
        _ stream: UInt32,
        _ block: UnsafeRawBufferPointer,
        _ endStream: Bool
    ) -> HTTP2Event? {
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
                streams[slot].headers.removeAll()
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
        if sentGoAway != nil {
            if goAwayRead { streamsAfterGoAway += 1 } else { streamsInGoAwayRace += 1 }
            return discard(block)
        }
        guard streams.count < enforcedMaxConcurrentStreams else {
            refusedStreams += 1
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
        streams[slot].openedAt = now
        if let failure = decode(block, into: slot, kind: .request) { return failure }
        streams[slot].headersReceived = true
        return endStream ? endOfMessage(slot, body: nil) : nil
    }

    /// Decodes a header block into the stream's list. A malformed list resets the stream
    /// (the slot is then free: callers check the id); an HPACK failure ends the connection.
    ///
    /// The fields are written one after another into `decodedFields`, then into the stream's
    /// list in one copy: the slot's memory may have to grow, which the decoder's callback,
    /// running inside a mutation of the connection, cannot do.
    private mutating func decode(
        _ block: UnsafeRawBufferPointer,
        into slot: Int,
        kind: HeaderListValidator.Kind
    ) -> HTTP2Event? {
        var validator = HeaderListValidator(kind: kind)
        let fields = decodedFields
        var used = 0
        do throws(HPACKError) {
            try hpackDecoder.decode(block) { name, value, _ in
                validator.check(name: name, value: value)
                // The decoder has counted this field against the list limit, as
                // name + value + 32 bytes: its record fits.
                precondition(used + HTTP2HeaderList.recordLength(name: name, value: value) <= fields.count)
                used += HTTP2HeaderList.writeRecord(name: name, value: value, at: fields.baseAddress! + used)
            }
        } catch {
            return fail(.compressionError, "HPACK: \(error)")
        }
        streams[slot].headers.append(UnsafeRawBufferPointer(rebasing: fields[..<used]))
        let stream = streams[slot].id
        if validator.finish() != nil { return streamError(stream, .protocolError) }
        if kind != .trailers {
            streams[slot].status = validator.status
            streams[slot].contentLength = validator.contentLength
        }
        return nil
    }

    /// Decodes a header block only to keep the HPACK state in step with the peer.
    private mutating func discard(_ block: UnsafeRawBufferPointer) -> HTTP2Event? {
        do throws(HPACKError) {
            try hpackDecoder.decode(block) { _, _, _ in }
        } catch {
            return fail(.compressionError, "HPACK: \(error)")
        }
        return nil
    }

    mutating func receiveData(
        _ stream: UInt32,
        _ payload: UnsafeRawBufferPointer,
        _ endStream: Bool,
        _ flowControlledLength: Int
    ) -> HTTP2Event? {
        guard flowControlledLength <= connectionReceiveWindow else {
            return fail(.flowControlError, "DATA of \(flowControlledLength) bytes over the connection window")
        }
        connectionReceiveWindow -= flowControlledLength
        connectionConsumed += flowControlledLength
        if connectionConsumed >= Int(configuration.connectionWindowSize) / 2
            || (configuration.windowRefill == .eachFrame && connectionConsumed > 0)
        {
            HTTP2FrameEncoder.writeWindowUpdate(stream: 0, increment: UInt32(connectionConsumed), into: &outbound)
            connectionReceiveWindow += connectionConsumed
            connectionConsumed = 0
        }
        guard let slot = streams.slot(of: stream) else {
            // A stream this side's GOAWAY left out (opened above its last id): its frames are
            // ignored (RFC 9113 §6.8), its DATA still counted against the connection's window.
            if let last = sentGoAway, stream > last, stream <= highestPeerStream { return nil }
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
        streams[slot].bodyLength += payload.count
        if endStream && streams[slot].body.count == 0 {
            // The whole body in one frame: the message shows it where it lies.
            return endOfMessage(slot, body: UnsafeRawBufferPointer(rebasing: payload.prefix(configuration.maxBodySize)))
        }
        let room = configuration.maxBodySize - streams[slot].body.count
        if room > 0 { streams[slot].body.append(UnsafeRawBufferPointer(rebasing: payload.prefix(room))) }
        if endStream { return endOfMessage(slot, body: nil) }
        // The connection's rule, on the stream: consumed ≥ half the window (nghttp2's), or any.
        let initial = Int(configuration.initialWindowSize)
        let consumed = initial - streams[slot].receiveWindow
        if consumed > 0 && (consumed >= initial / 2 || configuration.windowRefill == .eachFrame) {
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
    private mutating func endOfMessage(_ slot: Int, body: UnsafeRawBufferPointer?) -> HTTP2Event? {
        let stream = streams[slot].id
        if let expected = streams[slot].contentLength, expected != streams[slot].bodyLength {
            return streamError(stream, .protocolError)
        }
        streams[slot].remoteOpen = false
        framesWithoutRequest = 0
        framesWithoutRequestSince = now
        let message = HTTP2Message(
            stream: stream,
            tag: streams[slot].tag,
            status: streams[slot].status,
            headers: HTTP2HeaderList(viewing: streams[slot].headers.bytes),
            body: body ?? streams[slot].body.bytes,
            bodyLength: streams[slot].bodyLength
        )
        if !streams[slot].localOpen { close(slot) }
        return .message(message)
    }
}
