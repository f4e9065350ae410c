import Atomics
import Dispatch
import FanoutAPNs
import FanoutHTTP2
import FanoutTokens
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// Fans a token set out over a pool of HTTP/2 connections as fast as they go (the closed
/// model: each connection keeps its streams full), until every token has a final outcome.
///
/// Connections are spread over the group's event loops. One that ends while work remains is
/// replaced: at once (with up to 50 ms of jitter, so a server's GOAWAY to every connection does
/// not bring them all back in the same instant) when it made progress, else after an
/// exponential backoff with full jitter (50 ms doubling to 5 s). After 8 attempts in a row
/// without progress the run gives up: what is left fails with `connectionLost`.
public final class LoadEngine: Sendable {
    public let configuration: LoadConfiguration
    public let statistics = LoadStatistics()
    private let stream: TokenStream
    private let group: any EventLoopGroup
    private let cancelled = ManagedAtomic(false)
    private let channels = NIOLockedValueBox<[ObjectIdentifier: any Channel]>([:])

    public init(configuration: LoadConfiguration, tokens: TokenStream, group: any EventLoopGroup) {
        self.configuration = configuration
        stream = tokens
        self.group = group
    }

    /// What a run did.
    public struct Report: Sendable {
        public var snapshot: LoadSnapshot
        public var elapsed: Duration
        /// What the token reader saw (tokens read, lines turned down, its error if any).
        public var tokens: TokenStreamSummary?
        /// Whether it was stopped (by `cancel()` or the deadline) before the end.
        public var cancelled: Bool
        /// Why it gave up early, if it did.
        public var abandoned: String?
    }

    /// Stops the run: connections close, and what is not finished fails as cancelled.
    public func cancel() {
        cancelled.store(true, ordering: .relaxed)
        for channel in channels.withLockedValue({ Array($0.values) }) { channel.close(promise: nil) }
    }

    /// Runs to the end (or the deadline, or `cancel()`), blocking the calling thread, which must
    /// not be one of the group's event loops.
    public func run() -> Report {
        let started = ContinuousClock.now
        let feed = NotificationFeed(stream)
        let endings = Endings()
        var active = 0
        var failuresInARow = 0
        var random = SeededRandom(seed: 0xFA_2007)
        var abandoned: String?
        var seed: UInt64 = 1

        func open(after delay: TimeAmount) {
            active += 1
            seed &+= 1
            let attempt = Attempt(endings: endings)
            let connectionSeed = seed
            let configuration = configuration
            let statistics = statistics
            let channels = channels
            let loop = group.next()
            statistics.connectionsOpened.wrappingIncrement(ordering: .relaxed)
            loop.scheduleTask(in: delay) {
                HTTP2Channels.connect(
                    host: configuration.host,
                    port: configuration.port,
                    group: loop,
                    transport: configuration.transport,
                    serverHostname: configuration.authority ?? configuration.host,
                    delegate: {
                        LoadConnection(
                            configuration: configuration,
                            feed: feed,
                            statistics: statistics,
                            seed: connectionSeed,
                            ended: { madeProgress in attempt.end(madeProgress: madeProgress) }
                        )
                    }
                ).whenComplete { result in
                    switch result {
                    case .success(let (channel, _)):
                        let key = ObjectIdentifier(channel)
                        channels.withLockedValue { $0[key] = channel }
                        channel.closeFuture.whenComplete { _ in
                            channels.withLockedValue { _ = $0.removeValue(forKey: key) }
                        }
                    case .failure:
                        statistics.connectionFailures.wrappingIncrement(ordering: .relaxed)
                        attempt.end(madeProgress: false)
                    }
                }
            }
        }

        for _ in 0..<max(1, configuration.connections) { open(after: .zero) }
        while active > 0 {
            if let deadline = configuration.deadline, ContinuousClock.now - started > deadline, !isCancelled {
                cancel()
            }
            for madeProgress in endings.wait(upTo: .milliseconds(100)) {
                active -= 1
                failuresInARow = madeProgress ? 0 : failuresInARow + 1
                guard !isCancelled, !feed.isDrained else { continue }
                if failuresInARow >= Self.attemptsWithoutProgress {
                    abandoned =
                        "no connection to \(configuration.host):\(configuration.port) made progress in \(failuresInARow) attempts in a row"
                    cancel()
                    continue
                }
                let ceiling = failuresInARow == 0 ? 50 : min(5000, 50 << min(failuresInARow, 10))
                open(after: .milliseconds(Int64(random.next() % UInt64(ceiling + 1))))
            }
            // Work handed back after the last connection decided it was done.
            if active == 0 && !isCancelled && !feed.isDrained && feed.returnedWaiting > 0 { open(after: .zero) }
        }
        if isCancelled {
            stream.cancel()
            _ = stream.waitForSummary(timeout: .seconds(10))
            var counts = LoadCounts()
            for notification in feed.drain() {
                counts.fail(abandoned == nil ? .cancelled : .connectionLost)
                notification.batch.finish()
            }
            statistics.add(counts)
        }
        return Report(
            snapshot: statistics.snapshot,
            elapsed: ContinuousClock.now - started,
            tokens: stream.waitForSummary(timeout: .seconds(10)),
            cancelled: isCancelled,
            abandoned: abandoned
        )
    }

    private var isCancelled: Bool { cancelled.load(ordering: .relaxed) }

    static let attemptsWithoutProgress = 8
}

/// Connections' ends, reported from event loops and waited for by the run.
private final class Endings: Sendable {
    private let ended = NIOLockedValueBox<[Bool]>([])
    private let signal = DispatchSemaphore(value: 0)

    func post(madeProgress: Bool) {
        ended.withLockedValue { $0.append(madeProgress) }
        signal.signal()
    }

    /// The ends reported so far, waiting up to `timeout` for one.
    func wait(upTo timeout: Duration) -> [Bool] {
        let (seconds, attoseconds) = timeout.components
        let nanoseconds = Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000)
        _ = signal.wait(timeout: .now() + .nanoseconds(nanoseconds))
        return ended.withLockedValue { list in
            defer { list.removeAll() }
            return list
        }
    }
}

/// One connection attempt: its end is reported once, whether the connect failed or the
/// connection closed.
private final class Attempt: Sendable {
    private let endings: Endings
    private let reported = ManagedAtomic(false)

    init(endings: Endings) {
        self.endings = endings
    }

    func end(madeProgress: Bool) {
        guard reported.compareExchange(expected: false, desired: true, ordering: .relaxed).exchanged else { return }
        endings.post(madeProgress: madeProgress)
    }
}
