import NIOCore
import Testing

@testable import FanoutHTTP2

/// `HTTP2Writer`: what a delegate is handed. What it reads is the connection's state at that
/// moment, and what it queues is the connection's to send.
@Suite struct WriterTests {
    @Test func aWritersRequestIsTheConnectionsOwn() {
        var pair = ConnectionPair()
        pair.run()
        let before = pair.client.outbound.count
        let (stream, queued, open, available) = pair.client.withWriter { writer in
            let stream = try? writer.sendRequest(apnsRequest(), body: ByteBuffer(string: "{}"), tag: 7)
            return (stream, writer.queuedBytes, writer.openStreams, writer.availableStreams)
        }
        #expect(stream == 1)
        #expect(queued == pair.client.outbound.count)
        #expect(queued > before)
        #expect(open == 1 && pair.client.openStreams == 1)
        #expect(available == pair.client.availableStreams)
        let isOpen = pair.client.isOpen(1)
        #expect(isOpen)
        pair.run()
        #expect(pair.clientSeen.contains { if case .message(1, 7, 200, _, _, _) = $0 { true } else { false } })
    }

    /// A delegate's writer in the middle of a read tells the read's times, and what it queues
    /// there (a response, a GOAWAY) is what the peer reads next.
    @Test func aWriterInAReadSeesTheReadsTimesAndAnswersThroughIt() {
        var pair = ConnectionPair()
        pair.run()
        _ = try? pair.client.sendRequest(apnsRequest(), body: nil, tag: 1)
        _ = try? pair.client.sendRequest(apnsRequest(), body: nil, tag: 2)
        var toServer = pair.client.takeOutbound()
        pair.server.bytesArrived(at: 1_000, beginningBurst: true)
        pair.server.bytesArrived(at: 5_000, beginningBurst: false)
        var seen: [(now: UInt64, readStartedAt: UInt64, stream: UInt32)] = []
        HTTP2Connection.receive(&pair.server, from: &toServer) { event, writer in
            guard case .message(let message) = event else { return }
            seen.append((writer.now, writer.readStartedAt, message.stream))
            writer.respond(stream: message.stream, HTTP2Fields([(":status", "200")]), body: nil)
            if message.stream == 3 { writer.goAway(code: .noError) }
        }
        #expect(seen.map(\.stream) == [1, 3])
        #expect(seen.allSatisfy { $0.now == 5_000 && $0.readStartedAt == 1_000 })
        #expect(pair.server.sentGoAway == 3)
        pair.run()
        let answered = pair.clientSeen.compactMap { seen -> UInt64? in
            if case .message(_, let tag, 200, _, _, _) = seen { tag } else { nil }
        }
        #expect(answered == [1, 2])
        #expect(pair.clientSeen.contains { if case .goAway(lastStream: 3, _, _) = $0 { true } else { false } })
    }
}
