import FanoutClient
import FanoutMeasure
import FanoutTokens
import NIOConcurrencyHelpers
import NIOPosix

/// Where a run's metrics endpoint waits out `--metrics-linger`: after the run's folder is
/// written, not before (a linger cut short by a signal left the folder empty, and a run with
/// an hour's linger ignored SIGTERM for the hour), and ended early by a stop signal.
final class MetricsLinger: Sendable {
    private let held = NIOLockedValueBox<SenderMetrics?>(nil)
    private let ended = NIOLockedValueBox(false)

    /// Keeps `metrics` serving until `finish()`.
    func hold(_ metrics: SenderMetrics) {
        held.withLockedValue { $0 = metrics }
        if ended.withLockedValue({ $0 }) { metrics.endLinger() }
    }

    /// Ends the linger (a stop signal): `finish()` then closes at once.
    func end() {
        ended.withLockedValue { $0 = true }
        held.withLockedValue { $0 }?.endLinger()
    }

    /// Lingers (a scrape of the final figures, the linger's time, or `end()`), then closes.
    /// The endpoint stays held while it lingers, for `end()` to reach it.
    func finish() {
        guard let metrics = held.withLockedValue({ $0 }) else { return }
        metrics.close()
        held.withLockedValue { $0 = nil }
    }
}

/// A load engine on event loops of its own, with its metrics endpoint (`--metrics`) for as long
/// as it lives: how `fanout send` and `fanout run` start their sender. `close()` stops the
/// endpoint, then the loops.
final class SenderEngine {
    let engine: LoadEngine
    private let group: MultiThreadedEventLoopGroup
    private let metrics: SenderMetrics?
    /// Where the metrics endpoint lingers after `close()` (`nil`: `close()` lingers itself).
    private let linger: MetricsLinger?

    /// Starts `threads` event loops and the engine on them, then serves its metrics at
    /// `address` and tells `reporter` where. Nothing is sent before the engine's `run`: the
    /// job hands `engine` to what may cancel it (a stop signal) first.
    init(
        configuration: LoadConfiguration,
        tokens: TokenStream,
        threads: Int,
        metrics address: ServedAddress?,
        metricsAdditions: MetricsAdditions? = nil,
        linger: MetricsLinger? = nil,
        reporter: any JobReporter
    ) throws {
        self.linger = linger
        let group = MultiThreadedEventLoopGroup(numberOfThreads: threads)
        let engine = LoadEngine(configuration: configuration, tokens: tokens, group: group)
        do {
            metrics = try address.map { try SenderMetrics(at: $0, engine: engine, additions: metricsAdditions) }
        } catch {
            try? group.syncShutdownGracefully()
            throw error
        }
        self.group = group
        self.engine = engine
        if let metrics { reporter.report(.listening(.metrics, address: metrics.address)) }
    }

    /// Stops the loops; the metrics endpoint closes too, lingering first, or is handed to
    /// `linger` to linger once the run's folder is written.
    func close() {
        if let metrics, let linger { linger.hold(metrics) } else { metrics?.close() }
        try? group.syncShutdownGracefully()
    }
}
