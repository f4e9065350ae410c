import FanoutHPACK
import NIOCore

/// Writes HTTP/2 frames straight into a caller's buffer with plain stores, each frame in one
/// write (RFC 9113 §4.1; layout drawn on `HTTP2FrameDecoder`).
public enum HTTP2FrameEncoder {
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
        into buffer: inout OutputBuffer
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
        into buffer: inout OutputBuffer
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

    /// A frame header and its payload, in one write (one capacity check).
    @inline(__always)
    static func writeFrame(
        type: HTTP2FrameType,
        flags: UInt8,
        stream: UInt32,
        payload: UnsafeRawBufferPointer,
        into buffer: inout OutputBuffer
    ) {
        buffer.writeRaw(maximum: 9 + payload.count) { out in
            storeHeader(length: payload.count, type: type, flags: flags, stream: stream, at: out)
            if let base = payload.baseAddress, payload.count > 0 {
                (out + 9).copyMemory(from: base, byteCount: payload.count)
            }
            return 9 + payload.count
        }
    }

    public static func writeSettings(_ settings: [HTTP2Setting], into buffer: inout OutputBuffer) {
        buffer.writeRaw(maximum: 9 + 6 * settings.count) { out in
            storeHeader(length: 6 * settings.count, type: .settings, flags: 0, stream: 0, at: out)
            for (index, setting) in settings.enumerated() {
                out.storeBigEndian(setting.identifier.rawValue, at: 9 + 6 * index)
                out.storeBigEndian(setting.value, at: 9 + 6 * index + 2)
            }
            return 9 + 6 * settings.count
        }
    }

    public static func writeSettingsAck(into buffer: inout OutputBuffer) {
        writeFrame(
            type: .settings,
            flags: HTTP2Flags.ack,
            stream: 0,
            payload: .init(start: nil, count: 0),
            into: &buffer
        )
    }

    public static func writePing(opaque: UInt64, ack: Bool, into buffer: inout OutputBuffer) {
        withUnsafeBytes(of: opaque.bigEndian) { payload in
            writeFrame(type: .ping, flags: ack ? HTTP2Flags.ack : 0, stream: 0, payload: payload, into: &buffer)
        }
    }

    public static func writeWindowUpdate(stream: UInt32, increment: UInt32, into buffer: inout OutputBuffer) {
        withUnsafeBytes(of: (increment & 0x7FFF_FFFF).bigEndian) { payload in
            writeFrame(type: .windowUpdate, flags: 0, stream: stream, payload: payload, into: &buffer)
        }
    }

    public static func writeRstStream(stream: UInt32, code: HTTP2ErrorCode, into buffer: inout OutputBuffer) {
        withUnsafeBytes(of: code.rawValue.bigEndian) { payload in
            writeFrame(type: .rstStream, flags: 0, stream: stream, payload: payload, into: &buffer)
        }
    }

    /// GOAWAY; APNs puts a JSON `{"reason": …}` in `debugData`.
    public static func writeGoAway(
        lastStream: UInt32,
        code: HTTP2ErrorCode,
        debugData: UnsafeRawBufferPointer,
        into buffer: inout OutputBuffer
    ) {
        buffer.writeRaw(maximum: 17 + debugData.count) { out in
            storeHeader(length: 8 + debugData.count, type: .goAway, flags: 0, stream: 0, at: out)
            out.storeBigEndian(lastStream & 0x7FFF_FFFF, at: 9)
            out.storeBigEndian(code.rawValue, at: 13)
            if let base = debugData.baseAddress, debugData.count > 0 {
                (out + 17).copyMemory(from: base, byteCount: debugData.count)
            }
            return 17 + debugData.count
        }
    }
}
