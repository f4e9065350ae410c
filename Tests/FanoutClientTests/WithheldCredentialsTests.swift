import FanoutAPNs
import FanoutClient
import FanoutEndpoint
import FanoutHTTP2
import FanoutPayload
import FanoutSink
import FanoutTokens
import NIOCore
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
