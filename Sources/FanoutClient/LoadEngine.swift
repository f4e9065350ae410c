import Atomics
import Dispatch
import FanoutAPNs
import FanoutHTTP2
import FanoutMeasure
import FanoutSettings
import FanoutTokens
import Histogram
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

import struct Foundation.Date

/// Fans a token set out over a pool of HTTP/2 connections as fast as they go (the closed
/// model: each connection keeps its streams full), until every token has a final outcome.
///
/// Connections are slots of a `ConnectionPool`, spread over the group's event loops: one that
/// ends while work remains is replaced (within 50 ms after progress, after a growing backoff
/// after failures), and a slot gives up after 8 attempts in a row without progress. When every
/// slot has given up, what is left fails with `connectionLost`.
///
/// Until a connection is answered the endpoint is not known to work: a failure retrying cannot
/// heal (a name not resolved, a certificate not trusted, not HTTP/2, credentials refused on
/// every connection) ends the run at once, and refused or timed-out connects are tried again
/// until `LoadConfiguration.connectTimeout`; then what is left fails with that cause
/// (`Report.unreachable`).
public final class LoadEngine: Sendable {
    public let configuration: LoadConfiguration
    public let statistics = LoadStatistics()
    private let stream: TokenStream
    private let group: any EventLoopGroup
    private let cancelled = ManagedAtomic(false)
    /// The signal that interrupted the run and when (`interrupt(by:)`), if one did.
    private let interruption = NIOLockedValueBox<(signal: StopSignal, at: ContinuousClock.Instant)?>(nil)
    private let feed: NotificationFeed
    private let channels = NIOLockedValueBox<[ObjectIdentifier: any Channel]>([:])
    /// What the run waits on: its connections' reports, and `cancel()`.
    private let endings = Endings()

    /// The event loops a job gives the engine when not told otherwise: one sender loop already
    /// outruns h2load on h2c (docs/performance.md); TLS and wide fan-outs want more.
    public static let defaultEventLoops = 1

    public init(configuration: LoadConfiguration, tokens: TokenStream, group: any EventLoopGroup) {
        self.configuration = configuration
        stream = tokens
        self.group = group
        feed = NotificationFeed(tokens)
    }

    /// How long an interrupted run waits for what is in flight to be answered before it closes
    /// its connections: within a second of the signal the run has ended.
    public static let interruptionGrace: Duration = .milliseconds(500)

    /// What a run did.
    public struct Report: Sendable {
        public var snapshot: LoadSnapshot
        public var elapsed: Duration
        /// What the token reader saw (tokens read, lines turned down, its error if any).
        public var tokens: TokenStreamSummary?
        /// Whether it was stopped (by `cancel()`, the deadline or `interrupt(by:)`) before the end.
        public var cancelled: Bool
        /// Why it gave up early, if it did.
        public var abandoned: String?
        /// What kept it from ever reaching the endpoint, when that is why it gave up.
        public var unreachable: EndpointFailure? = nil
        /// When it started, by the wall clock: `--start-at`'s time when given (seconds and the
        /// schedule count from it), else when the run began.
        public var started: Date
        /// `--start-at`, when given.
        public var scheduledStart: Date? = nil
        /// When the first request went out (`nil`: none did); with `scheduledStart`, how late
        /// this process really began, which `fanout merge` compares across shards.
        public var firstSend: Date? = nil
        /// The open model's schedule, this run's shard of it (`nil`: the closed model).
        public var schedule: ArrivalSchedule?
        public var warmUp: Duration
        /// The lag beyond which the run is invalid.
        public var maxLag: Duration
        /// The open model: arrivals the schedule held for which no token was left (the set was
        /// shorter than the schedule), and when the first of them was due (from the start).
        /// They were not sent, so no latency stands for them. `nil`: every arrival had a token.
        public var tokensRanOut: TokensRanOut?
        /// The CPU time the sender's event-loop threads used over the run (thread clocks).
        public var senderCPU: Duration = .zero
        /// The sender's own delays, loop by loop, with each loop's CPU time.
        public var loopDelays: [LoopDelays] = []

        /// The signal that stopped the run, and how long after its start, if one did.
        public var interruption: Interruption? = nil
        /// Files written on the side (`--gone-tokens`) that lost lines: the path and the
        /// system's reason, one a line.
        public var lostWrites: [String] = []

        /// A run stopped by a signal (`LoadEngine.interrupt(by:)`).
        public struct Interruption: Sendable, Hashable {
            public var signal: StopSignal
            /// From the run's start to the signal.
            public var after: Duration
        }

