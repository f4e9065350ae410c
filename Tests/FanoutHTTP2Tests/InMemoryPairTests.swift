import FanoutHTTP2
import NIOCore
import Testing

/// `HTTP2InMemoryPair`: two connections and their delegates joined without a socket.
@Suite struct InMemoryPairTests {
    /// Sends `total` requests, keeping `window` open; counts what comes back.
    struct Client: HTTP2ConnectionDelegate {
        var total: Int
        var window: Int
        var sent = 0
        var answered = 0
        var ended = false

        mutating func connectionStarted(_ connection: inout HTTP2Writer) { sendMore(&connection) }

        mutating func handle(_ event: HTTP2Event, connection: inout HTTP2Writer) {
            if case .message(let response) = event, response.status == 200 { answered += 1 }
            sendMore(&connection)
            if answered == total && connection.sentGoAway == nil { connection.goAway() }
        }

        mutating func sendMore(_ connection: inout HTTP2Writer) {
            guard connection.hasPeerSettings else { return }
            while sent < total, sent - answered < window {
                let fields = HTTP2Fields([(":method", "POST"), (":scheme", "http"), (":path", "/\(sent)")])
                _ = try? connection.sendRequest(fields, body: ByteBuffer(string: "{}"), tag: UInt64(sent))
                sent += 1
            }
        }

        mutating func connectionEnded(_ connection: borrowing HTTP2Connection, error: (any Error)?) { ended = true }
    }

    /// Answers every request 200.
    struct Server: HTTP2ConnectionDelegate {
        var requests = 0
        var ended = false

        mutating func handle(_ event: HTTP2Event, connection: inout HTTP2Writer) {
            guard case .message(let request) = event else { return }
            requests += 1
            _ = connection.respond(stream: request.stream, HTTP2Fields([(":status", "200")]), body: nil)
        }

        mutating func connectionEnded(_ connection: borrowing HTTP2Connection, error: (any Error)?) { ended = true }
    }

    @Test func requestsAndAnswersMoveUntilBothSidesAreQuiet() {
        var pair = HTTP2InMemoryPair(client: Client(total: 250, window: 10), server: Server())
        let turns = pair.run(maxTurns: 1000)
        #expect(pair.clientDelegate.sent == 250)
        #expect(pair.clientDelegate.answered == 250)
        #expect(pair.serverDelegate.requests == 250)
        #expect(pair.clientDelegate.ended && pair.serverDelegate.ended)
        // 25 round trips of 10, plus the SETTINGS exchange and the GOAWAY.
        #expect(turns.map { (25...29).contains($0) } == true)
    }

    @Test func turnsRunningOutIsReported() {
        var pair = HTTP2InMemoryPair(client: Client(total: .max, window: 1), server: Server())
        #expect(pair.run(maxTurns: 20) == nil)
        #expect(pair.clientDelegate.ended && pair.serverDelegate.ended)
        #expect(pair.serverDelegate.requests >= 15)
    }
}
