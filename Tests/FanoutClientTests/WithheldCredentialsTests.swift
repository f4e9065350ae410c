import Atomics
import FanoutAPNs
import FanoutClient
import FanoutEndpoint
import FanoutHTTP2
import FanoutPayload
import FanoutSink
import FanoutTokens
import NIOCore
import NIOPosix
import Testing

/// A connection whose first answer refuses the run's credentials (a sink that wants provider
/// tokens, a sender with none: 403 MissingProviderToken) sends nothing more until the run has
/// decided; told the endpoint was reached elsewhere, it sends the rest. One connection and a
/// mock APNs joined in memory, so nothing here depends on timing.
@Suite struct WithheldCredentialsTests {
    static let count = 40

    /// Sends `count` notifications over one connection to a sink that refuses them all; the
    /// requests the sink saw.
    static func requestsSeen(endpointReached: Bool) throws -> Int {
        let stream = try TokenStream(
            .generated(TokenGenerator(count: UInt64(count), seed: 5)),
            configuration: TokenReaderConfiguration(batchTokens: 8, batchCount: 8)
        )
        _ = try #require(stream.waitForSummary(timeout: .seconds(30)))
        var configuration = LoadConfiguration(
            host: "127.0.0.1",
            port: 1,
            headers: try NotificationHeaders(topic: "com.example.app"),
            encoder: PayloadEncoder(template: try PayloadTemplate(json: Array(SinkRun.poll.utf8)))
        )
        configuration.shape.streamsPerConnection = 10
        let collector = IntervalCollector(
            start: NIODeadline.now().uptimeNanoseconds,
            warmUp: 0,
            loops: 1,
            interval: 86_400 * 1_000_000_000
        )
        let client = LoadConnection(
            configuration: configuration,
            feed: NotificationFeed(stream),
            statistics: LoadStatistics(),
            recorder: LoopRecorder(collector: collector),
            tickets: nil,
            seed: 1,
            endpointReached: { endpointReached },
            ended: { _, _ in }
        )
        var sinkConfiguration = SinkConfiguration()
        sinkConfiguration.tokenAuthentication = TokenAuthentication(keys: [])
        let sinkStatistics = SinkStatistics()
        var pair = HTTP2InMemoryPair(
            client: client,
            configuration.shape.http2,
            server: SinkConnection(
                configuration: sinkConfiguration,
                statistics: sinkStatistics,
                state: SinkState(scenario: sinkConfiguration.scenario),
                seed: 1,
                recorder: SinkLoopRecorder(instrument: nil)
            ),
            Sink.http2Configuration(sinkConfiguration)
        )
        // Quiet within the turns: a withheld connection waits; one that sends does so in
        // 10-stream flights.
        let turns = pair.run(maxTurns: 4 * count)
        #expect(turns != nil, "still moving after \(4 * count) round trips")
        return sinkStatistics.summary.requests
    }

    @Test func aRefusedFirstAnswerSendsNothingMoreUntilTheRunDecides() throws {
        // The sink allows one stream until a request is accepted (APNs's rule): one request.
        #expect(try Self.requestsSeen(endpointReached: false) == 1)
    }

    @Test func reachedElsewhereTheRefusalsAreThisConnectionsOwnAndItSendsThemAll() throws {
        #expect(try Self.requestsSeen(endpointReached: true) == Self.count)
    }
}

/// A run against a server that refuses the credentials on its first connection alone (403
/// InvalidProviderToken to each of its requests) and accepts them on the other, whose answers it
/// holds until 1.5 s after the refusal: the refused connection has flushed its counts by then and
/// asks to be woken for nothing, so only the run's wake-up (`RunControl.reachedEndpoint`)
/// releases it. The refusal was that connection's: the run is not unreachable, does not hang to
/// its deadline, and every notification ends in one outcome.
@Suite struct OneConnectionRefusedTests {
    /// When the refusing connection answered its first request (uptime ns; 0: not yet).
    final class Refusal: Sendable {
        let at = ManagedAtomic<UInt64>(0)
        static let hold: UInt64 = 1_500_000_000
    }

    /// The first connection's delegate refuses every request; the others' hold their answers
    /// until `Refusal.hold` after that refusal, then answer 200.
    struct Server: HTTP2ConnectionDelegate {
        let refuses: Bool
        let refusal: Refusal
        var held: [UInt32] = []

        mutating func handle(_ event: HTTP2Event, connection: inout HTTP2Writer) {
            guard case .message(let request) = event else { return }
            if refuses {
                _ = refusal.at.compareExchange(
                    expected: 0,
                    desired: NIODeadline.now().uptimeNanoseconds,
                    ordering: .relaxed
                )
                _ = connection.respond(
                    stream: request.stream,
                    HTTP2Fields([(":status", "403"), ("content-type", "application/json")]),
                    body: ByteBuffer(string: #"{"reason":"InvalidProviderToken"}"#)
                )
            } else {
                held.append(request.stream)
                answerIfDue(&connection)
            }
        }

        var nextWakeUp: NIODeadline? {
            guard !held.isEmpty else { return nil }
            let at = refusal.at.load(ordering: .relaxed)
            return .uptimeNanoseconds(at == 0 ? NIODeadline.now().uptimeNanoseconds + 10_000_000 : at + Refusal.hold)
        }

        mutating func wake(now: NIODeadline, connection: inout HTTP2Writer) { answerIfDue(&connection) }

        mutating func answerIfDue(_ connection: inout HTTP2Writer) {
            let at = refusal.at.load(ordering: .relaxed)
            guard at != 0, NIODeadline.now().uptimeNanoseconds >= at + Refusal.hold else { return }
            for stream in held {
                _ = connection.respond(stream: stream, HTTP2Fields([(":status", "200")]), body: nil)
            }
            held.removeAll()
        }
    }

    @Test func aRefusalOnOneConnectionIsThatConnectionsAndTheRunGoesOn() throws {
        let serverGroup = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        defer { try? serverGroup.syncShutdownGracefully() }
        let accepted = ManagedAtomic(0)
        let refusal = Refusal()
        let server = try HTTP2Channels.listen(
            host: "127.0.0.1",
            port: 0,
            group: serverGroup,
            makeDelegate: { _ in
                Server(refuses: accepted.wrappingIncrementThenLoad(ordering: .relaxed) == 1, refusal: refusal)
            }
        ).wait()
        defer { try? server.close().wait() }
        let senderGroup = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        defer { try? senderGroup.syncShutdownGracefully() }
        let count = 2000
        let tokens = try TokenStream(.generated(TokenGenerator(count: UInt64(count), seed: 9)))
        var configuration = LoadConfiguration(
            host: "127.0.0.1",
            port: server.localAddress!.port!,
            headers: try NotificationHeaders(topic: "com.example.app"),
            encoder: PayloadEncoder(template: try PayloadTemplate(json: Array(SinkRun.poll.utf8)))
        )
        configuration.shape.connections = 2
        configuration.shape.streamsPerConnection = 10
        configuration.shape.deadline = .seconds(30)
        let report = LoadEngine(configuration: configuration, tokens: tokens, group: senderGroup).run()
        #expect(report.gaveUp == nil, "\(String(describing: report.gaveUp))")
        #expect(!report.cancelled, "the run waited for its deadline: the refused connection was never released")
        let snapshot = report.snapshot
        let refused = snapshot.rejected[.apns(.invalidProviderToken)] ?? 0
        // The refused connection, released, sent more than its first flight of 10.
        #expect(refused > 10)
        #expect(snapshot.accepted > 0 && snapshot.accepted + refused == count)
    }
}
