import FanoutHPACK
import NIOCore

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
