import FanoutEndpoint
import FanoutMeasure
import NIOConcurrencyHelpers
import NIOCore

import struct Foundation.Date

/// When a run starts, read once from the wall clock and the uptime clock: now, or `--start-at`
/// when given (the run's seconds and schedule count from then; connections open now).
struct RunStart {
    /// The wall-clock start.
    let date: Date
    /// The start on the uptime clock (ns), the one clock the run reads after this.
    let uptime: UInt64
    /// How long until the start (ns): 0 without `--start-at`.
    let wait: UInt64

    init(startAt: Date?, date now: Date = Date(), uptime nowUptime: UInt64 = NIODeadline.now().uptimeNanoseconds) {
        wait = startAt.map { UInt64(max(0, $0.timeIntervalSince(now)) * 1e9) } ?? 0
        date = now.addingTimeInterval(Double(wait) / 1e9)
        uptime = nowUptime + wait
    }

    /// From the start to `uptime` (negative before it).
    func elapsed(at time: UInt64) -> Duration { .nanoseconds(Int64(bitPattern: time &- uptime)) }

    /// The wall-clock time of an instant on the uptime clock.
    func date(ofUptime time: UInt64) -> Date {
        date.addingTimeInterval(Double(Int64(bitPattern: time &- uptime)) / 1e9)
    }
}

/// A run's loop, on the thread that called `LoadEngine.run`: it sleeps until a connection
/// reports, `cancel()` is called, or the next thing falls due — the deadline, the duration's
/// end, an interruption's grace, the next whole second — and turns what happened into
/// `ConnectionPool`'s events, carrying out the actions it returns:
///
///     connection reports ──► pool.opening / connectionAnswered / connectionEnded ──► actions
///     feed hands work back ──► pool.workReturned ───────────────────────────────────► actions
///     actions: open a slot (after a delay) · hurry a waiting slot · give up (cancel the run)
///
/// It ends when no slot is connecting, open or waiting to reconnect. It owns its connections:
/// it opens each (`open(_:after:timer:)`) and hears of it through `RunControl.endings`; what it
/// shares with the engine's callers is the `RunControl`, never the engine.
final class RunDriver {
    private let configuration: LoadConfiguration
    private let statistics: LoadStatistics
    private let control: RunControl
    private let start: RunStart
    private let tickets: ArrivalTickets?
    private let recording: Recording
    private let progress: ((RunProgress) -> Void)?
    private var pool: ConnectionPool
    private let timers: SlotTimers
    /// Why the pool gave up, if it did.
    private(set) var gaveUp: GiveUp.Why?
    private var lastProgress: (at: UInt64, finished: Int)
    /// The run's next whole second: a progress line, and the loops' seconds merged.
    private var nextSecond = Duration.seconds(1)
    /// `--abort-on`'s conditions, judged at each whole second.
    private let abortWatch: AbortWatch?

    init(
        configuration: LoadConfiguration,
        statistics: LoadStatistics,
        control: RunControl,
        start: RunStart,
        tickets: ArrivalTickets?,
        recording: Recording,
        progress: ((RunProgress) -> Void)?
    ) {
        self.configuration = configuration
        self.statistics = statistics
        self.control = control
        self.start = start
        self.tickets = tickets
        self.recording = recording
        self.progress = progress
        let shape = configuration.shape
        pool = ConnectionPool(slots: shape.connections, connectTimeout: configuration.endpoint.connectTimeout)
        timers = SlotTimers(slots: shape.connections)
        lastProgress = (start.uptime, 0)
        abortWatch = shape.model.abort.flatMap { $0.conditions.isEmpty ? nil : AbortWatch(policy: $0) }
    }

    /// Whether the run stopped taking new tokens (its schedule or duration is over).
    var scheduleEnded: Bool { control.feed.isClosed || tickets?.isExhausted == true }

    /// Whether a connection is still needed for what is left.
    private var workRemains: Bool { scheduleEnded ? control.feed.startedWaiting > 0 : !control.feed.isDrained }

    /// Drives the pool until every slot is done.
    func drive() {
        pool.start(now: Self.now()).forEach(perform)
        while pool.active > 0 {
            let elapsed = start.elapsed(at: Self.now())
            let due = stopWhatIsDue(at: elapsed)
            // A moment past what falls due: the checks are strict.
            let reported = control.endings.wait(upTo: max(.zero, due - elapsed) + .milliseconds(1))
            // Checked again after the wait: a connection closed by `cancel()` is not replaced.
            if control.isCancelled { pool.cancel() }
            for ending in reported { receive(ending) }
            // Connections whose first answer was refused wait for this (`LoadConnection.turn`).
            if pool.reached && !control.endpointReached { control.reachedEndpoint() }
            // Work handed back after the last connection decided it was done.
            if workRemains && control.feed.returnedWaiting > 0 { perform(pool.workReturned()) }
        }
    }

