import NIOCore
import Testing

@testable import FanoutHTTP2

/// A client that keeps every stream it may open busy while the server moves its
/// MAX_CONCURRENT_STREAMS as APNs does: 1 until the first answer, then 1000.
@Suite struct StreamLimitChangeTests {
    @Test func aBusyClientFollowsTheLimitFromOneToAThousandWithoutErrors() {
        var server = HTTP2Connection.Configuration()
        server.maxConcurrentStreams = 1
        server.maxConcurrentStreamsBeforeAcknowledgement = 1000
        var pair = ConnectionPair(server: server)
        var raised = false
        pair.respond = { message, connection in
            connection.respond(stream: message.stream, HTTP2Fields([(":status", "200")]), body: nil)
            if !raised {
                raised = true
                connection.setMaxConcurrentStreams(1000)
            }
        }
        var sent = 0
        var answered = 0
        let total = 5000
        let body = ByteBuffer(string: "{}")
        func sendMore(_ client: inout HTTP2Writer) {
            while sent < total && client.availableStreams > 0 {
                guard (try? client.sendRequest(apnsRequest(), body: body, tag: UInt64(sent))) != nil else { break }
                sent += 1
            }
        }
        pair.client.withWriter { sendMore(&$0) }
        // As a load engine does: more requests from inside the handling of each answer, and
        // bytes delivered in pieces of 1000 as a socket would.
        for _ in 0..<100_000 {
            var toServer = pair.client.takeOutbound()
            var toClient = pair.server.takeOutbound()
            if toServer.readableBytes == 0 && toClient.readableBytes == 0 { break }
            while toServer.readableBytes > 0 {
                var piece = toServer.readSlice(length: min(1000, toServer.readableBytes))!
                var partial = pair.serverPartial
                partial.writeBuffer(&piece)
                pair.serverSeen += pair.server.read(&partial, respond: pair.respond)
                pair.serverPartial = partial
            }
            while toClient.readableBytes > 0 {
                var piece = toClient.readSlice(length: min(1000, toClient.readableBytes))!
                var partial = pair.clientPartial
                partial.writeBuffer(&piece)
                var seen: [Seen] = []
                HTTP2Connection.receive(&pair.client, from: &partial) { event, client in
                    if case .message = event { answered += 1 } else { seen.append(Seen(event)) }
                    sendMore(&client)
                }
                pair.clientSeen += seen
                pair.clientPartial = partial
            }
        }
        let problems = (pair.clientSeen + pair.serverSeen).filter {
            switch $0 {
            case .settings, .message: false
            default: true
            }
        }
        #expect(problems.isEmpty, "\(problems.count) problems, first: \(problems.prefix(3))")
        #expect(answered == total)
    }
}
