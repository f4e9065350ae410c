import NIOCore

/// Splits received bytes into HTTP/2 frames and checks each against RFC 9113 §4 and §6.
///
/// ```
///  +-----------------------------------------------+
///  |                 Length (24)                   |
///  +---------------+---------------+---------------+
///  |   Type (8)    |   Flags (8)   |
///  +-+-------------+---------------+-------------------------------+
///  |R|                 Stream Identifier (31)                      |
///  +=+=============================================================+
///  |                   Frame Payload (0...)                      ...
///  +---------------------------------------------------------------+
/// ```
/// A frame over our SETTINGS_MAX_FRAME_SIZE, a frame on the wrong stream, a wrong length or
/// padding, or a frame between HEADERS and its CONTINUATION is an error with the code the RFC
/// names. Frames of unknown types are skipped, as the RFC requires.
public struct HTTP2FrameDecoder {
    /// The largest payload accepted: our SETTINGS_MAX_FRAME_SIZE.
    public var maxFrameSize: Int
    /// The largest header block accepted across HEADERS and CONTINUATION frames.
    public var maxHeaderBlockSize: Int
    /// The most CONTINUATION frames one header block may take.
    public var maxContinuationFrames: Int
    private var pendingHeaders: (stream: UInt32, endStream: Bool, block: ByteBuffer)?
    /// CONTINUATION frames of the block in `pendingHeaders` so far.
    private var continuations = 0

    /// Creates a decoder.
    public init(maxFrameSize: Int = 16_384, maxHeaderBlockSize: Int = 65_536, maxContinuationFrames: Int = 8) {
        self.maxFrameSize = maxFrameSize
        self.maxHeaderBlockSize = maxHeaderBlockSize
        self.maxContinuationFrames = maxContinuationFrames
    }

    /// The next complete frame in `buffer`, moving its reader index past it, or `nil` when
    /// more bytes are needed.
    public mutating func nextFrame(from buffer: inout ByteBuffer) throws(HTTP2FrameError) -> HTTP2Frame? {
        while true {
            guard buffer.readableBytes >= 9,
                let length24 = buffer.getInteger(at: buffer.readerIndex, as: UInt16.self),
                let length8 = buffer.getInteger(at: buffer.readerIndex + 2, as: UInt8.self),
                let type = buffer.getInteger(at: buffer.readerIndex + 3, as: UInt8.self),
                let flags = buffer.getInteger(at: buffer.readerIndex + 4, as: UInt8.self),
                let streamWord = buffer.getInteger(at: buffer.readerIndex + 5, as: UInt32.self)
            else { return nil }
            let length = Int(length24) << 8 | Int(length8)
            guard length <= maxFrameSize else {
                throw HTTP2FrameError(.frameSizeError, "a frame of \(length) bytes is over the \(maxFrameSize) allowed")
            }
            guard buffer.readableBytes >= 9 + length else { return nil }
            buffer.moveReaderIndex(forwardBy: 9)
            var payload = buffer.readSlice(length: length)!
            let stream = streamWord & 0x7FFF_FFFF
            if let frame = try frame(type: type, flags: flags, stream: stream, payload: &payload) { return frame }
        }
    }

