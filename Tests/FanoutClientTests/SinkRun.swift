import FanoutAPNs
import FanoutAssembly
import FanoutClient
import FanoutEndpoint
import FanoutHTTP2
import FanoutPayload
import FanoutPush
import FanoutReport
import FanoutSink
import FanoutTestSupport
import FanoutTokens
import Foundation
import NIOCore
import NIOPosix
import Testing

/// Runs the load engine against a mock APNs in this process: the tests of `LoadEngine`,
/// `LoadConnection` and the open model share it.
enum SinkRun {
    struct Outcome {
        var report: LoadEngine.Report
        var sink: SinkSummary
        var reconciliation: Reconciliation
        var snapshot: LoadSnapshot { report.snapshot }
    }

    static let poll = try! String(contentsOfFile: repositoryRoot + "/fixtures/poll.json", encoding: .utf8)

    /// Sends `count` generated tokens' poll notifications to a sink with `scenario`.
    static func send(
        _ count: UInt64,
        scenario: SinkScenario = .init(),
        connections: Int = 2,
        streams: Int = 100,
        sinkStreams: UInt32? = nil,
        batchTokens: Int = 256,
        source: TokenSource? = nil,
        shard: TokenShard = .all,
        configure: (inout LoadConfiguration) -> Void = { _ in },
        beforeRun: (LoadEngine, any EventLoopGroup) -> Void = { _, _ in }
    ) throws -> Outcome {
        let sinkGroup = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        defer { try? sinkGroup.syncShutdownGracefully() }
        var sinkConfiguration = SinkConfiguration()
        sinkConfiguration.scenario = scenario
        if let sinkStreams { sinkConfiguration.maxConcurrentStreams = sinkStreams }
        let sink = try Sink(host: "127.0.0.1", port: 0, group: sinkGroup, configuration: sinkConfiguration)
        let senderGroup = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        defer { try? senderGroup.syncShutdownGracefully() }
        let tokens = try TokenStream(
            source ?? .generated(TokenGenerator(count: count, seed: 7)),
            configuration: TokenReaderConfiguration(
                shard: shard,
                batchBytes: max(16 * 1024, batchTokens * 200),
                batchTokens: batchTokens,
                // A batch goes back to the reader once all its tokens are answered: enough of
                // them that every stream can hold a token of its own.
                batchCount: max(16, connections * streams / batchTokens + 8)
            )
        )
        var configuration = LoadConfiguration(
            host: "127.0.0.1",
            port: sink.localAddress.port!,
            headers: try NotificationHeaders(topic: "com.example.app"),
            encoder: PayloadEncoder(template: try PayloadTemplate(json: Array(poll.utf8)))
        )
        configuration.shape.connections = connections
        configuration.shape.streamsPerConnection = streams
        configuration.shape.deadline = .seconds(120)
        configure(&configuration)
        let engine = LoadEngine(configuration: configuration, tokens: tokens, group: senderGroup)
        beforeRun(engine, senderGroup)
        let report = engine.run()
        sink.drain(grace: .seconds(2))
        let summary = sink.statistics.summary
        return Outcome(
            report: report,
            sink: summary,
            reconciliation: Reconciliation(
                client: report.snapshot,
                sinkRequests: summary.requests,
                sinkAccepted: summary.accepted,
                sinkRejected: PushReason.counts(summary.rejected),
                sinkDigest: summary.digest
            )
        )
    }

    /// The digest of every token's notification, computed apart from the engine.
    static func expectedDigest(_ count: UInt64) throws -> NotificationDigest {
        let generator = TokenGenerator(count: count, seed: 7)
        let encoder = PayloadEncoder(template: try PayloadTemplate(json: Array(poll.utf8)))
        var digest = NotificationDigest()
        for index in 0..<count {
            let token = generator.token(index)
            var body = ByteBuffer()
            _ = try encoder.encode(token: token, sequence: index, into: &body)
            Array(token.utf8).withUnsafeBytes { token in
                body.withUnsafeReadableBytes { digest.add(token: token, payload: $0) }
            }
        }
        return digest
    }
}