        /// Arrivals without a token (`tokensRanOut`).
        public struct TokensRanOut: Sendable, Hashable {
            /// Arrivals the schedule held past the last token.
            public var arrivals: UInt64
            /// When the first of them was due, from the start.
            public var at: Duration
            /// The schedule's arrivals in all (this shard's).
            public var planned: UInt64
        }

        /// The generator's worst lag behind its schedule (the open model).
        public var worstLag: Duration {
            .microseconds(snapshot.lag.totalCount == 0 ? 0 : Int64(snapshot.lag.max))
        }

        /// Why the numbers cannot be trusted, if they cannot: the run was interrupted, the token
        /// set stopped it part-way, a file written on the side lost lines, or the generator could
        /// not keep the schedule (the load the server saw was not the load asked for).
        public var invalidReasons: [String] {
            var reasons: [String] = []
            if let interruption {
                let seconds = String(format: "%.2f", interruption.after.seconds)
                reasons.append(
                    "interrupted by \(interruption.signal.name) after \(seconds) s: \(snapshot.unsent.grouped) tokens read "
                        + "ahead were never sent"
                )
            }
            if let error = tokens?.error {
                reasons.append(
                    "the token set stopped the run at \(error) (the tokens before it were sent and are counted)"
                )
            }
            if let lost = tokens?.lostRejects { reasons.append("--rejects \(lost): the list is incomplete") }
            reasons += lostWrites
            guard schedule != nil, worstLag > maxLag else { return reasons }
            func words(_ duration: Duration) -> String {
                let value = duration.milliseconds
                return value < 1 ? "\(Int((value * 1000).rounded())) µs" : "\(Int(value.rounded())) ms"
            }
            return reasons + [
                "the generator fell \(words(worstLag)) behind its schedule (limit \(words(maxLag)))"
            ]
        }
    }

    /// Stops the run: connections close, and what is not finished fails as cancelled.
    public func cancel() {
        cancelled.store(true, ordering: .relaxed)
        for channel in channels.withLockedValue({ Array($0.values) }) { channel.close(promise: nil) }
        // A run with no connection open (all waiting to reconnect) hears it at once.
        endings.wake()
    }