    private mutating func frame(
        type rawType: UInt8,
        flags: UInt8,
        stream: UInt32,
        payload: inout ByteBuffer
    ) throws(HTTP2FrameError) -> HTTP2Frame? {
        let type = HTTP2FrameType(rawValue: rawType)
        if let pending = pendingHeaders {
            guard type == .continuation, stream == pending.stream else {
                throw HTTP2FrameError(
                    .protocolError,
                    "a frame other than CONTINUATION on stream \(pending.stream) came inside a header block"
                )
            }
        }
        switch type {
        case .data:
            try requireStream(stream, "DATA")
            let total = payload.readableBytes
            try removePadding(flags, &payload, "DATA")
            return .data(
                stream: stream,
                payload: payload,
                endStream: flags & HTTP2Flags.endStream != 0,
                flowControlledLength: total
            )
        case .headers:
            try requireStream(stream, "HEADERS")
            try removePadding(flags, &payload, "HEADERS")
            if flags & HTTP2Flags.priority != 0 {
                guard payload.readableBytes >= 5 else {
                    throw HTTP2FrameError(.frameSizeError, "HEADERS with PRIORITY is shorter than its 5 priority bytes")
                }
                payload.moveReaderIndex(forwardBy: 5)
            }
            return collectHeaders(
                stream: stream,
                endStream: flags & HTTP2Flags.endStream != 0,
                block: payload,
                endHeaders: flags & HTTP2Flags.endHeaders != 0
            )
        case .continuation:
            guard let pending = pendingHeaders else {
                throw HTTP2FrameError(.protocolError, "CONTINUATION without a HEADERS frame before it")
            }
            pendingHeaders = nil
            continuations += 1
            guard continuations <= maxContinuationFrames else {
                throw HTTP2FrameError(
                    .enhanceYourCalm,
                    "more than \(maxContinuationFrames) CONTINUATION frames in one header block"
                )
            }
            var block = pending.block
            guard block.readableBytes + payload.readableBytes <= maxHeaderBlockSize else {
                throw HTTP2FrameError(.enhanceYourCalm, "the header block is over \(maxHeaderBlockSize) bytes")
            }
            block.writeImmutableBuffer(payload)
            return collectHeaders(
                stream: stream,
                endStream: pending.endStream,
                block: block,
                endHeaders: flags & HTTP2Flags.endHeaders != 0
            )
        case .priority:
            try requireStream(stream, "PRIORITY")
            guard payload.readableBytes == 5 else {
                throw HTTP2FrameError(.frameSizeError, "PRIORITY must be 5 bytes", stream: stream)
            }
            return .priority(stream: stream)
        case .rstStream:
            try requireStream(stream, "RST_STREAM")
            guard payload.readableBytes == 4, let code = payload.readInteger(as: UInt32.self) else {
                throw HTTP2FrameError(.frameSizeError, "RST_STREAM must be 4 bytes")
            }
            return .rstStream(stream: stream, code: HTTP2ErrorCode(rawValue: code))
        case .settings:
            try requireConnection(stream, "SETTINGS")
            if flags & HTTP2Flags.ack != 0 {
                guard payload.readableBytes == 0 else {
                    throw HTTP2FrameError(.frameSizeError, "a SETTINGS ACK must be empty")
                }
                return .settingsAck
            }
            guard payload.readableBytes % 6 == 0 else {
                throw HTTP2FrameError(.frameSizeError, "SETTINGS is not a whole number of 6-byte settings")
            }
            var settings: [HTTP2Setting] = []
            settings.reserveCapacity(payload.readableBytes / 6)
            while let identifier = payload.readInteger(as: UInt16.self),
                let value = payload.readInteger(as: UInt32.self)
            {
                settings.append(HTTP2Setting(.init(rawValue: identifier), value))
            }
            return .settings(settings)
        case .pushPromise:
            throw HTTP2FrameError(.protocolError, "PUSH_PROMISE, but server push is disabled")
        case .ping:
            try requireConnection(stream, "PING")
            guard payload.readableBytes == 8, let opaque = payload.readInteger(as: UInt64.self) else {
                throw HTTP2FrameError(.frameSizeError, "PING must be 8 bytes")
            }
            return .ping(opaque: opaque, ack: flags & HTTP2Flags.ack != 0)
        case .goAway:
            try requireConnection(stream, "GOAWAY")
            guard payload.readableBytes >= 8, let last = payload.readInteger(as: UInt32.self),
                let code = payload.readInteger(as: UInt32.self)
            else { throw HTTP2FrameError(.frameSizeError, "GOAWAY is shorter than 8 bytes") }
            return .goAway(lastStream: last & 0x7FFF_FFFF, code: HTTP2ErrorCode(rawValue: code), debugData: payload)
        case .windowUpdate:
            guard payload.readableBytes == 4, let word = payload.readInteger(as: UInt32.self) else {
                throw HTTP2FrameError(.frameSizeError, "WINDOW_UPDATE must be 4 bytes")
            }
            let increment = word & 0x7FFF_FFFF
            guard increment > 0 else {
                throw HTTP2FrameError(.protocolError, "a WINDOW_UPDATE of 0", stream: stream == 0 ? nil : stream)
            }
            return .windowUpdate(stream: stream, increment: increment)
        case nil:
            return nil  // Unknown frame types are ignored (RFC 9113 §4.1).
        }
    }

    /// Completes a header block, or holds it until the CONTINUATION with END_HEADERS. A held
    /// slice keeps its bytes alive; appending to it copies it once.
    private mutating func collectHeaders(
        stream: UInt32,
        endStream: Bool,
        block: ByteBuffer,
        endHeaders: Bool
    ) -> HTTP2Frame? {
        if endHeaders {
            continuations = 0
            return .headers(stream: stream, block: block, endStream: endStream)
        }
        pendingHeaders = (stream, endStream, block)
        return nil
    }

    private func removePadding(_ flags: UInt8, _ payload: inout ByteBuffer, _ name: String) throws(HTTP2FrameError) {
        guard flags & HTTP2Flags.padded != 0 else { return }
        guard let padLength = payload.readInteger(as: UInt8.self), Int(padLength) <= payload.readableBytes else {
            throw HTTP2FrameError(.protocolError, "\(name) padding is as long as its payload or longer")
        }
        payload = payload.getSlice(at: payload.readerIndex, length: payload.readableBytes - Int(padLength))!
    }

    private func requireStream(_ stream: UInt32, _ name: String) throws(HTTP2FrameError) {
        if stream == 0 { throw HTTP2FrameError(.protocolError, "\(name) on stream 0") }
    }

    private func requireConnection(_ stream: UInt32, _ name: String) throws(HTTP2FrameError) {
        if stream != 0 { throw HTTP2FrameError(.protocolError, "\(name) on stream \(stream); it belongs to stream 0") }
    }
}
