import Atomics
import Dispatch
import FanoutAPNs
import FanoutHTTP2
import FanoutTokens
import Histogram
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

import struct Foundation.Date

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
        /// When it started, by the wall clock.
        public var started: Date
        /// The open model's schedule (`nil`: the closed model).
        public var schedule: ArrivalSchedule?
        public var warmUp: Duration
        /// The lag beyond which the run is invalid.
        public var maxLag: Duration

        /// The generator's worst lag behind its schedule (the open model).
        public var worstLag: Duration {
            .microseconds(snapshot.lag.totalCount == 0 ? 0 : Int64(snapshot.lag.max))
        }

        /// Why the numbers cannot be trusted, if they cannot: the generator could not keep the
        /// schedule, so the load the server saw was not the load asked for.
        public var invalidReasons: [String] {
            guard schedule != nil, worstLag > maxLag else { return [] }
            func milliseconds(_ duration: Duration) -> String {
                let value = Double(duration.wholeNanoseconds) / 1e6
                return value < 1 ? "\(Int((value * 1000).rounded())) µs" : "\(Int(value.rounded())) ms"
            }
            return ["the generator fell \(milliseconds(worstLag)) behind its schedule (limit \(milliseconds(maxLag)))"]
        }
    }

    /// Stops the run: connections close, and what is not finished fails as cancelled.
    public func cancel() {
        cancelled.store(true, ordering: .relaxed)
        for channel in channels.withLockedValue({ Array($0.values) }) { channel.close(promise: nil) }
    }

    /// How far a run has come, given to `run(progress:)` about once a second.
    public struct Progress: Sendable {
        public var elapsed: Duration
        /// Notifications with a final outcome.
        public var finished: Int
        /// Finished in the last second or so, per second.
        public var ratePerSecond: Double
        /// The latencies of the seconds closed so far.
        public var latency: Histogram<UInt64>
    }

    /// Runs to the end (or the deadline, or `cancel()`), blocking the calling thread, which must
    /// not be one of the group's event loops. `progress` is called on that thread about once a
    /// second.
    public func run(progress: ((Progress) -> Void)? = nil) -> Report {
        let started = ContinuousClock.now
        let startDate = Date()
        let startedAt = NIODeadline.now().uptimeNanoseconds
        let feed = NotificationFeed(stream)
        let tickets = configuration.model.schedule.map { ArrivalTickets(schedule: $0) }
        let endings = Endings()
        let recording = Recording(
            group: group,
            statistics: statistics,
            start: startedAt,
            warmUp: configuration.model.warmUp
        )
        var active = 0
        var failuresInARow = 0
        var random = SeededRandom(seed: 0xFA_2007)
        var abandoned: String?
        var seed: UInt64 = 1
        var nextLoop = 0
        var lastProgress = (at: started, finished: 0)

        /// Whether the run stopped taking new tokens (its schedule or duration is over).
        func scheduleEnded() -> Bool { feed.isClosed || tickets?.isExhausted == true }
        /// Whether a connection is still needed for what is left.
        func workRemains() -> Bool { scheduleEnded() ? feed.startedWaiting > 0 : !feed.isDrained }

        func open(after delay: TimeAmount) {
            active += 1
            seed &+= 1
            let attempt = Attempt(endings: endings)
            let connectionSeed = seed
            let configuration = configuration
            let statistics = statistics
            let channels = channels
            let (loop, recorder) = recording.loops[nextLoop % recording.loops.count]
            nextLoop += 1
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
                            recorder: recorder.value,
                            tickets: tickets,
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
            let elapsed = ContinuousClock.now - started
            if let deadline = configuration.deadline, elapsed > deadline, !isCancelled { cancel() }
            if let duration = configuration.model.duration, elapsed > duration { feed.close() }
            if let progress, ContinuousClock.now - lastProgress.at >= .seconds(1) {
                let finished = statistics.finished
                let seconds = Double((ContinuousClock.now - lastProgress.at).wholeNanoseconds) / 1e9
                progress(
                    Progress(
                        elapsed: elapsed,
                        finished: finished,
                        ratePerSecond: Double(finished - lastProgress.finished) / seconds,
                        latency: recording.collector.latency
                    )
                )
                lastProgress = (ContinuousClock.now, finished)
            }
            for madeProgress in endings.wait(upTo: .milliseconds(100)) {
                active -= 1
                failuresInARow = madeProgress ? 0 : failuresInARow + 1
                guard !isCancelled, workRemains() else { continue }
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
            if active == 0 && !isCancelled && workRemains() && feed.returnedWaiting > 0 { open(after: .zero) }
        }
        var counts = LoadCounts()
        if isCancelled || scheduleEnded() {
            stream.cancel()
            _ = stream.waitForSummary(timeout: .seconds(10))
            for notification in feed.drain() {
                if isCancelled || notification.firstSentAt != 0 {
                    counts.fail(abandoned == nil ? .cancelled : .connectionLost)
                } else {
                    counts.unscheduled += 1
                }
                notification.batch.finish()
            }
        }
        statistics.add(counts)
        recording.finish()
        return Report(
            snapshot: statistics.snapshot,
            elapsed: ContinuousClock.now - started,
            tokens: stream.waitForSummary(timeout: .seconds(10)),
            cancelled: isCancelled,
            abandoned: abandoned,
            started: startDate,
            schedule: configuration.model.schedule,
            warmUp: configuration.model.warmUp,
            maxLag: configuration.model.maxLag
        )
    }

    private var isCancelled: Bool { cancelled.load(ordering: .relaxed) }

    static let attemptsWithoutProgress = 8
}

/// The event loops' recorders and what merges them: each loop rolls its recorder over every
/// 250 ms, so seconds close even while its connections are idle.
private final class Recording {
    let collector: IntervalCollector
    let loops: [(any EventLoop, NIOLoopBound<LoopRecorder>)]
    private let rollers: [RepeatedTask]

    init(group: any EventLoopGroup, statistics: LoadStatistics, start: UInt64, warmUp: Duration) {
        var loops: [any EventLoop] = []
        for loop in group.makeIterator() { loops.append(loop) }
        let collector = IntervalCollector(start: start, warmUp: warmUp.wholeNanoseconds, loops: loops.count)
        statistics.record(into: collector)
        self.collector = collector
        self.loops = loops.map { loop in
            // Made on its loop: a loop-bound value must be.
            let recorder = try! loop.submit { NIOLoopBound(LoopRecorder(collector: collector), eventLoop: loop) }.wait()
            return (loop, recorder)
        }
        rollers = self.loops.map { loop, recorder in
            loop.scheduleRepeatedTask(initialDelay: .milliseconds(250), delay: .milliseconds(250)) { _ in
                recorder.value.roll(to: NIODeadline.now().uptimeNanoseconds)
            }
        }
    }

    /// Hands over every loop's last second and closes them all.
    func finish() {
        for roller in rollers { roller.cancel() }
        for (loop, recorder) in loops {
            try? loop.submit { recorder.value.finish() }.wait()
        }
        collector.closeAll()
    }
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
