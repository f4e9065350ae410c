import FanoutHPACK
import FanoutHTTP2
import FanoutTestSupport
import NIOCore
import Testing

/// A frame as one line, the same format the Python peer prints.
func describe(_ frame: HTTP2Frame) -> String {
    switch frame {
    case .data(let stream, let payload, let endStream, _):
        "DATA \(stream) \(endStream ? 1 : 0) \(hexString(payload.readableBytesView))"
    case .headers(let stream, let block, let endStream):
        "HEADERS \(stream) \(endStream ? 1 : 0) \(hexString(block.readableBytesView))"
    case .priority(let stream): "PRIORITY \(stream)"
    case .rstStream(let stream, let code): "RST_STREAM \(stream) \(code.rawValue)"
    case .settings(let settings):
        "SETTINGS 0 " + settings.map { "\($0.identifier.rawValue)=\($0.value)" }.joined(separator: ",")
    case .settingsAck: "SETTINGS 1 "
    case .ping(let opaque, let ack): "PING \(ack ? 1 : 0) \(String(format: "%016llx", opaque))"
    case .goAway(let last, let code, let debug): "GOAWAY \(last) \(code.rawValue) \(hexString(debug.readableBytesView))"
    case .windowUpdate(let stream, let increment): "WINDOW_UPDATE \(stream) \(increment)"
    }
}

/// Every frame in `bytes`, fed `chunk` bytes at a time; `leftover` is what waits for more.
func decodeAll(
    _ bytes: [UInt8],
    decoder: inout HTTP2FrameDecoder,
    chunk: Int = .max,
    leftover: UnsafeMutablePointer<Int>? = nil
) throws(HTTP2FrameError) -> [HTTP2Frame] {
    var buffer = ByteBuffer()
    var frames: [HTTP2Frame] = []
    var offset = 0
    while offset < bytes.count {
        let end = min(bytes.count, offset + chunk)
        buffer.writeBytes(bytes[offset..<end])
        offset = end
        while let frame = try decoder.nextFrame(from: &buffer) { frames.append(frame) }
    }
    leftover?.pointee = buffer.readableBytes
    return frames
}

@Suite(.requires(.hyperframe)) struct HTTP2FrameInteroperabilityTests {
    @Test(arguments: [1, 7, 1000])
    func fanoutReadsWhatHyperframeWrites(chunk: Int) throws {
        let lines = try PythonPeer.run("frames_peer.py", ["make"]).split(
            separator: "\n",
            omittingEmptySubsequences: false
        )
        var decoder = HTTP2FrameDecoder()
        var leftover = -1
        let frames = try decodeAll(
            bytes(fromHex: String(lines[0])),
            decoder: &decoder,
            chunk: chunk,
            leftover: &leftover
        )
        #expect(frames.map(describe) == lines.dropFirst().filter { !$0.isEmpty }.map(String.init))
        #expect(leftover == 0)
    }

    @Test func hyperframeReadsWhatFanoutWrites() throws {
        var buffer = OutputBuffer()
        HTTP2FrameEncoder.writeSettings(
            [.init(.maxConcurrentStreams, 1000), .init(.initialWindowSize, 1 << 20)],
            into: &buffer
        )
        HTTP2FrameEncoder.writeSettingsAck(into: &buffer)
        let block = (0..<40).map { UInt8($0) }
        block.withUnsafeBytes {
            HTTP2FrameEncoder.writeHeaders(stream: 1, block: $0, endStream: false, maxFrameSize: 16, into: &buffer)
        }
        Array("{\"aps\":{}}".utf8).withUnsafeBytes {
            HTTP2FrameEncoder.writeData(stream: 1, payload: $0, endStream: true, into: &buffer)
        }
        HTTP2FrameEncoder.writePing(opaque: 0x0102_0304_0506_0708, ack: true, into: &buffer)
        HTTP2FrameEncoder.writeWindowUpdate(stream: 3, increment: 12345, into: &buffer)
        HTTP2FrameEncoder.writeRstStream(stream: 5, code: .refusedStream, into: &buffer)
        Array("{\"reason\":\"Shutdown\"}".utf8).withUnsafeBytes {
            HTTP2FrameEncoder.writeGoAway(lastStream: 7, code: .noError, debugData: $0, into: &buffer)
        }
        let output = try PythonPeer.run("frames_peer.py", ["parse"], input: hexString(Array(buffer.bytes)))
        #expect(
            output.split(separator: "\n").map(String.init) == [
                "SETTINGS 0 3=1000,4=1048576",
                "SETTINGS 1 ",
                "HEADERS 1 0 \(hexString(block[0..<16]))",
                "CONTINUATION 1 0 \(hexString(block[16..<32]))",
                "CONTINUATION 1 1 \(hexString(block[32..<40]))",
                "DATA 1 1 \(hexString(Array("{\"aps\":{}}".utf8)))",
                "PING 1 0102030405060708",
                "WINDOW_UPDATE 3 12345",
                "RST_STREAM 5 7",
                "GOAWAY 7 0 \(hexString(Array("{\"reason\":\"Shutdown\"}".utf8)))",
            ]
        )
    }
}