    /// Stops the run because of `signal`: no new notification is sent, what is in flight has
    /// `interruptionGrace` to be answered, then `cancel()` closes the connections. Tokens read
    /// ahead and never sent are counted apart (`LoadSnapshot.unsent`), neither sent nor failed.
    /// Only the first call counts.
    public func interrupt(by signal: StopSignal) {
        let first = interruption.withLockedValue { interruption in
            guard interruption == nil else { return false }
            interruption = (signal, ContinuousClock.now)
            return true
        }
        guard first else { return }
        feed.interrupt()
        endings.wake()
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
        let model = configuration.shape.model
        // With --start-at, the run's clocks start then; connections open now.
        let now = (clock: ContinuousClock.now, date: Date(), uptime: NIODeadline.now().uptimeNanoseconds)
        let wait = model.startAt.map { UInt64(max(0, $0.timeIntervalSince(now.date)) * 1e9) } ?? 0
        let started = now.clock + .nanoseconds(Int64(wait))
        let startDate = now.date.addingTimeInterval(Double(wait) / 1e9)
        let startUptime = now.uptime + wait
        let cpuAtStart = ThreadCPUClock.perLoop(of: group)
        let tickets = model.shardSchedule.map {
            ArrivalTickets(schedule: $0, slots: configuration.shape.connections, start: wait > 0 ? startUptime : 0)
        }
        let recording = Recording(
            group: group,
            statistics: statistics,
            start: startUptime,
            warmUp: model.warmUp
        )
        var pool = ConnectionPool(slots: configuration.shape.connections, connectTimeout: configuration.connectTimeout)
        var abandoned: String?
        var unreachable: EndpointFailure?
        var lastProgress = (at: started, finished: 0)
        let deadline = configuration.shape.deadline
        let duration = configuration.shape.model.duration
        /// The run's next whole second: a progress line, and the loops' seconds merged.
        var nextSecond = Duration.seconds(1)

        /// Whether the run stopped taking new tokens (its schedule or duration is over).
        func scheduleEnded() -> Bool { feed.isClosed || tickets?.isExhausted == true }
        /// Whether a connection is still needed for what is left.
        func workRemains() -> Bool { scheduleEnded() ? feed.startedWaiting > 0 : !feed.isDrained }

        let timers = SlotTimers(slots: configuration.shape.connections)
        func open(_ slot: Int, _ delay: UInt64, timer: UInt64) {
            let (loop, recorder) = recording.loops[slot % recording.loops.count]
            self.open(
                slot: slot,
                after: .nanoseconds(Int64(delay)),
                timer: timer,
                notBefore: wait > 0 ? startUptime : 0,
                on: loop,
                recorder: recorder,
                feed,
                tickets,
                timers
            )
        }

        func perform(_ action: ConnectionPool.Action) {
            switch action {
            case .open(let slot, let delay):
                open(slot, delay, timer: timers.arm(slot))
            case .hurry(let slot, let delay):
                // Unless its timer fired meanwhile: then it is connecting already.
                if let timer = timers.rearm(slot) { open(slot, delay, timer: timer) }
            case .giveUp(let giveUp):
                abandoned = "gave up on \(configuration.host):\(configuration.port): \(giveUp.reason)"
                unreachable = giveUp.unreachable
                cancel()
            case .none:
                break
            }
        }

        pool.start(now: NIODeadline.now().uptimeNanoseconds).forEach(perform)
        // The run sleeps until a connection reports, `cancel()` is called, or the next thing
        // falls due: the deadline, the duration's end, the next whole second.
        while pool.active > 0 {
            let elapsed = ContinuousClock.now - started
            if let deadline, elapsed > deadline, !isCancelled { cancel() }
            let graceEnds = interruption.withLockedValue { $0 }.map { $0.at + Self.interruptionGrace - started }
            if let graceEnds, elapsed > graceEnds, !isCancelled { cancel() }
            if let duration, elapsed > duration { feed.close() }
            if elapsed >= nextSecond {
                // The loops' seconds are merged here, off the loops (`IntervalCollector`).
                recording.collector.drain()
                if let progress, elapsed >= .zero {
                    let finished = statistics.finished
                    let seconds = (ContinuousClock.now - lastProgress.at).seconds
                    progress(
                        Progress(
                            elapsed: elapsed,
                            finished: finished,
                            ratePerSecond: seconds > 0 ? Double(finished - lastProgress.finished) / seconds : 0,
                            latency: recording.collector.latency
                        )
                    )
                    lastProgress = (ContinuousClock.now, finished)
                }
                nextSecond = .seconds(elapsed.components.seconds + 1)
            }
            var due = nextSecond
            if let deadline, !isCancelled { due = min(due, deadline) }
            if let duration, !feed.isClosed { due = min(due, duration) }
            if let graceEnds, !isCancelled { due = min(due, graceEnds) }
            // A moment past what falls due: the checks above are strict.
            let reported = endings.wait(upTo: max(.zero, due - elapsed) + .milliseconds(1))
            // Checked again after the wait: a connection closed by `cancel()` is not replaced.
            if isCancelled { pool.cancel() }
            for ending in reported {
                switch ending {
                case .opening(let slot):
                    pool.opening(slot: slot)
                case .answered(let slot, let refusal):
                    pool.connectionAnswered(slot: slot, forbidden: refusal).forEach(perform)
                case .ended(let slot, let madeProgress, let failure):
                    perform(
                        pool.connectionEnded(
                            slot: slot,
                            madeProgress: madeProgress,
                            workRemains: workRemains(),
                            failure: failure,
                            now: NIODeadline.now().uptimeNanoseconds
                        )
                    )
                }
            }
            // Work handed back after the last connection decided it was done.
            if workRemains() && feed.returnedWaiting > 0 { perform(pool.workReturned()) }
        }
        var counts = LoadCounts()
        // An interrupted run does not wait on a reader blocked in a pipe's read: it ends
        // within a second, without the reader's counts if need be.
        let readerWait: Duration = feed.isInterrupted ? .milliseconds(200) : .seconds(10)
        let lost = unreachable.map { FailureCause($0.cause) } ?? .connectionLost
        if isCancelled || scheduleEnded() {
            stream.cancel()
            _ = stream.waitForSummary(timeout: readerWait)
            for notification in feed.drain() {
                if notification.firstSentAt == 0 && feed.isInterrupted {
                    counts.unsent += 1
                } else if isCancelled || notification.firstSentAt != 0 {
                    counts.fail(abandoned == nil ? .cancelled : lost)
                } else {
                    counts.unscheduled += 1
                }
                notification.finish()
            }
        }
        statistics.add(counts)
        recording.finish()
        // The tokens ran out before the schedule did: every token was sent, and the run ended
        // with arrivals left unclaimed. They are counted, not served late or silently dropped.
        var tokensRanOut: Report.TokensRanOut?
        let interrupted = interruption.withLockedValue { $0 }
        if let tickets, !isCancelled, interrupted == nil, let planned = tickets.schedule.total,
            tickets.claimed < planned
        {
            tokensRanOut = Report.TokensRanOut(
                arrivals: planned - tickets.claimed,
                at: .nanoseconds(Int64(tickets.schedule.offset(of: tickets.claimed) ?? 0)),
                planned: planned
            )
        }
        let elapsed = max(.zero, ContinuousClock.now - started)
        let cpuAtEnd = ThreadCPUClock.perLoop(of: group)
        var loopDelays = recording.collector.loopDelays
        for index in loopDelays.indices where index < cpuAtEnd.count && index < cpuAtStart.count {
            loopDelays[index].cpuNanoseconds = cpuAtEnd[index] &- cpuAtStart[index]
        }
        let firstSendUptime = statistics.firstSend
        let firstSend =
            firstSendUptime == 0
            ? nil : now.date.addingTimeInterval((Double(firstSendUptime) - Double(now.uptime)) / 1e9)
        return Report(
            snapshot: statistics.snapshot,
            elapsed: elapsed,
            tokens: stream.waitForSummary(timeout: readerWait),
            cancelled: isCancelled || interrupted != nil,
            abandoned: abandoned,
            unreachable: unreachable,
            started: startDate,
            scheduledStart: model.startAt,
            firstSend: firstSend,
            schedule: model.shardSchedule,
            warmUp: model.warmUp,
            maxLag: model.maxLag,
            tokensRanOut: tokensRanOut,
            senderCPU: .nanoseconds(Int64(cpuAtEnd.reduce(0, +) &- cpuAtStart.reduce(0, +))),
            loopDelays: loopDelays,
            interruption: interrupted.map { .init(signal: $0.signal, after: max(.zero, $0.at - started)) },
            lostWrites: configuration.goneTokens?.failure.map { ["--gone-tokens \($0): the list is incomplete"] } ?? []
        )
    }

