import FanoutClient
import FanoutTokens
import NIOPosix

/// A load engine on event loops of its own, with its metrics endpoint (`--metrics`) for as long
/// as it lives: how `fanout send` and `fanout run` start their sender. `close()` stops the
/// endpoint, then the loops.
final class SenderEngine {
    let engine: LoadEngine
    private let group: MultiThreadedEventLoopGroup
    private let metrics: SenderMetrics?

    /// Starts `threads` event loops and the engine on them, hands the engine to `started` (to
    /// cancel it), then serves its metrics at `address` and prints "metrics on HOST:PORT".
    init(
        configuration: LoadConfiguration,
        tokens: TokenStream,
        threads: Int,
        metrics address: ServedAddress?,
        started: (LoadEngine) -> Void
    ) throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: threads)
        let engine = LoadEngine(configuration: configuration, tokens: tokens, group: group)
        started(engine)
        do {
            metrics = try address.map { try SenderMetrics(at: $0, engine: engine) }
        } catch {
            try? group.syncShutdownGracefully()
            throw error
        }
        self.group = group
        self.engine = engine
        if let metrics { StandardStream.output.write("metrics on \(metrics.address)\n".utf8) }
    }

    func close() {
        metrics?.close()
        try? group.syncShutdownGracefully()
    }
}