@Suite struct HTTP2FrameValidationTests {
    /// A frame header and payload, built by hand.
    func frame(_ type: UInt8, _ flags: UInt8, _ stream: UInt32, _ payload: [UInt8]) -> [UInt8] {
        let length = payload.count
        return [UInt8(length >> 16), UInt8((length >> 8) & 0xFF), UInt8(length & 0xFF), type, flags]
            + withUnsafeBytes(of: stream.bigEndian, Array.init) + payload
    }

    struct Bad: Sendable, CustomTestStringConvertible {
        let bytes: [UInt8]
        let code: HTTP2ErrorCode
        let stream: UInt32?
        let says: String
        var testDescription: String { says }
    }

    static let cases: [Bad] = {
        let f = HTTP2FrameValidationTests()
        return [
            Bad(bytes: f.frame(0x0, 0, 0, [1]), code: .protocolError, stream: nil, says: "DATA on stream 0"),
            Bad(bytes: f.frame(0x1, 4, 0, [0x82]), code: .protocolError, stream: nil, says: "HEADERS on stream 0"),
            Bad(
                bytes: f.frame(0x0, 0x8, 1, [3, 1, 2]),
                code: .protocolError,
                stream: nil,
                says: "padding is as long as its payload"
            ),
            Bad(
                bytes: f.frame(0x1, 0x24, 1, [1, 2]),
                code: .frameSizeError,
                stream: nil,
                says: "shorter than its 5 priority bytes"
            ),
            Bad(
                bytes: f.frame(0x2, 0, 1, [0, 0, 0, 0]),
                code: .frameSizeError,
                stream: 1,
                says: "PRIORITY must be 5 bytes"
            ),
            Bad(
                bytes: f.frame(0x3, 0, 1, [0, 0, 0]),
                code: .frameSizeError,
                stream: nil,
                says: "RST_STREAM must be 4 bytes"
            ),
            Bad(bytes: f.frame(0x4, 0, 1, []), code: .protocolError, stream: nil, says: "SETTINGS on stream 1"),
            Bad(
                bytes: f.frame(0x4, 1, 0, [0, 0, 0, 0, 0, 0]),
                code: .frameSizeError,
                stream: nil,
                says: "a SETTINGS ACK must be empty"
            ),
            Bad(
                bytes: f.frame(0x4, 0, 0, [0, 3, 0, 0, 0]),
                code: .frameSizeError,
                stream: nil,
                says: "whole number of 6-byte settings"
            ),
            Bad(bytes: f.frame(0x5, 4, 1, [0, 0, 0, 2]), code: .protocolError, stream: nil, says: "PUSH_PROMISE"),
            Bad(
                bytes: f.frame(0x6, 0, 0, [1, 2, 3, 4, 5, 6, 7]),
                code: .frameSizeError,
                stream: nil,
                says: "PING must be 8 bytes"
            ),
            Bad(
                bytes: f.frame(0x6, 0, 3, [0, 0, 0, 0, 0, 0, 0, 0]),
                code: .protocolError,
                stream: nil,
                says: "PING on stream 3"
            ),
            Bad(
                bytes: f.frame(0x7, 0, 0, [0, 0, 0, 1]),
                code: .frameSizeError,
                stream: nil,
                says: "GOAWAY is shorter than 8 bytes"
            ),
            Bad(
                bytes: f.frame(0x8, 0, 0, [0, 0, 0, 0]),
                code: .protocolError,
                stream: nil,
                says: "a WINDOW_UPDATE of 0"
            ),
            Bad(
                bytes: f.frame(0x8, 0, 5, [0, 0, 0, 0]),
                code: .protocolError,
                stream: 5,
                says: "a WINDOW_UPDATE of 0"
            ),
            Bad(
                bytes: f.frame(0x8, 0, 5, [0, 0, 1]),
                code: .frameSizeError,
                stream: nil,
                says: "WINDOW_UPDATE must be 4 bytes"
            ),
            Bad(
                bytes: f.frame(0x9, 4, 1, [0x82]),
                code: .protocolError,
                stream: nil,
                says: "CONTINUATION without a HEADERS"
            ),
            Bad(
                bytes: f.frame(0x1, 0, 1, [0x82]) + f.frame(0x0, 0, 1, [1]),
                code: .protocolError,
                stream: nil,
                says: "came inside a header block"
            ),
            Bad(
                bytes: f.frame(0x1, 0, 1, [0x82]) + f.frame(0x9, 4, 3, [0x82]),
                code: .protocolError,
                stream: nil,
                says: "came inside a header block"
            ),
            Bad(
                bytes: f.frame(0x0, 0, 1, [UInt8](repeating: 0, count: 16_385)),
                code: .frameSizeError,
                stream: nil,
                says: "over the 16384 allowed"
            ),
        ]
    }()

