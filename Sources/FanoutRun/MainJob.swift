import FanoutAPNs
import FanoutClient
import FanoutHTTP2
import FanoutPayload
import FanoutReport
import FanoutSink
import FanoutTokens
import NIOCore
import NIOPosix

/// Fanout's main job: a mock APNs embedded in the process on a loopback port, a synthetic token
/// set fanned out to it with the seed's interactive "poll" notification, and the proof that
/// sender and sink agree on every count.
public enum MainJob {
    /// The seed's interactive notification: a poll with two URL actions (fixtures/poll.json).
    public static let poll = #"""
        {"aps":{"alert":{"title":"Poll","body":"Do you like the new design?"},"badge":1,"sound":"default","category":"poll","mutable-content":1},"category-actions":[{"name":"OK","type":"url","value":"https://example.com/ok"},{"name":"NOK","type":"url","value":"https://example.com/nok"}]}
        """#

    public struct Options: Sendable {
        /// Synthetic tokens to send.
        public var count: UInt64 = 1_000_000
        public var seed: UInt64 = 1
        /// The part of the token set this run sends (shards of one set merge with `fanout merge`).
        public var shard = TokenShard.all
        public var connections = 4
        public var streamsPerConnection = 1000
        /// A request unanswered this long is reset and tried again.
        public var streamTimeout: Duration = .seconds(30)
        /// Tries per notification (429, 5xx, timeouts, lost connections).
        public var maxAttempts = 3
        /// Event loops of the sender, and of the sink.
        public var senderThreads = 1
        public var sinkThreads = 1
        public var topic = "com.example.app"
        /// The notification; the poll when `nil`.
        public var template: PayloadTemplate?
        /// The sink's behaviour (latency, errors, faults).
        public var sink = SinkConfiguration()
        /// Open or closed, how long, the warm-up.
        public var model = LoadModel()

        public init() {}
    }

    /// Runs the job, blocking; the summary holds the reconciliation. `started` gets the engine
    /// (to cancel it on Ctrl-C) before it runs.
    public static func run(
        _ options: Options,
        started: (LoadEngine) -> Void = { _ in },
        progress: ((LoadEngine.Progress) -> Void)? = nil
    ) throws -> RunSummary {
        let template = try options.template ?? PayloadTemplate(json: Array(poll.utf8), file: "poll")
        let sinkGroup = MultiThreadedEventLoopGroup(numberOfThreads: options.sinkThreads)
        defer { try? sinkGroup.syncShutdownGracefully() }
        let sink = try Sink(host: "127.0.0.1", port: 0, group: sinkGroup, configuration: options.sink)
        defer { sink.drain(grace: .seconds(1)) }
        let port = sink.localAddress.port!

        let tokens = try TokenStream(
            .generated(TokenGenerator(count: options.count, seed: options.seed)),
            configuration: TokenReaderConfiguration(
                shard: options.shard,
                batchBytes: 64 * 1024,
                batchTokens: 1024,
                batchCount: 2 * options.connections + 8
            )
        )
        var configuration = LoadConfiguration(
            host: "127.0.0.1",
            port: port,
            headers: NotificationHeaders(topic: options.topic, pushType: template.options.pushType),
            encoder: PayloadEncoder(template: template),
            connections: options.connections,
            streamsPerConnection: options.streamsPerConnection
        )
        configuration.authority = "api.push.apple.com"
        configuration.model = options.model
        configuration.streamTimeout = options.streamTimeout
        configuration.maxAttempts = options.maxAttempts
        let senderGroup = MultiThreadedEventLoopGroup(numberOfThreads: options.senderThreads)
        defer { try? senderGroup.syncShutdownGracefully() }
        let engine = LoadEngine(configuration: configuration, tokens: tokens, group: senderGroup)
        started(engine)
        let report = engine.run(progress: progress)
        sink.drain(grace: .seconds(1))
        let sinkSummary = sink.statistics.summary
        let reconciliation = Reconciliation(
            client: report.snapshot,
            sinkRequests: sinkSummary.requests,
            sinkAccepted: sinkSummary.accepted,
            sinkRejected: sinkSummary.rejected,
            sinkDigest: sinkSummary.digest
        )
        return RunSummary(
            report: report,
            endpoint: "the embedded sink at http://127.0.0.1:\(port)",
            configuration: configuration,
            tokenSource: "generated: \(options.count), seed \(options.seed)"
                + (options.shard == .all ? "" : ", shard \(options.shard)"),
            reconciliation: reconciliation
        )
    }
}
