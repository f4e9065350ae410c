import FanoutHPACK
import NIOCore

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
        let (stream, slot) = try openStream(tag: tag)
        send(slot, fields, body: body)
        return stream
    }

    /// `sendRequest(_:body:tag:)` with the body in memory the caller owns (the load engine's
    /// reused payload region): read during the call, copied only if flow control holds some of
    /// it back.
    @discardableResult
    public mutating func sendRequest(
        _ fields: some HTTP2HeaderFields,
        bodyBytes body: UnsafeRawBufferPointer,
        tag: UInt64 = 0
    ) throws(OpenError) -> UInt32 {
        let (stream, slot) = try openStream(tag: tag)
        send(slot, fields, body: body)
        return stream
    }

    /// A new stream for a request, in the next client stream id.
    private mutating func openStream(tag: UInt64) throws(OpenError) -> (stream: UInt32, slot: Int) {
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
        return (stream, slot)
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

    /// Resets (RST_STREAM CANCEL) every stream the peer opened at or before `openedBy` (uptime
    /// nanoseconds, as `now`) whose request has not arrived whole: the peer has not ended its
    /// side. A stream that never ends gives its slot back; one whose request arrived and waits
    /// for its answer is not touched. Returns how many were reset, and when the oldest stream
    /// still incomplete was opened (`nil`: none), for the owner's next look. Goes through the
    /// open streams: for a timer, not for every frame.
    public mutating func resetIncompleteRequests(openedBy cutoff: UInt64) -> (reset: Int, oldestOpenedAt: UInt64?) {
        guard error == nil, role == .server, streams.count > 0 else { return (0, nil) }
        var reset = 0
        var oldest: UInt64?
        for slot in streams.openSlots where streams[slot].remoteOpen {
            let openedAt = streams[slot].openedAt
            if openedAt <= cutoff {
                HTTP2FrameEncoder.writeRstStream(stream: streams[slot].id, code: .cancel, into: &outbound)
                close(slot)
                reset += 1
            } else {
                oldest = min(oldest ?? openedAt, openedAt)
            }
        }
        return (reset, oldest)
    }

    /// Sends GOAWAY: no new streams; the open ones finish. `debugData` is free text (APNs
    /// sends `{"reason":"…"}`).
    public mutating func goAway(code: HTTP2ErrorCode = .noError, debugData: [UInt8] = []) {
        guard error == nil else { return }
        // A server sends a PING right in front of it, in the same write: its acknowledgement
        // says the peer has read that far — in practice the GOAWAY with it, read in the same
        // read — so streams it opens later knew they would be ignored (`goAwayRead`). Not
        // behind it: some clients (Python's h2) fail on any frame after a GOAWAY.
        if role == .server {
            HTTP2FrameEncoder.writePing(opaque: Self.goAwayPingOpaque, ack: false, into: &outbound)
        }
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
    /// The block is encoded into `headerBlock` first: its length goes in the frame header, and
    /// the frame then goes into `outbound` in one write.
    private mutating func send(_ slot: Int, _ fields: some HTTP2HeaderFields, body: ByteBuffer?) {
        guard let body else { return send(slot, fields, body: UnsafeRawBufferPointer(start: nil, count: 0)) }
        body.withUnsafeReadableBytes { send(slot, fields, body: $0) }
    }

    /// HEADERS, then `body` as DATA while the windows allow; what they hold back is copied into
    /// the stream's pending bytes and follows as the peer opens them.
    private mutating func send(_ slot: Int, _ fields: some HTTP2HeaderFields, body: UnsafeRawBufferPointer) {
        writeHeaders(slot, fields, endStream: body.isEmpty)
        guard !body.isEmpty else {
            finishSending(slot)
            return
        }
        let written = writeData(slot, body)
        if written == body.count {
            finishSending(slot)
        } else {
            streams[slot].pending.writeBytes(UnsafeRawBufferPointer(rebasing: body[written...]))
            if connectionSendWindow <= 0 { enqueueBlocked(slot) }
        }
    }

    /// The header block, encoded into `headerBlock`, as HEADERS (and CONTINUATION).
    private mutating func writeHeaders(_ slot: Int, _ fields: some HTTP2HeaderFields, endStream: Bool) {
        headerBlock.clear()
        hpackEncoder.beginBlock(into: &headerBlock)
        fields.encode(with: &hpackEncoder, into: &headerBlock)
        HTTP2FrameEncoder.writeHeaders(
            stream: streams[slot].id,
            block: headerBlock.bytes,
            endStream: endStream,
            maxFrameSize: Int(remoteSettings.maxFrameSize),
            into: &outbound
        )
    }

    /// Sends what a window update now allows of a stream's waiting body.
    mutating func resumeSending(_ slot: Int) {
        // Taken out of the slot while frames are written, so the buffer stays uniquely held.
        var pending = streams[slot].pending
        streams[slot].pending = emptyBuffer
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
        let written = bytes.withUnsafeReadableBytes { writeData(slot, $0) }
        bytes.moveReaderIndex(forwardBy: written)
        return bytes.readableBytes == 0
    }

    /// Writes DATA frames from `bytes` while both windows allow, END_STREAM on the last;
    /// returns how many bytes went out.
    private mutating func writeData(_ slot: Int, _ bytes: UnsafeRawBufferPointer) -> Int {
        let stream = streams[slot].id
        let maxFrame = Int(remoteSettings.maxFrameSize)
        var written = 0
        while written < bytes.count {
            let left = bytes.count - written
            let allowed = min(left, connectionSendWindow, streams[slot].sendWindow, maxFrame)
            guard allowed > 0 else { return written }
            HTTP2FrameEncoder.writeData(
                stream: stream,
                payload: UnsafeRawBufferPointer(rebasing: bytes[written..<(written + allowed)]),
                endStream: allowed == left,
                into: &outbound
            )
            written += allowed
            connectionSendWindow -= allowed
            dataBytesSent &+= allowed
            streams[slot].sendWindow -= allowed
        }
        return written
    }

    /// END_STREAM has gone out: the stream is half-closed (local), or closed.
    private mutating func finishSending(_ slot: Int) {
        streams[slot].localOpen = false
        if !streams[slot].remoteOpen { close(slot) }
    }

    mutating func enqueueBlocked(_ slot: Int) {
        guard !streams[slot].queued else { return }
        streams[slot].queued = true
        blocked.append(streams[slot].id)
    }

    /// Sends waiting bodies, oldest stream first, while the connection window lasts.
    mutating func flushBlocked() {
        while blockedHead < blocked.count && connectionSendWindow > 0 {
            let stream = blocked[blockedHead]
            blockedHead += 1
            guard let slot = streams.slot(of: stream) else {
                staleBlocked = max(0, staleBlocked - 1)
                continue
            }
            streams[slot].queued = false
            resumeSending(slot)
        }
        if blockedHead == blocked.count {
            blocked.removeAll(keepingCapacity: true)
            blockedHead = 0
            staleBlocked = 0
        }
    }

    mutating func close(_ slot: Int) {
        let wasBlocked = streams[slot].queued
        streams[slot].queued = false
        streams.close(slot: slot)
        guard wasBlocked else { return }
        staleBlocked += 1
        if staleBlocked >= 64 && 2 * staleBlocked >= blockedStreams { dropStaleBlocked() }
    }

    /// Keeps only the blocked entries whose stream is still open, in order.
    private mutating func dropStaleBlocked() {
        var kept = blockedHead
        for index in blockedHead..<blocked.count where streams.slot(of: blocked[index]) != nil {
            blocked[kept] = blocked[index]
            kept += 1
        }
        blocked.removeSubrange(kept...)
        staleBlocked = 0
    }
}