    @Test(arguments: cases)
    func badFramesEndWithTheRightError(_ bad: Bad) {
        var decoder = HTTP2FrameDecoder()
        do {
            _ = try decodeAll(bad.bytes, decoder: &decoder)
            Issue.record("expected \(bad.code)")
        } catch {
            #expect(error.code == bad.code)
            #expect(error.stream == bad.stream)
            #expect(error.reason.contains(bad.says), "\(error)")
        }
    }

    @Test func unknownFrameTypesAreSkipped() throws {
        var decoder = HTTP2FrameDecoder()
        let bytes = frame(0xFA, 0xFF, 7, [1, 2, 3]) + frame(0x6, 0, 0, [0, 0, 0, 0, 0, 0, 0, 9])
        #expect(try decodeAll(bytes, decoder: &decoder).map(describe) == ["PING 0 0000000000000009"])
    }

    @Test func dataCountsPaddingForFlowControl() throws {
        var decoder = HTTP2FrameDecoder()
        let frames = try decodeAll(frame(0x0, 0x9, 1, [4, 0x61, 0x62, 0, 0, 0, 0]), decoder: &decoder)
        guard case .data(_, let payload, let endStream, let counted) = frames.first else {
            Issue.record("expected DATA")
            return
        }
        #expect(Array(payload.readableBytesView) == [0x61, 0x62])
        #expect(endStream)
        #expect(counted == 7)
    }

    @Test func headerBlocksOverTheLimitAreRefused() {
        var decoder = HTTP2FrameDecoder(maxHeaderBlockSize: 20)
        let bytes =
            frame(0x1, 0, 1, [UInt8](repeating: 0x82, count: 15))
            + frame(0x9, 4, 1, [UInt8](repeating: 0x82, count: 15))
        #expect(throws: HTTP2FrameError.self) { try decodeAll(bytes, decoder: &decoder) }
    }

    @Test func settingsBoundsAreChecked() throws {
        var settings = HTTP2Settings()
        try settings.apply(.init(.maxFrameSize, 20_000))
        #expect(settings.maxFrameSize == 20_000)
        #expect(throws: HTTP2FrameError.self) { try settings.apply(.init(.maxFrameSize, 16_383)) }
        #expect(throws: HTTP2FrameError.self) { try settings.apply(.init(.maxFrameSize, 1 << 24)) }
        #expect(throws: HTTP2FrameError.self) { try settings.apply(.init(.initialWindowSize, 1 << 31)) }
        #expect(throws: HTTP2FrameError.self) { try settings.apply(.init(.enablePush, 2)) }
        try settings.apply(.init(.init(rawValue: 0x99), 5))
        try settings.apply(.init(.maxConcurrentStreams, 1000))
        #expect(settings.maxConcurrentStreams == 1000)
    }

    /// Random bytes never crash the decoder, and what they come to does not depend on how
    /// they arrive: fed a few bytes at a time, the same frames and bytes left waiting, or the
    /// same error (code and stream), as fed at once. Both outcomes occur.
    @Test func randomBytesDecodeAlikeInAnyChunks() {
        /// The frames and what is left waiting, or the error.
        func outcome(_ bytes: [UInt8], chunk: Int) -> Result<([String], Int), HTTP2FrameError> {
            var decoder = HTTP2FrameDecoder()
            var leftover = 0
            do throws(HTTP2FrameError) {
                return .success(
                    (try decodeAll(bytes, decoder: &decoder, chunk: chunk, leftover: &leftover).map(describe), leftover)
                )
            } catch {
                return .failure(error)
            }
        }
        var state: UInt64 = 99
        var (decoded, refused) = (0, 0)
        for _ in 0..<20_000 {
            var bytes: [UInt8] = []
            for _ in 0..<Int(state % 64) {
                state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                bytes.append(UInt8(truncatingIfNeeded: state >> 56))
            }
            state = state &* 6_364_136_223_846_793_005 &+ 1
            let chunk = Int(state % 9) + 1
            switch (outcome(bytes, chunk: .max), outcome(bytes, chunk: chunk)) {
            case (.success(let whole), .success(let chunked)):
                decoded += 1
                if whole != chunked { Issue.record("\(bytes) in \(chunk)-byte chunks: \(chunked), at once \(whole)") }
            case (.failure(let whole), .failure(let chunked)):
                refused += 1
                if (whole.code, whole.stream) != (chunked.code, chunked.stream) {
                    Issue.record("\(bytes) in \(chunk)-byte chunks: \(chunked), at once \(whole)")
                }
            case (let whole, let chunked):
                Issue.record("\(bytes) in \(chunk)-byte chunks: \(chunked), at once \(whole)")
            }
        }
        #expect(decoded > 0 && refused > 0, "\(decoded) decoded, \(refused) refused")
    }
}
