import FanoutHPACK
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
/// names. Frames of unknown types are handed on as `.unknown`, to be ignored as the RFC
/// requires (the connection still counts them: a flood of them costs as much as any other).
///
/// Frames are read in place from a view of the received bytes (`nextFrame(in:consumed:)`), as
/// the connection does; `nextFrame(from:)` gives owned copies, for tools and tests. The one
/// thing the decoder keeps is a header block waiting for its CONTINUATION frames, in memory of
/// its own (so it is not copyable).
public struct HTTP2FrameDecoder: ~Copyable {
    /// The largest payload accepted: our SETTINGS_MAX_FRAME_SIZE.
    public var maxFrameSize: Int
    /// The largest header block accepted across HEADERS and CONTINUATION frames.
    public var maxHeaderBlockSize: Int
    /// The most CONTINUATION frames one header block may take.
    public var maxContinuationFrames: Int
    /// The stream and END_STREAM flag of a header block whose END_HEADERS has not come yet; its
    /// bytes so far are in `joined`.
    private var pendingHeaders: (stream: UInt32, endStream: Bool)?
    private var joined = OutputBuffer(capacity: 0)
    /// CONTINUATION frames of the pending block so far.
    private var continuations = 0

    /// Creates a decoder.
    public init(maxFrameSize: Int = 16_384, maxHeaderBlockSize: Int = 65_536, maxContinuationFrames: Int = 8) {
        self.maxFrameSize = maxFrameSize
        self.maxHeaderBlockSize = maxHeaderBlockSize
        self.maxContinuationFrames = maxContinuationFrames
    }

    /// The next complete frame in `buffer`, moving its reader index past it, or `nil` when
    /// more bytes are needed; its payload copied out.
    public mutating func nextFrame(from buffer: inout ByteBuffer) throws(HTTP2FrameError) -> HTTP2Frame? {
        var consumed = 0
        let result: Result<HTTP2Frame?, HTTP2FrameError> = buffer.withUnsafeReadableBytes { bytes in
            do throws(HTTP2FrameError) {
                // Frames of unknown types are skipped here: tools and tests see the others.
                while let view = try nextFrame(in: bytes, consumed: &consumed) {
                    if let frame = HTTP2Frame(copying: view) { return .success(frame) }
                }
                return .success(nil)
            } catch {
                return .failure(error)
            }
        }
        buffer.moveReaderIndex(forwardBy: consumed)
        return try result.get()
    }

    /// The next complete frame in `bytes[consumed...]`, moving `consumed` past it, or `nil` when
    /// more bytes are needed (a HEADERS or CONTINUATION frame whose block goes on is taken in
    /// without a frame out). A frame that breaks a rule is consumed, then thrown.
    mutating func nextFrame(
        in bytes: UnsafeRawBufferPointer,
        consumed: inout Int
    ) throws(HTTP2FrameError) -> HTTP2FrameView? {
        while true {
            let start = consumed
            guard bytes.count - start >= 9 else { return nil }
            let length = Int(bytes.bigEndian(at: start, as: UInt16.self)) << 8 | Int(bytes[start + 2])
            guard length <= maxFrameSize else {
                throw HTTP2FrameError(.frameSizeError, "a frame of \(length) bytes is over the \(maxFrameSize) allowed")
            }
            guard bytes.count - start - 9 >= length else { return nil }
            consumed = start + 9 + length
            let payload = UnsafeRawBufferPointer(rebasing: bytes[(start + 9)..<consumed])
            let stream = bytes.bigEndian(at: start + 5, as: UInt32.self) & 0x7FFF_FFFF
            if let frame = try frame(type: bytes[start + 3], flags: bytes[start + 4], stream: stream, payload: payload)
            {
                return frame
            }
        }
    }

