import FanoutHPACK
import NIOCore

/// Writes HTTP/2 frames straight into a caller's buffer (RFC 9113 §4.1; layout drawn on
/// `HTTP2FrameDecoder`).
public enum HTTP2FrameEncoder {
    static func writeHeader(
        length: Int,
        type: HTTP2FrameType,
        flags: UInt8,
        stream: UInt32,
        into buffer: inout ByteBuffer
    ) {
        buffer.writeRaw(maximum: 9) { out in
            storeHeader(length: length, type: type, flags: flags, stream: stream, at: out)
            return 9
        }
    }

    /// The nine bytes of a frame header at `out`.
    @inline(__always)
    static func storeHeader(
        length: Int,
        type: HTTP2FrameType,
        flags: UInt8,
        stream: UInt32,
        at out: UnsafeMutableRawPointer
    ) {
        out.storeBigEndian(UInt16(truncatingIfNeeded: length >> 8), at: 0)
        out.storeBytes(of: UInt8(truncatingIfNeeded: length), toByteOffset: 2, as: UInt8.self)
        out.storeBytes(of: type.rawValue, toByteOffset: 3, as: UInt8.self)
        out.storeBytes(of: flags, toByteOffset: 4, as: UInt8.self)
        out.storeBigEndian(stream & 0x7FFF_FFFF, at: 5)
    }

    /// DATA carrying `payload`, in one write.
    public static func writeData(
        stream: UInt32,
        payload: UnsafeRawBufferPointer,
        endStream: Bool,
        into buffer: inout ByteBuffer
    ) {
        writeFrame(
            type: .data,
            flags: endStream ? HTTP2Flags.endStream : 0,
            stream: stream,
            payload: payload,
            into: &buffer
        )
    }

    /// HEADERS, followed by CONTINUATION frames when the block is over `maxFrameSize`; each
    /// frame in one write.
    public static func writeHeaders(
        stream: UInt32,
        block: UnsafeRawBufferPointer,
        endStream: Bool,
        maxFrameSize: Int,
        into buffer: inout ByteBuffer
    ) {
        var offset = 0
        var first = true
        repeat {
            let length = min(maxFrameSize, block.count - offset)
            let last = offset + length == block.count
            var flags: UInt8 = last ? HTTP2Flags.endHeaders : 0
            if first && endStream { flags |= HTTP2Flags.endStream }
            writeFrame(
                type: first ? .headers : .continuation,
                flags: flags,
                stream: stream,
                payload: UnsafeRawBufferPointer(rebasing: block[offset..<(offset + length)]),
                into: &buffer
            )
            offset += length
            first = false
        } while offset < block.count
    }

    /// A frame header and its payload, in one write (one capacity and sharing check).
    @inline(__always)
    static func writeFrame(
        type: HTTP2FrameType,
        flags: UInt8,
        stream: UInt32,
        payload: UnsafeRawBufferPointer,
        into buffer: inout ByteBuffer
    ) {
        buffer.writeRaw(maximum: 9 + payload.count) { out in
            storeHeader(length: payload.count, type: type, flags: flags, stream: stream, at: out)
            if let base = payload.baseAddress, payload.count > 0 {
                (out + 9).copyMemory(from: base, byteCount: payload.count)
            }
            return 9 + payload.count
        }
    }

    public static func writeSettings(_ settings: [HTTP2Setting], into buffer: inout ByteBuffer) {
        writeHeader(length: 6 * settings.count, type: .settings, flags: 0, stream: 0, into: &buffer)
        for setting in settings {
            buffer.writeInteger(setting.identifier.rawValue)
            buffer.writeInteger(setting.value)
        }
    }

    public static func writeSettingsAck(into buffer: inout ByteBuffer) {
        writeHeader(length: 0, type: .settings, flags: HTTP2Flags.ack, stream: 0, into: &buffer)
    }

    public static func writePing(opaque: UInt64, ack: Bool, into buffer: inout ByteBuffer) {
        writeHeader(length: 8, type: .ping, flags: ack ? HTTP2Flags.ack : 0, stream: 0, into: &buffer)
        buffer.writeInteger(opaque)
    }

    public static func writeWindowUpdate(stream: UInt32, increment: UInt32, into buffer: inout ByteBuffer) {
        writeHeader(length: 4, type: .windowUpdate, flags: 0, stream: stream, into: &buffer)
        buffer.writeInteger(increment & 0x7FFF_FFFF)
    }

    public static func writeRstStream(stream: UInt32, code: HTTP2ErrorCode, into buffer: inout ByteBuffer) {
        writeHeader(length: 4, type: .rstStream, flags: 0, stream: stream, into: &buffer)
        buffer.writeInteger(code.rawValue)
    }

    /// GOAWAY; APNs puts a JSON `{"reason": …}` in `debugData`.
    public static func writeGoAway(
        lastStream: UInt32,
        code: HTTP2ErrorCode,
        debugData: UnsafeRawBufferPointer,
        into buffer: inout ByteBuffer
    ) {
        writeHeader(length: 8 + debugData.count, type: .goAway, flags: 0, stream: 0, into: &buffer)
        buffer.writeInteger(lastStream & 0x7FFF_FFFF)
        buffer.writeInteger(code.rawValue)
        buffer.writeBytes(debugData)
    }
}