    /// Cancels a run past its deadline or its interruption's grace, closes the feed past the
    /// duration, closes a second; returns when the next of those falls due (from the start).
    private func stopWhatIsDue(at elapsed: Duration) -> Duration {
        let shape = configuration.shape
        let graceEnds = control.graceEnds.map { start.elapsed(at: $0) }
        if let deadline = shape.deadline, elapsed > deadline, !control.isCancelled { control.cancel() }
        if let graceEnds, elapsed > graceEnds, !control.isCancelled { control.cancel() }
        if let duration = shape.model.duration, elapsed > duration { control.feed.close() }
        if elapsed >= nextSecond { closeSecond(at: elapsed) }
        var due = nextSecond
        if let deadline = shape.deadline, !control.isCancelled { due = min(due, deadline) }
        if let duration = shape.model.duration, !control.feed.isClosed { due = min(due, duration) }
        if let graceEnds, !control.isCancelled { due = min(due, graceEnds) }
        return due
    }

    /// Merges the loops' closed seconds (off the loops: `IntervalCollector`), judges
    /// `--abort-on`'s conditions and tells `progress`.
    private func closeSecond(at elapsed: Duration) {
        recording.collector.drain()
        let second = Int(elapsed.components.seconds)
        statistics.markSecond(second - 1, connections: pool.slots.count { $0 == .connecting })
        let tally = abortWatch != nil || progress != nil ? statistics.tally(at: second) : nil
        if let abortWatch, let tally, second > 0, !control.isStopping, !control.isCancelled,
            let abort = abortWatch.check(
                tally,
                intervals: { self.recording.collector.intervals(from: $0) }
            )
        {
            control.stop(.abort(abort))
        }
        if let progress, elapsed >= .zero {
            let now = Self.now()
            let finished = statistics.finished
            let seconds = Double(now &- lastProgress.at) / 1e9
            progress(
                RunProgress(
                    elapsed: elapsed,
                    finished: finished,
                    ratePerSecond: seconds > 0 ? Double(finished - lastProgress.finished) / seconds : 0,
                    latency: recording.collector.latency,
                    errors: tally.map { $0.rejected.reduce(0, +) + $0.failed.reduce(0, +) } ?? 0
                )
            )
            lastProgress = (now, finished)
        }
        nextSecond = .seconds(elapsed.components.seconds + 1)
    }

    private func receive(_ ending: Ending) {
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
                    workRemains: workRemains,
                    failure: failure,
                    now: Self.now()
                )
            )
        }
    }

    private func perform(_ action: ConnectionPool.Action) {
        switch action {
        case .open(let slot, let delay):
            open(slot, after: delay, timer: timers.arm(slot))
        case .hurry(let slot, let delay):
            // Unless its timer fired meanwhile: then it is connecting already.
            if let timer = timers.rearm(slot) { open(slot, after: delay, timer: timer) }
        case .giveUp(let why):
            gaveUp = why
            control.cancel()
        case .none:
            break
        }
    }

    /// Opens `slot`'s connection on its loop after `delay`, unless `timer` has been superseded
    /// by then; its first answer and its end are posted to `control.endings`.
    private func open(_ slot: Int, after delay: UInt64, timer: UInt64) {
        let (loop, recorder) = recording.loops[slot % recording.loops.count]
        let (configuration, statistics, control, timers) = (configuration, statistics, control, timers)
        let (feed, tickets, notBefore) = (control.feed, tickets, start.wait > 0 ? start.uptime : 0)
        let attempt = Attempt(slot: slot, endings: control.endings)
        loop.scheduleTask(in: .nanoseconds(Int64(delay))) {
            guard timers.fire(slot, timer: timer) else { return }
            control.endings.post(.opening(slot: slot))
            guard !control.isCancelled else {
                attempt.end(madeProgress: false, failure: nil)
                return
            }
            // Counted here, not when scheduled: a timer replaced before it fired opens nothing.
            let seed = statistics.connectionsOpened.wrappingIncrementThenLoad(ordering: .relaxed)
            // This run's HTTP/2 settings (`LoadShape.http2`) to the endpoint.
            configuration.endpoint.connect(
                on: loop,
                configuration: configuration.shape.http2,
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
                        answered: { refusal in control.endings.post(.answered(slot: slot, refusal: refusal)) },
                        endpointReached: { control.endpointReached },
                        ended: { madeProgress, failure in
                            configuration.endpoint.examine(failure, on: loop).whenSuccess {
                                attempt.end(madeProgress: madeProgress, failure: $0)
                            }
                        }
                    )
                }
            ).whenComplete { result in
                switch result {
                case .success(let (channel, _)):
                    control.opened(channel)
                case .failure(let error):
                    statistics.connectionFailures.wrappingIncrement(ordering: .relaxed)
                    configuration.endpoint.examine(EndpointFailure(classifying: error), on: loop).whenSuccess {
                        attempt.end(madeProgress: false, failure: $0)
                    }
                }
            }
        }
    }

    private static func now() -> UInt64 { NIODeadline.now().uptimeNanoseconds }
}
