import FanoutHPACK
import NIOCore
import Testing

@testable import FanoutHTTP2

/// `HTTP2Connection.resetIncompleteRequests(openedBy:)`: streams whose requests never end give
/// their slots back; whole requests waiting for an answer are left alone.
@Suite struct IncompleteRequestTests {
    @Test func streamsStillArrivingPastTheCutoffAreResetAndTheRestKept() {
        var server = HTTP2Connection(role: .server)
        var encoder = HPACKEncoder(maximumTableSize: 4096)
        let request = [
            (":method", "POST"), (":scheme", "https"), (":path", "/3/device/" + String(repeating: "ab", count: 32)),
            (":authority", "api.push.apple.com"), ("apns-topic", "com.example.app"),
        ]
        func open(_ stream: UInt32, at now: UInt64, endStream: Bool) {
            var frames = stream == 1 ? RawFrame.clientStart : []
            frames += RawFrame.headers(
                stream: stream,
                block: RawFrame.block(request, encoder: &encoder),
                endStream: endStream
            )
            var buffer = ByteBuffer(bytes: frames)
            server.bytesArrived(at: now, beginningBurst: true)
            server.read(&buffer)
        }
        open(1, at: 1_000, endStream: false)  // never ends
        open(3, at: 2_000, endStream: true)  // whole: waits for its answer
        open(5, at: 5_000, endStream: false)  // still within the deadline
        _ = server.takeOutbound()
        #expect(server.openStreams == 3)

        let (reset, oldest) = server.resetIncompleteRequests(openedBy: 4_000)
        #expect(reset == 1)
        #expect(oldest == 5_000)
        #expect(!server.isOpen(1) && server.isOpen(3) && server.isOpen(5))
        var out = server.takeOutbound()
        var decoder = HTTP2FrameDecoder(maxFrameSize: 1 << 24 - 1)
        var frames: [HTTP2Frame] = []
        while let frame = try? decoder.nextFrame(from: &out) { frames.append(frame) }
        #expect(frames.resets == [1: .cancel])

        let again = server.resetIncompleteRequests(openedBy: 5_000)
        #expect(again.reset == 1 && again.oldestOpenedAt == nil)
        #expect(server.openStreams == 1)
    }
}