    private mutating func frame(
        type rawType: UInt8,
        flags: UInt8,
        stream: UInt32,
        payload: UnsafeRawBufferPointer
    ) throws(HTTP2FrameError) -> HTTP2FrameView? {
        let type = HTTP2FrameType(rawValue: rawType)
        if let pending = pendingHeaders {
            guard type == .continuation, stream == pending.stream else {
                throw HTTP2FrameError(
                    .protocolError,
                    "a frame other than CONTINUATION on stream \(pending.stream) came inside a header block"
                )
            }
        }
        var payload = payload
        switch type {
        case .data:
            try requireStream(stream, "DATA")
            let total = payload.count
            try removePadding(flags, &payload, "DATA")
            return .data(
                stream: stream,
                payload: payload,
                endStream: flags & HTTP2Flags.endStream != 0,
                flowControlledLength: total
            )
        case .headers:
            return try headers(flags: flags, stream: stream, payload: payload)
        case .continuation:
            return try continuation(flags: flags, stream: stream, payload: payload)
        case .priority:
            try requireStream(stream, "PRIORITY")
            guard payload.count == 5 else {
                throw HTTP2FrameError(.frameSizeError, "PRIORITY must be 5 bytes", stream: stream)
            }
            return .priority(stream: stream)
        case .rstStream:
            try requireStream(stream, "RST_STREAM")
            guard payload.count == 4 else { throw HTTP2FrameError(.frameSizeError, "RST_STREAM must be 4 bytes") }
            return .rstStream(stream: stream, code: HTTP2ErrorCode(rawValue: payload.bigEndian(at: 0, as: UInt32.self)))
        case .settings:
            try requireConnection(stream, "SETTINGS")
            if flags & HTTP2Flags.ack != 0 {
                guard payload.count == 0 else { throw HTTP2FrameError(.frameSizeError, "a SETTINGS ACK must be empty") }
                return .settingsAck
            }
            guard payload.count % 6 == 0 else {
                throw HTTP2FrameError(.frameSizeError, "SETTINGS is not a whole number of 6-byte settings")
            }
            return .settings(payload)
        case .pushPromise:
            throw HTTP2FrameError(.protocolError, "PUSH_PROMISE, but server push is disabled")
        case .ping:
            try requireConnection(stream, "PING")
            guard payload.count == 8 else { throw HTTP2FrameError(.frameSizeError, "PING must be 8 bytes") }
            return .ping(opaque: payload.bigEndian(at: 0, as: UInt64.self), ack: flags & HTTP2Flags.ack != 0)
        case .goAway:
            try requireConnection(stream, "GOAWAY")
            guard payload.count >= 8 else { throw HTTP2FrameError(.frameSizeError, "GOAWAY is shorter than 8 bytes") }
            return .goAway(
                lastStream: payload.bigEndian(at: 0, as: UInt32.self) & 0x7FFF_FFFF,
                code: HTTP2ErrorCode(rawValue: payload.bigEndian(at: 4, as: UInt32.self)),
                debugData: UnsafeRawBufferPointer(rebasing: payload[8...])
            )
        case .windowUpdate:
            guard payload.count == 4 else { throw HTTP2FrameError(.frameSizeError, "WINDOW_UPDATE must be 4 bytes") }
            let increment = payload.bigEndian(at: 0, as: UInt32.self) & 0x7FFF_FFFF
            guard increment > 0 else {
                throw HTTP2FrameError(.protocolError, "a WINDOW_UPDATE of 0", stream: stream == 0 ? nil : stream)
            }
            return .windowUpdate(stream: stream, increment: increment)
        case nil:
            return .unknown  // Ignored (RFC 9113 §4.1) by the connection, which counts it.
        }
    }

    /// A HEADERS frame: its header block when the frame ends it, or `nil` when the block goes
    /// on in CONTINUATION frames (its start is kept in `joined`).
    @inline(__always)
    private mutating func headers(
        flags: UInt8,
        stream: UInt32,
        payload: UnsafeRawBufferPointer
    ) throws(HTTP2FrameError) -> HTTP2FrameView? {
        var payload = payload
        try requireStream(stream, "HEADERS")
        try removePadding(flags, &payload, "HEADERS")
        if flags & HTTP2Flags.priority != 0 {
            guard payload.count >= 5 else {
                throw HTTP2FrameError(.frameSizeError, "HEADERS with PRIORITY is shorter than its 5 priority bytes")
            }
            payload = UnsafeRawBufferPointer(rebasing: payload[5...])
        }
        let endStream = flags & HTTP2Flags.endStream != 0
        guard flags & HTTP2Flags.endHeaders == 0 else {
            return .headers(stream: stream, block: payload, endStream: endStream)
        }
        // The block goes on in CONTINUATION frames: keep its start.
        pendingHeaders = (stream, endStream)
        continuations = 0
        joined.clear()
        joined.write(payload)
        return nil
    }

    /// A CONTINUATION frame: the whole header block once this frame ends it, `nil` before;
    /// bounded in frames and bytes (the CONTINUATION flood).
    @inline(__always)
    private mutating func continuation(
        flags: UInt8,
        stream: UInt32,
        payload: UnsafeRawBufferPointer
    ) throws(HTTP2FrameError) -> HTTP2FrameView? {
        guard let pending = pendingHeaders else {
            throw HTTP2FrameError(.protocolError, "CONTINUATION without a HEADERS frame before it")
        }
        continuations += 1
        guard continuations <= maxContinuationFrames else {
            pendingHeaders = nil
            throw HTTP2FrameError(
                .enhanceYourCalm,
                "more than \(maxContinuationFrames) CONTINUATION frames in one header block"
            )
        }
        guard joined.count + payload.count <= maxHeaderBlockSize else {
            pendingHeaders = nil
            throw HTTP2FrameError(.enhanceYourCalm, "the header block is over \(maxHeaderBlockSize) bytes")
        }
        joined.write(payload)
        guard flags & HTTP2Flags.endHeaders != 0 else { return nil }
        pendingHeaders = nil
        return .headers(stream: stream, block: joined.bytes, endStream: pending.endStream)
    }

    private func removePadding(
        _ flags: UInt8,
        _ payload: inout UnsafeRawBufferPointer,
        _ name: StaticString
    ) throws(HTTP2FrameError) {
        guard flags & HTTP2Flags.padded != 0 else { return }
        guard let padLength = payload.first, Int(padLength) < payload.count else {
            throw HTTP2FrameError(.protocolError, "\(name) padding is as long as its payload or longer")
        }
        payload = UnsafeRawBufferPointer(rebasing: payload[1..<(payload.count - Int(padLength))])
    }

    private func requireStream(_ stream: UInt32, _ name: StaticString) throws(HTTP2FrameError) {
        if stream == 0 { throw HTTP2FrameError(.protocolError, "\(name) on stream 0") }
    }

    private func requireConnection(_ stream: UInt32, _ name: StaticString) throws(HTTP2FrameError) {
        if stream != 0 { throw HTTP2FrameError(.protocolError, "\(name) on stream \(stream); it belongs to stream 0") }
    }
}
