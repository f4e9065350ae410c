import NIOCore
import Testing

@testable import FanoutHTTP2

/// When a receiver gives back the window its peer's DATA consumed (`WindowRefill`): the
/// WINDOW_UPDATEs a server writes for a client's bodies, and what the client's window is after
/// them, under each rule.
@Suite struct WindowRefillTests {
    /// A server granting RFC 9113's 65,535-byte connection window, refilled by `refill`, read
    /// `requests` requests of `body` bytes each; returns the increments it sent on stream 0.
    static func connectionUpdates(
        refill: HTTP2Connection.WindowRefill,
        requests: Int,
        body: Int
    ) -> [UInt32] {
        var configuration = HTTP2Connection.Configuration()
        configuration.connectionWindowSize = 65_535
        configuration.windowRefill = refill
        configuration.maxConcurrentStreams = 1000
        var pair = ConnectionPair(server: configuration)
        pair.respond = { _, _ in }  // held: the streams stay open, as behind a long path
        pair.run()
        let payload = ByteBuffer(repeating: 0x61, count: body)
        for _ in 0..<requests { _ = try? pair.client.sendRequest(apnsRequest(), body: payload) }
        var toServer = pair.client.takeOutbound()
        pair.server.read(&toServer)
        var written = pair.server.takeOutbound()
        var decoder = HTTP2FrameDecoder(maxFrameSize: 1 << 24 - 1)
        var increments: [UInt32] = []
        while let frame = try? decoder.nextFrame(from: &written) {
            if case .windowUpdate(0, let increment) = frame { increments.append(increment) }
        }
        return increments
    }

    /// nghttp2's rule: one update once half of 65,535 is consumed, of what was consumed; the
    /// 116 bodies after it stay below the threshold and wait. 234 bodies of 280 bytes are the
    /// most the window lets through (65,520 bytes).
    @Test func halfGivesBackOnceHalfIsConsumed() {
        let increments = Self.connectionUpdates(refill: .half, requests: 234, body: 280)
        // 117 bodies are 32,760 bytes, under 32,767: the 118th crosses it.
        #expect(increments == [118 * 280])
    }

    /// An update for each DATA frame gives the whole window back.
    @Test func eachFrameGivesBackEveryFrame() {
        let increments = Self.connectionUpdates(refill: .eachFrame, requests: 234, body: 280)
        #expect(increments.count == 234)
        #expect(increments.allSatisfy { $0 == 280 })
    }

    /// The client sends no more than the window: 65,535 bytes, the last body cut short, and
    /// the rest after the server's update.
    @Test func aClientKeepsToTheWindowAndResumesOnItsUpdate() {
        var configuration = HTTP2Connection.Configuration()
        configuration.connectionWindowSize = 65_535
        configuration.maxConcurrentStreams = 1000
        var pair = ConnectionPair(server: configuration)
        pair.respond = { _, _ in }
        pair.run()
        pair.client.recordWindowUpdates()
        let payload = ByteBuffer(repeating: 0x61, count: 280)
        for _ in 0..<300 { _ = try? pair.client.sendRequest(apnsRequest(), body: payload) }
        #expect(pair.client.dataBytesSent == 65_535)
        #expect(pair.client.connectionWindow == 0)
        pair.run()
        // The server gave back 33,040 (118 bodies), and the client sent it at once.
        #expect(pair.client.windowUpdates.map(\.increment).first == 118 * 280)
        #expect(pair.client.windowUpdates.first?.connectionWindowAfter == 118 * 280)
        #expect(pair.client.windowUpdates.allSatisfy { $0.stream == 0 })
    }

    /// A stream's window is given back by the same rule: a body three times the stream window
    /// arrives whole, and so does one through a window of a single byte (half of 1 is 0: any
    /// consumed byte is given back).
    @Test(arguments: [
        (UInt32(1000), 3000, HTTP2Connection.WindowRefill.half), (1, 10, .half), (1000, 3000, .eachFrame),
    ])
    func aStreamWindowIsGivenBackToo(window: UInt32, body: Int, refill: HTTP2Connection.WindowRefill) {
        var configuration = HTTP2Connection.Configuration()
        configuration.initialWindowSize = window
        configuration.windowRefill = refill
        var pair = ConnectionPair(server: configuration)
        pair.run()
        _ = try? pair.client.sendRequest(apnsRequest(), body: ByteBuffer(repeating: 0x61, count: body))
        pair.run()
        let bodies = pair.serverSeen.compactMap { seen -> Int? in
            if case .message(_, _, _, _, _, let length) = seen { return length }
            return nil
        }
        #expect(bodies == [body])
    }
}
