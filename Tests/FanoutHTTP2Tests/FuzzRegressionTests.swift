import FanoutHTTP2
import FanoutTestSupport
import NIOCore
import Testing

/// Inputs the libFuzzer targets (Fuzz/) stopped on, replayed.
@Suite struct FuzzRegressionTests {
    /// FuzzClient, 2026-11-23 (crash-e71780fc…): a server sets INITIAL_WINDOW_SIZE 0, so no
    /// request body can go; it answers each request anyway, and the client sends one more per
    /// answer, so streams half-closed by their answers pile up (6); then it lowers
    /// MAX_CONCURRENT_STREAMS to 0. RFC 9113 §5.1.2 lets the open streams finish: the client
    /// must keep them and open none. (The fuzz target's check compared the open streams with
    /// the new limit after the fact and trapped; it now checks each stream as it opens.)
    @Test func aLimitLoweredBelowTheOpenStreamsKeepsThemAndOpensNoMore() throws {
        let hex =
            "00ff00001204000000000000030000006400040000000000060000400000000408000000000000ff00010000000401000000000000250105000000018840851d752163499c7aebf81a40285672f070acd617eeacfdf6d95818438057d9bcd5d6e100000201050000000788be0000020104000000098abe0000190001000000097b22617073223a7b22616c657274223a2268656c6c6f227d7d00000201050000000b88be00000201050000000d88be00000408000000000000ff00010000000401000000000000250105000000018840851d752163499c7aebf81a40285672f070acd617eeacfdf6d95818438057d9bcd5d6e100000201050000000788be0000b9b9b9b9b9b9b9b9b9b9b9b9b9b9b922617073223a7b22616c657274223a2268656c6c6f227d7d00000201050000000b88be00000201050000000d88a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1be00000201040000000f88be000019000100000000000001000000000f7b22617073223a7b22616c65ffffffffffff2bff0000120400000000000003000000640004001000000006000012040000000000000300000000000d88be00000408000000000000ff000064000400ffffffffff7274223a227274223a"
        let bytes = FanoutTestSupport.bytes(fromHex: hex)
        let request = HTTP2Fields([
            (":method", "POST"), (":scheme", "https"), (":path", "/3/device/" + String(repeating: "ab", count: 32)),
            (":authority", "localhost"), ("apns-topic", "com.example.app"), ("apns-push-type", "alert"),
        ])
        var body = ByteBuffer()
        body.writeString(#"{"aps":{"alert":"hello"}}"#)
        var configuration = HTTP2Connection.Configuration()
        configuration.maxOutboundStreams = 64
        var client = HTTP2Connection(role: .client, configuration: configuration)
        for tag in 1...3 { _ = try client.sendRequest(request, body: body, tag: UInt64(tag)) }
        _ = client.takeOutbound()
        // The fuzz input: an options byte (0: the default configuration), a chunk byte (255:
        // 256 bytes at a time), then what the server sent.
        var input = bytes[2...]
        var buffer = ByteBuffer()
        var now: UInt64 = 0
        var opened = 0
        var limits: [UInt32?] = []
        while !input.isEmpty && client.error == nil {
            let chunk = input.prefix(256)
            input = input.dropFirst(chunk.count)
            buffer.writeBytes(chunk)
            now += 10_000_000
            client.bytesArrived(at: now, beginningBurst: true)
            HTTP2Connection.receive(&client, from: &buffer) { event, client in
                switch event {
                case .message:
                    let available = client.availableStreams
                    let open = client.openStreams
                    do {
                        _ = try client.sendRequest(request, body: body, tag: 0)
                        #expect(available > 0, "a stream opened beyond the server's limit")
                        #expect(client.openStreams == open + 1)
                        opened += 1
                    } catch {
                        #expect(available == 0, "a request refused with \(available) streams available: \(error)")
                    }
                case .remoteSettingsChanged(let settings):
                    limits.append(settings.maxConcurrentStreams)
                default:
                    break
                }
            }
            _ = client.takeOutbound()
            client.controlRepliesDelivered()
            buffer.discardReadBytes()
        }
        #expect(limits.first == 100 && limits.contains(0))
        #expect(opened == 5)
        // Six streams open under a limit of 0: kept, not reset, and no request opens a seventh.
        #expect(client.error == nil)
        #expect(client.remoteSettings.maxConcurrentStreams == 0)
        #expect(client.openStreams == 6)
        #expect(client.availableStreams == 0)
        #expect(throws: (any Error).self) { try client.sendRequest(request, body: body, tag: 0) }
        #expect(client.openStreams == 6)
    }
}