    /// Opens `slot`'s connection on `loop` after `delay`, unless `timer` has been superseded
    /// by then; its first answer and its end are posted to `endings`.
    private func open(
        slot: Int,
        after delay: TimeAmount,
        timer: UInt64,
        notBefore: UInt64,
        on loop: any EventLoop,
        recorder: NIOLoopBoundBox<LoopRecorder>,
        _ feed: NotificationFeed,
        _ tickets: ArrivalTickets?,
        _ timers: SlotTimers
    ) {
        let endings = endings
        let attempt = Attempt(slot: slot, endings: endings)
        let configuration = configuration
        let statistics = statistics
        let channels = channels
        loop.scheduleTask(in: delay) { [self] in
            guard timers.fire(slot, timer: timer) else { return }
            endings.post(.opening(slot: slot))
            guard !isCancelled else {
                attempt.end(madeProgress: false, failure: nil)
                return
            }
            // Counted here, not when scheduled: a timer replaced before it fired opens nothing.
            let seed = statistics.connectionsOpened.wrappingIncrementThenLoad(ordering: .relaxed)
            configuration.connect(
                on: loop,
                delegate: {
                    LoadConnection(
                        configuration: configuration,
                        feed: feed,
                        statistics: statistics,
                        recorder: recorder.value,
                        tickets: tickets,
                        slot: slot,
                        notBefore: notBefore,
                        seed: UInt64(seed) &+ 1,
                        answered: { refusal in endings.post(.answered(slot: slot, refusal: refusal)) },
                        ended: { madeProgress, failure in
                            configuration.examine(failure, on: loop).whenSuccess {
                                attempt.end(madeProgress: madeProgress, failure: $0)
                            }
                        }
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
                    // Opened while `cancel()` closed the others.
                    if self.isCancelled { channel.close(promise: nil) }
                case .failure(let error):
                    statistics.connectionFailures.wrappingIncrement(ordering: .relaxed)
                    configuration.examine(EndpointFailure(classifying: error), on: loop).whenSuccess {
                        attempt.end(madeProgress: false, failure: $0)
                    }
                }
            }
        }
    }

    private var isCancelled: Bool { cancelled.load(ordering: .relaxed) }
}

/// The event loops' recorders and what merges them: each loop rolls its recorder over every
/// 250 ms, so seconds close even while its connections are idle, and samples its own lag.
private final class Recording {
    let collector: IntervalCollector
    let loops: [(any EventLoop, NIOLoopBoundBox<LoopRecorder>)]
    private let rollers: [RepeatedTask]
    private let probes: [NIOLoopBoundBox<EventLoopLagProbe>]

