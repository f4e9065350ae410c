import Atomics
import FanoutAPNs
import FanoutHTTP2
import FanoutMeasure
import FanoutPush
import Histogram
import NIOConcurrencyHelpers
import NIOCore

/// The event loops' recorders and what merges them: each loop rolls its recorder over every
/// 250 ms, so seconds close even while its connections are idle, and samples its own lag.
final class Recording {
    let collector: IntervalCollector
    let loops: [(any EventLoop, NIOLoopBoundBox<LoopRecorder>)]
    private let rollers: [RepeatedTask]
    private let probes: [NIOLoopBoundBox<EventLoopLagProbe>]

    init(
        group: any EventLoopGroup,
        statistics: LoadStatistics,
        start: UInt64,
        warmUp: Duration,
        tickets: ArrivalTickets?
    ) {
        var loops: [any EventLoop] = []
        for loop in group.makeIterator() { loops.append(loop) }
        let collector = IntervalCollector(
            start: start,
            warmUp: warmUp.wholeNanoseconds,
            from: tickets.map { .schedule($0) } ?? .firstSend(statistics.firstSendClock),
            loops: loops.count
        )
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
            loop.execute {
                recorder.value.startCPU()
                probe.value.start()
            }
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

/// What the connections of one event loop measured, recorded without a lock and handed over
/// once a second: latencies (outside the warm-up), completions, the generator's lag, and the
/// sender's own delays (the loop's lag, and how long answers waited inside a read burst).
///
/// ```
///   loop 1: [second 0][second 1][second 2] …  ──┐
///   loop 2: [second 0][second 1][second 2] …  ──┼─► IntervalCollector: second s is merged once
///   loop n: …                                   ─┘   every loop has handed it over
/// ```
///
/// Confined to its event loop (the connections on it share it; a repeated task rolls it over
/// even when they are idle).
package final class LoopRecorder {
    private let collector: IntervalCollector
    private let start: UInt64
    /// Latencies (and stream waits) count for notifications that started at or after it
    /// (uptime nanoseconds): `.max` while the warm-up's origin is not known yet
    /// (`IntervalCollector.warmUpEnd`), looked up again until it is.
    @exclusivity(unchecked) private var warmUpEnd: UInt64
    private let interval: UInt64
    @exclusivity(unchecked) private var second = 0
    @exclusivity(unchecked) private var latencies = LoadStatistics.makeHistogram()
    @exclusivity(unchecked) private var lag = LoadStatistics.makeHistogram()
    @exclusivity(unchecked) private var loopLag = LoadStatistics.makeHistogram()
    @exclusivity(unchecked) private var readDelay = LoadStatistics.makeHistogram()
    @exclusivity(unchecked) private var returnPath = LoadStatistics.makeHistogram()
    @exclusivity(unchecked) private var senderShare = LoadStatistics.makeHistogram()
    @exclusivity(unchecked) private var own = LoadStatistics.makeHistogram()
    @exclusivity(unchecked) private var completed = 0
    @exclusivity(unchecked) private var streamWaits = StreamWaits()
    /// The run's first 10 s in 100 ms bins, handed over once, by `finish()`.
    @exclusivity(unchecked) private var fine: FineBinRecorder
    /// Completed in earlier seconds (with `completed`, the running total the bins are cut from).
    @exclusivity(unchecked) private var completedBefore = 0
    /// The earlier of `second`'s end and the next bin's: `roll(to:)` before it is one compare.
    @exclusivity(unchecked) private var nextEvent: UInt64 = 0
    /// The loop thread's CPU clock at the last hand-over (`nil` until `startCPU()`): a second's
    /// CPU is read once, when it is handed over, not per notification.
    @exclusivity(unchecked) private var cpuAtHandOver: UInt64? = nil
    /// Which of the run's loops this is (the collector keeps each loop's delays apart).
    private let loop: Int

    package init(collector: IntervalCollector, loop: Int = 0) {
        self.collector = collector
        self.loop = loop
        start = collector.start
        warmUpEnd = collector.warmUpEnd ?? .max
        interval = collector.interval
        fine = FineBinRecorder(start: collector.start)
        nextEvent = min(fine.next, secondEnd)
    }

    /// A notification reached its final outcome at `now`; it started (its intended or first
    /// send time) at `startedAt`.
    func complete(startedAt: UInt64, now: UInt64) {
        roll(to: now)
        completed += 1
        // Unknown (`.max`) fails the compare too, and is looked up only then: the common path
        // pays one compare, as before the warm-up had an origin to wait for (scripts/cost.sh).
        guard startedAt >= warmUpEnd || startedAt >= resolveWarmUpEnd() else { return }
        latencies.record(nanoseconds: now - min(now, startedAt))
    }

    /// A ticket was sent `nanoseconds` after the later of its due time and the moment its
    /// connection had a stream free for it: how far the generator itself fell behind.
    func lagged(_ nanoseconds: UInt64, now: UInt64) {
        roll(to: now)
        lag.record(nanoseconds: nanoseconds)
    }

    /// A notification due at `dueAt` waited `nanoseconds` for a stream while `streams` were busy
    /// (outside the warm-up only: a warm-up past the ramp names none).
    func waitedForStream(_ nanoseconds: UInt64, streams: Int, dueAt: UInt64) {
        guard dueAt >= warmUpEnd || dueAt >= resolveWarmUpEnd() else { return }
        streamWaits.add(nanoseconds, streams: streams)
    }

    /// The loop ran a task due `nanoseconds` earlier (`EventLoopLagProbe`).
    func loopLagged(_ nanoseconds: UInt64, now: UInt64) {
        roll(to: now)
        loopLag.record(nanoseconds: nanoseconds)
    }

    /// An answer was handled at `now`, in a read burst that began at `readStartedAt`: what it
    /// waited while the answers before it in the burst were handled.
    func answerRead(startedAt readStartedAt: UInt64, now: UInt64) {
        roll(to: now)
        readDelay.record(nanoseconds: now - min(now, readStartedAt))
    }

    /// A timed answer came `returnPath` after the sink wrote it. On a first try, the harness's
    /// share of its latency (the latency less the sink's hold) was `own`, and the sender's part
    /// of that `senderShare` (its send lateness and the way back); `nil` on a retry, whose
    /// latency holds earlier tries too. `now`: when it was handled, the second it falls in.
    func timedAnswer(returnPath: UInt64, firstTry: (own: UInt64, senderShare: UInt64)?, now: UInt64) {
        roll(to: now)
        self.returnPath.record(nanoseconds: returnPath)
        guard let firstTry else { return }
        own.record(nanoseconds: firstTry.own)
        senderShare.record(nanoseconds: firstTry.senderShare)
    }

    /// The warm-up's end, looked up again while its origin was not known; `.max` while it
    /// still is not.
    @inline(never)
    private func resolveWarmUpEnd() -> UInt64 {
        if warmUpEnd == .max { warmUpEnd = collector.warmUpEnd ?? .max }
        return warmUpEnd
    }

    /// Hands over every finished second up to `now`, and closes the bins that ended by it.
    @inline(__always)
    func roll(to now: UInt64) {
        guard now >= nextEvent else { return }
        pass(now)
    }

    @inline(never)
    private func pass(_ now: UInt64) {
        fine.advance(to: now, total: completedBefore + completed)
        let current = Int((now - min(now, start)) / interval)
        if current > second {
            handOver()
            second += 1
            while second < current {
                collector.add(IntervalCollector.Part(second: second, loop: loop))
                second += 1
            }
        }
        nextEvent = min(fine.next, secondEnd)
    }

    /// When `second` ends (`.max` once finished, or past what a `UInt64` holds).
    private var secondEnd: UInt64 {
        guard second < .max else { return .max }
        let (length, overflow) = UInt64(second + 1).multipliedReportingOverflow(by: interval)
        let (end, past) = start.addingReportingOverflow(length)
        return overflow || past ? .max : end
    }

    /// Starts the loop's CPU clock for the seconds' CPU; on the loop's thread, at the run's start.
    package func startCPU() {
        cpuAtHandOver = ThreadCPUClock.now()
    }

    /// Hands over the second in progress (at the end of the run); nothing is recorded after.
    package func finish() {
        fine.finish(total: completedBefore + completed)
        handOver(fine: fine.counts)
        second = .max
        nextEvent = .max
    }

    private func handOver(fine: [Int]? = nil) {
        var cpu: UInt64? = nil
        if let last = cpuAtHandOver {
            let now = ThreadCPUClock.now()
            cpu = now &- last
            cpuAtHandOver = now
        }
        collector.add(
            IntervalCollector.Part(
                second: second,
                loop: loop,
                latencies: latencies,
                lag: lag,
                loopLag: loopLag,
                readDelay: readDelay,
                returnPath: returnPath,
                senderShare: senderShare,
                own: own,
                completed: completed,
                streamWaits: streamWaits,
                cpuNanoseconds: cpu,
                fine: fine
            )
        )
        streamWaits = StreamWaits()
        latencies.clear()
        lag.clear()
        loopLag.clear()
        readDelay.clear()
        returnPath.clear()
        senderShare.clear()
        own.clear()
        completedBefore += completed
        completed = 0
    }
}

/// One second of a run, merged over every event loop.
public struct LoadInterval: Sendable {
    /// Seconds from the start of the run.
    public var second: Int
    /// Notifications that reached a final outcome in it (warm-up included).
    public var completed: Int
    /// Latencies (µs) of those outside the warm-up, packed.
    public var latencies: PackedHistogram
    /// Their p50, p90, p99 and max (µs; 0 when there are none).
    public var p50: UInt64
    public var p90: UInt64
    public var p99: UInt64
    public var max: UInt64
    /// The generator's worst lag in it (µs), 0 without the open model.
    public var maxLag: UInt64
    /// The sender's own delays in it (µs): its loops' worst lag, and the p99 of how long
    /// answers waited in their read bursts.
    public var maxLoopLag: UInt64 = 0
    public var readDelayP99: UInt64 = 0
    /// Notifications due in it (outside the warm-up) that waited for a stream.
    public var streamWaits = StreamWaits()
    /// The CPU time the sender's loop threads used in it (nanoseconds, summed over the loops,
    /// each read when it handed the second over); `nil` where not measured.
    public var cpuNanoseconds: UInt64? = nil
    /// The rejections and failures by reason counted in it (`LoadStatistics.markSecond(_:)`).
    public var rejected: [PushReason: Int] = [:]
    public var failed: [FailureCause: Int] = [:]
    /// At its end: connections open or opening, and notifications sent without a final outcome
    /// (as the connections last handed their counts over); `nil` for a second the run did not
    /// mark (its last).
    public var connections: Int? = nil
    public var inFlight: Int? = nil
}

/// The sender's own delays on one event loop over the run (µs), outside the warm-up: the
/// window of the latency they are a share of. Counted in the warm-up too, a loop's lag at
/// connection setup (145 ms) stood against a p99 of 1.57 ms measured after it: "the harness's
/// own delay at p99: 22.54 ms, 100% of the measured p99" (newcomer pass 4). Each second's
/// figures (`LoadInterval.maxLoopLag`, `readDelayP99`) keep the warm-up's seconds.
public struct LoopDelays: Sendable {
    /// How late the loop ran tasks due on it (`EventLoopLagProbe`'s samples).
    public var loopLag = LoadStatistics.makeHistogram()
    /// How long each answer waited between the start of its read burst and its handling.
    public var readDelay = LoadStatistics.makeHistogram()
    /// Timed answers from a Fanout sink: from its write to their handling (the way back).
    public var returnPath = LoadStatistics.makeHistogram()
    /// Timed answers' (first tries') latency less the sink's hold: the harness's whole share,
    /// answer by answer.
    public var own = LoadStatistics.makeHistogram()
    /// The sender's part of `own`, answer by answer: its send lateness (due to sent) and the way
    /// back (the sink's write to the handling). The rest of `own` is the sink's lateness from
    /// the send, which the sink measures on the same answers.
    public var senderShare = LoadStatistics.makeHistogram()
    /// The CPU time the loop's thread used over the run (nanoseconds; 0 where not measured).
    public var cpuNanoseconds: UInt64 = 0

    public init() {}

    /// Every loop's delays in one.
    public static func merged(_ loops: [LoopDelays]) -> LoopDelays {
        var total = LoopDelays()
        for loop in loops {
            total.loopLag.add(loop.loopLag)
            total.readDelay.add(loop.readDelay)
            total.returnPath.add(loop.returnPath)
            total.own.add(loop.own)
            total.senderShare.add(loop.senderShare)
            total.cpuNanoseconds += loop.cpuNanoseconds
        }
        return total
    }
}

/// Merges the event loops' seconds and keeps the run's totals.
///
/// A loop's hand-over only queues its part (a lock and an append: its histograms move, they
/// are not read); the merging — adding histograms, percentiles, packing, a few milliseconds a
/// second — happens in `drain()`, on the thread that calls it: the run's own thread, between
/// its waits, and whoever reads the totals. Merged on the loop, it made every connection on
/// that loop late by 4–5 ms once a second (send lateness p99 2 ms at 5,000/s, measured).
///
/// ```
///   loop threads ── add(part) ──► inbox ── drain() ──► pending seconds ──► intervals, totals
/// ```
package final class IntervalCollector: Sendable {
    struct Part {
        var second: Int
        var loop: Int
        var latencies: Histogram<UInt64>?
        var lag: Histogram<UInt64>?
        var loopLag: Histogram<UInt64>?
        var readDelay: Histogram<UInt64>?
        var returnPath: Histogram<UInt64>?
        var senderShare: Histogram<UInt64>?
        var own: Histogram<UInt64>?
        var completed = 0
        var streamWaits = StreamWaits()
        /// The loop's CPU since its last hand-over; 0 for a second it skipped while idle.
        var cpuNanoseconds: UInt64? = 0
        /// The loop's `FineBins`, in its last part only.
        var fine: [Int]? = nil
    }

    private struct Pending {
        var latencies = LoadStatistics.makeHistogram()
        var readDelay = LoadStatistics.makeHistogram()
        var maxLag: UInt64 = 0
        var maxLoopLag: UInt64 = 0
        var completed = 0
        var streamWaits = StreamWaits()
        var cpuNanoseconds: UInt64? = 0
        var parts = 0
    }

    private struct State {
        var pending: [Int: Pending] = [:]
        var intervals: [LoadInterval] = []
        var latency = LoadStatistics.makeHistogram()
        var lag = LoadStatistics.makeHistogram()
        var streamWaits = StreamWaits()
        var loops: [LoopDelays]
        var fine = [Int](repeating: 0, count: FineBins.count)
    }

    let start: UInt64
    let warmUp: UInt64
    /// Where the warm-up counts from.
    let warmUpOrigin: WarmUpOrigin
    /// The length of an interval, nanoseconds: a second in every run (the cost gate's workload
    /// makes its one interval longer than itself, so that no hand-over falls in it).
    let interval: UInt64
    private let loops: Int
    /// Parts handed over and not merged yet.
    private let inbox = NIOLockedValueBox<[Part]>([])
    private let state: NIOLockedValueBox<State>

    package init(
        start: UInt64,
        warmUp: UInt64,
        from warmUpOrigin: WarmUpOrigin = .runStart,
        loops: Int,
        interval: UInt64 = 1_000_000_000
    ) {
        self.start = start
        self.warmUp = warmUp
        self.warmUpOrigin = warmUpOrigin
        self.interval = interval
        self.loops = loops
        state = NIOLockedValueBox(State(loops: Array(repeating: LoopDelays(), count: max(1, loops))))
    }

    /// When the warm-up ends (uptime nanoseconds): 0 without one; `nil` while its origin is
    /// not known (no ticket claimed, no request sent yet).
    var warmUpEnd: UInt64? {
        guard warmUp > 0 else { return 0 }
        return warmUpStart.map { $0 + warmUp }
    }

    /// When the warm-up began (uptime nanoseconds), `nil` while not known.
    var warmUpStart: UInt64? {
        switch warmUpOrigin {
        case .runStart: start
        case .schedule(let tickets): tickets.startedAt
        case .firstSend(let clock): clock.uptime
        }
    }

    /// Queues a loop's part; `drain()` merges it.
    func add(_ part: Part) {
        inbox.withLockedValue { $0.append(part) }
    }

    /// Merges the parts handed over so far, on the calling thread. The run calls it once a
    /// second, so that the inbox holds a second's parts of each loop at most.
    package func drain() {
        let parts = inbox.withLockedValue { inbox in
            defer { inbox.removeAll(keepingCapacity: true) }
            return inbox
        }
        guard !parts.isEmpty else { return }
        let harnessFrom = harnessSecond
        state.withLockedValue { state in
            for part in parts { Self.merge(part, into: &state, loops: loops, harnessFrom: harnessFrom) }
        }
    }

    /// The first second whose loops' delays count in the run's totals: the first not wholly in
    /// the warm-up (its origin not known yet, no second counts: nothing was sent).
    private var harnessSecond: Int {
        guard let end = warmUpEnd else { return .max }
        return end > start ? Int((end - start) / interval) : 0
    }

    private static func merge(_ part: Part, into state: inout State, loops: Int, harnessFrom: Int) {
        // The seconds wholly in the warm-up keep their figures, not the run's harness totals.
        let counted = part.second >= harnessFrom
        // Taken out of the dictionary so that its histograms are uniquely held: adding to a
        // copy still in it would copy their counts first.
        var pending = state.pending.removeValue(forKey: part.second) ?? Pending()
        if let latencies = part.latencies, latencies.totalCount > 0 { pending.latencies.add(latencies) }
        if let lag = part.lag, lag.totalCount > 0 {
            pending.maxLag = max(pending.maxLag, lag.max)
            state.lag.add(lag)
        }
        if let loopLag = part.loopLag, loopLag.totalCount > 0 {
            pending.maxLoopLag = max(pending.maxLoopLag, loopLag.max)
            if counted { state.loops[part.loop].loopLag.add(loopLag) }
        }
        if let readDelay = part.readDelay, readDelay.totalCount > 0 {
            pending.readDelay.add(readDelay)
            if counted { state.loops[part.loop].readDelay.add(readDelay) }
        }
        if counted, let returnPath = part.returnPath, returnPath.totalCount > 0 {
            state.loops[part.loop].returnPath.add(returnPath)
        }
        if counted, let own = part.own, own.totalCount > 0 { state.loops[part.loop].own.add(own) }
        if counted, let senderShare = part.senderShare, senderShare.totalCount > 0 {
            state.loops[part.loop].senderShare.add(senderShare)
        }
        pending.completed += part.completed
        for (bin, count) in (part.fine ?? []).enumerated() { state.fine[bin] += count }
        pending.cpuNanoseconds = part.cpuNanoseconds.flatMap { cpu in pending.cpuNanoseconds.map { $0 + cpu } }
        pending.streamWaits.add(part.streamWaits)
        state.streamWaits.add(part.streamWaits)
        pending.parts += 1
        if pending.parts == loops {
            close(part.second, pending, into: &state)
        } else {
            state.pending[part.second] = pending
        }
    }

    /// Closes the seconds still waiting for a loop (at the end of the run).
    func closeAll() {
        drain()
        state.withLockedValue { state in
            for second in state.pending.keys.sorted() {
                Self.close(second, state.pending[second]!, into: &state)
            }
            state.pending.removeAll()
            state.intervals.sort { $0.second < $1.second }
        }
    }

    private static func close(_ second: Int, _ pending: Pending, into state: inout State) {
        let latencies = pending.latencies
        let empty = latencies.totalCount == 0
        state.latency.add(latencies)
        state.intervals.append(
            LoadInterval(
                second: second,
                completed: pending.completed,
                latencies: PackedHistogram(latencies),
                p50: empty ? 0 : latencies.valueAtPercentile(50),
                p90: empty ? 0 : latencies.valueAtPercentile(90),
                p99: empty ? 0 : latencies.valueAtPercentile(99),
                max: empty ? 0 : latencies.max,
                maxLag: pending.maxLag,
                maxLoopLag: pending.maxLoopLag,
                readDelayP99: pending.readDelay.totalCount == 0 ? 0 : pending.readDelay.valueAtPercentile(99),
                streamWaits: pending.streamWaits,
                cpuNanoseconds: pending.cpuNanoseconds
            )
        )
    }

    // What the getters below read is what `drain()` (or `closeAll()`) merged last: reading
    // merges nothing, so the run's once-a-second drain is the only one while it goes.

    /// Every loop's stream waits so far (handed over: `closeAll()` first for the whole run).
    package var streamWaits: StreamWaits {
        state.withLockedValue { $0.streamWaits }
    }

    /// The latencies of every closed second, outside the warm-up.
    package var latency: Histogram<UInt64> {
        state.withLockedValue { $0.latency }
    }
    /// Every lag sample so far.
    var lag: Histogram<UInt64> {
        state.withLockedValue { $0.lag }
    }
    var intervals: [LoadInterval] {
        state.withLockedValue { $0.intervals }
    }

    /// The seconds closed so far from `second` on (`drain()` first): read from the end, so
    /// that a long run's judging once a second does not copy all of its seconds.
    func intervals(from second: Int) -> [LoadInterval] {
        state.withLockedValue { state in
            guard let first = state.intervals.lastIndex(where: { $0.second < second }) else { return state.intervals }
            return state.intervals[(first + 1)...].filter { $0.second >= second }
        }
    }
    /// Completions in each of the run's first `FineBins.count` 100 ms bins, every loop's
    /// added up once it finished (zeros before).
    var fineCompleted: [Int] {
        state.withLockedValue { $0.fine }
    }
    /// Each loop's own delays so far.
    var loopDelays: [LoopDelays] {
        state.withLockedValue { $0.loops }
    }
}

/// Where a run's warm-up counts from: not the run's start, which connecting follows (a TLS
/// handshake 80 ms away takes a quarter of a 1 s warm-up; on a loaded machine a local connect
/// took 117 ms of a 990 ms one), but where sending starts.
package enum WarmUpOrigin: Sendable {
    /// The collector's start (the cost workload, tests).
    case runStart
    /// The open model: the schedule's start (the first ticket claimed, or `--start-at`).
    case schedule(ArrivalTickets)
    /// The closed model: the run's first request.
    case firstSend(FirstSendClock)
}

/// When a run's first request went out (uptime nanoseconds): the earliest any connection
/// notes, without a lock. The run's statistics keep it and its collector reads it (the closed
/// model's warm-up counts from it); neither needs the other for it.
package final class FirstSendClock: Sendable {
    private let earliest = ManagedAtomic<UInt64>(.max)

    package init() {}

    /// A connection sent its first request at `now`.
    func note(_ now: UInt64) {
        LoadStatistics.store(now, in: earliest, while: <)
    }

    /// The earliest noted, `nil` before any.
    var uptime: UInt64? {
        let value = earliest.load(ordering: .relaxed)
        return value == .max ? nil : value
    }
}
