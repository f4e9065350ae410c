// The frame decoder fed arbitrary bytes, with chunking as its oracle.
//
//   input := limits(1) chunk(1) bytes*
//
// `limits` picks the largest frame (16 << (limits & 7) bytes, at most 16,384) and the most
// CONTINUATION frames a header block may take (limits >> 4). The frames and the error found by
// reading `bytes` all at once must be the frames and the error found when they arrive
// `chunk` + 1 bytes at a time.
import FanoutHTTP2
import FuzzHTTP2Support
import FuzzSupport
import NIOCore

let (client, server) = Exchange.transcript()
runFuzzer(seeds: [[0x8A, 255] + client, [0x8A, 7] + server], test)

func test(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    var input = FuzzInput(start, count)
    let limits = input.byte()
    let chunk = Int(input.byte()) + 1
    func decoder() -> HTTP2FrameDecoder {
        HTTP2FrameDecoder(
            maxFrameSize: min(16 << Int(limits & 7), 16_384),
            maxHeaderBlockSize: 4096,
            maxContinuationFrames: Int(limits >> 4)
        )
    }
    let whole = frames(ByteBuffer(bytes: input.bytes), chunk: input.bytes.count, decoder())
    let chunked = frames(ByteBuffer(bytes: input.bytes), chunk: chunk, decoder())
    precondition(whole.frames == chunked.frames, "frames differ when the bytes arrive in chunks")
    precondition(whole.errors == chunked.errors, "errors differ when the bytes arrive in chunks")
    return 0
}

/// The frames in `bytes` and the errors met, read `chunk` bytes at a time. A stream error
/// skips its frame and reading goes on, as on a connection; a connection error ends it.
func frames(
    _ bytes: ByteBuffer,
    chunk: Int,
    _ decoder: consuming HTTP2FrameDecoder
) -> (frames: [HTTP2Frame], errors: [HTTP2FrameError]) {
    var source = bytes
    var buffer = ByteBuffer()
    var frames: [HTTP2Frame] = []
    var errors: [HTTP2FrameError] = []
    while source.readableBytes > 0 {
        var piece = source.readSlice(length: min(max(chunk, 1), source.readableBytes))!
        buffer.writeBuffer(&piece)
        while true {
            do {
                guard let frame = try decoder.nextFrame(from: &buffer) else { break }
                frames.append(frame)
            } catch {
                errors.append(error)
                if error.stream == nil { return (frames, errors) }
            }
        }
    }
    return (frames, errors)
}