    init(group: any EventLoopGroup, statistics: LoadStatistics, start: UInt64, warmUp: Duration) {
        var loops: [any EventLoop] = []
        for loop in group.makeIterator() { loops.append(loop) }
        let collector = IntervalCollector(start: start, warmUp: warmUp.wholeNanoseconds, loops: loops.count)
        statistics.record(into: collector)
        self.collector = collector
        // Made here and handed to their loops whole: nothing else holds them.
        self.loops = loops.enumerated().map { index, loop in
            (loop, .makeBoxSendingValue(LoopRecorder(collector: collector, loop: index), eventLoop: loop))
        }
        probes = self.loops.map { loop, recorder in
            let probe = NIOLoopBoundBox.makeBoxSendingValue(
                // On the pacing windows' grid: every window divides 12.8 ms, so a paced loop
                // wakes for the probe only when it wakes for its tickets anyway.
                EventLoopLagProbe(on: loop, every: .nanoseconds(Int64(PacingWindow.ceiling)), onGrid: true) {
                    late,
                    now in recorder.value.loopLagged(late, now: now)
                },
                eventLoop: loop
            )
            loop.execute { probe.value.start() }
            return probe
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
        for ((loop, recorder), probe) in zip(loops, probes) {
            try? loop.submit {
                probe.value.stop()
                recorder.value.finish()
            }.wait()
        }
        collector.closeAll()
    }
}

/// What connections report to the run from their event loops.
private enum Ending {
    /// `slot`'s delay passed and its connection is being opened.
    case opening(slot: Int)
    /// `slot`'s connection received its first answer; `refusal` when it refused the credentials.
    case answered(slot: Int, refusal: EndpointFailure?)
    /// `slot`'s connection ended (or could not be opened); `failure`, what kept it from an answer.
    case ended(slot: Int, madeProgress: Bool, failure: EndpointFailure?)
}

/// Each slot's reconnect timer, numbered, so the run can replace one that has not fired
/// (`ConnectionPool.Action.hurry`) without a race: a timer fires only if it is still the
/// slot's current one, and one that fired cannot be replaced.
private final class SlotTimers: Sendable {
    private let timers: NIOLockedValueBox<[(number: UInt64, fired: Bool)]>

    init(slots: Int) {
        timers = NIOLockedValueBox(Array(repeating: (0, true), count: max(1, slots)))
    }

    /// A new timer for `slot`; the previous one, if it has not fired, never will.
    func arm(_ slot: Int) -> UInt64 {
        timers.withLockedValue { timers in
            timers[slot] = (timers[slot].number &+ 1, false)
            return timers[slot].number
        }
    }

    /// A timer replacing `slot`'s current one, or `nil` when that one has fired already.
    func rearm(_ slot: Int) -> UInt64? {
        timers.withLockedValue { timers in
            guard !timers[slot].fired else { return nil }
            timers[slot].number &+= 1
            return timers[slot].number
        }
    }

    /// Whether timer `number` of `slot` may go ahead (it is the current one); it has fired.
    func fire(_ slot: Int, timer number: UInt64) -> Bool {
        timers.withLockedValue { timers in
            guard timers[slot].number == number, !timers[slot].fired else { return false }
            timers[slot].fired = true
            return true
        }
    }
}

/// Connections' reports, posted from event loops and waited for by the run.
private final class Endings: Sendable {
    private let ended = NIOLockedValueBox<[Ending]>([])
    private let signal = DispatchSemaphore(value: 0)

    func post(_ ending: Ending) {
        ended.withLockedValue { $0.append(ending) }
        signal.signal()
    }

    /// Ends the run's wait with nothing reported (`cancel()`).
    func wake() { signal.signal() }

    /// The reports so far, waiting up to `timeout` for one (or a `wake()`).
    func wait(upTo timeout: Duration) -> [Ending] {
        _ = signal.wait(timeout: .now() + .nanoseconds(Int(timeout.wholeNanoseconds)))
        return ended.withLockedValue { list in
            defer { list.removeAll() }
            return list
        }
    }
}

/// One connection attempt of a slot: its end is reported once, whether the connect failed or
/// the connection closed.
private final class Attempt: Sendable {
    private let slot: Int
    private let endings: Endings
    private let reported = ManagedAtomic(false)

    init(slot: Int, endings: Endings) {
        self.slot = slot
        self.endings = endings
    }

    func end(madeProgress: Bool, failure: EndpointFailure?) {
        guard reported.compareExchange(expected: false, desired: true, ordering: .relaxed).exchanged else { return }
        endings.post(.ended(slot: slot, madeProgress: madeProgress, failure: failure))
    }
}
