import FanoutHTTP2
import FanoutInstrument
import FanoutMeasure
import Histogram
import NIOConcurrencyHelpers
import NIOCore

/// The sink's own share of every latency a client measures, kept apart from what it was told
/// to inject. For each answer:
///
/// ```
///   sent ──► read burst starts ──► request handled ──► due (received + injected latency, pacing, stall)
///   (apns-id)      received                             │
///                                                       ▼
///                                        answer handed to the socket ──► lateness = written − due
///   └──────── transit ──────┘                              from send = transit + lateness
/// ```
///
/// `injected` (due − received) is the scenario's, never the sink's; `lateness` is the sink's
/// alone: reading the rest of the burst, validating, encoding, waiting for its loop. When the
/// request's apns-id carries its send time (`TimedAPNsID`), `fromSend` adds the transit: the
/// queues between the client's send and this read (the sink's own read backlog among them). The loop's
/// lag (`EventLoopLagProbe`) says how busy each loop was; its CPU time how near a core it ran.
///
/// Recorded without a lock on each loop (`SinkLoopRecorder`), handed to `SinkStatistics` once
/// a second and when the sink drains.
package final class SinkLoopRecorder {
    private weak var statistics: SinkStatistics?
    private let loop: Int
    @exclusivity(unchecked) private var lateness = SinkTiming.makeHistogram()
    @exclusivity(unchecked) private var fromSend = SinkTiming.makeHistogram()
    @exclusivity(unchecked) private var injected = SinkTiming.makeHistogram()
    @exclusivity(unchecked) private var loopLag = SinkTiming.makeHistogram()
    /// What each answer adds goes first into these, moved into the histograms above at each
    /// hand-over: per answer, no copy-on-write check of a histogram's counts.
    @exclusivity(unchecked) private var latenessTally = MicrosecondTally()
    @exclusivity(unchecked) private var fromSendTally = MicrosecondTally()
    @exclusivity(unchecked) private var injectedTally = MicrosecondTally()
    @exclusivity(unchecked) private var lastHandOver: UInt64
    /// With the sink as an instrument (`ProviderInstrument`): arrivals since the start mark.
    private let instrument: ProviderInstrument?
    @exclusivity(unchecked) private var fanOut = FanOutTally()
    /// The loop thread's CPU clock and the uptime when recording began (0: not on a loop).
    private let cpuAtStart: UInt64
    private let startedAt: UInt64

    /// A recorder for loop `loop` of a sink, made on that loop; with no statistics, one that
    /// keeps what it records (a connection outside a sink: tests, the cost workload).
    package init(statistics: SinkStatistics? = nil, loop: Int = 0, instrument: ProviderInstrument? = nil) {
        self.statistics = statistics
        self.loop = loop
        self.instrument = instrument
        startedAt = NIODeadline.now().uptimeNanoseconds
        lastHandOver = startedAt
        cpuAtStart = statistics == nil ? 0 : ThreadCPUClock.now()
    }

    /// An answer due at `due` was handed to the socket at `written` (uptime nanoseconds); its
    /// request spent `transit` between its send and the sink's read (0: unknown).
    @inline(__always)
    func written(due: UInt64, transit: UInt64, at written: UInt64) {
        let late = written - min(written, due)
        latenessTally.record(nanoseconds: late)
        if transit > 0 { fromSendTally.record(nanoseconds: late + transit) }
    }

    /// An answer was held `nanoseconds` by the scenario (latency, pacing, a stall).
    @inline(__always)
    func held(_ nanoseconds: UInt64) {
        injectedTally.record(nanoseconds: nanoseconds)
    }

    /// A request arrived `nanoseconds` after the start mark; `accepted`: it will be answered 200.
    @inline(__always)
    func arrived(after nanoseconds: UInt64, accepted: Bool) {
        fanOut.arrived(after: nanoseconds, accepted: accepted)
    }

    /// The loop ran a task `nanoseconds` late; hands the second's records over once a second.
    func loopLagged(_ nanoseconds: UInt64, now: UInt64) {
        loopLag.record(nanoseconds: nanoseconds)
        if now >= lastHandOver + 1_000_000_000 { handOver(now: now) }
    }

    /// Adds what was recorded since the last hand-over to the statistics.
    func handOver(now: UInt64) {
        guard let statistics else { return }
        lastHandOver = now
        instrument?.totals.add(&fanOut)
        latenessTally.move(into: &lateness)
        fromSendTally.move(into: &fromSend)
        injectedTally.move(into: &injected)
        statistics.timing.add(
            loop: loop,
            lateness: lateness,
            fromSend: fromSend,
            injected: injected,
            loopLag: loopLag,
            cpuNanoseconds: ThreadCPUClock.now() &- cpuAtStart,
            wallNanoseconds: now - startedAt
        )
        lateness.clear()
        fromSend.clear()
        injected.clear()
        loopLag.clear()
    }
}

/// Every loop's recorder of one sink, and the probes that sample the loops' lag.
final class SinkTiming: Sendable {
    private let loops: [(loop: any EventLoop, recorder: NIOLoopBound<SinkLoopRecorder>)]
    private let probes: [NIOLoopBound<EventLoopLagProbe>]

    init(group: any EventLoopGroup, statistics: SinkStatistics, instrument: ProviderInstrument?) throws {
        var loops: [(loop: any EventLoop, recorder: NIOLoopBound<SinkLoopRecorder>)] = []
        for (index, loop) in group.makeIterator().enumerated() {
            let recorder = try loop.submit {
                NIOLoopBound(
                    SinkLoopRecorder(statistics: statistics, loop: index, instrument: instrument),
                    eventLoop: loop
                )
            }.wait()
            loops.append((loop, recorder))
        }
        self.loops = loops
        probes = try loops.map { loop, recorder in
            try loop.submit {
                let probe = EventLoopLagProbe(on: loop) { late, now in recorder.value.loopLagged(late, now: now) }
                probe.start()
                return NIOLoopBound(probe, eventLoop: loop)
            }.wait()
        }
    }

    /// The recorder of `loop`, asked for on it; `nil` for a loop not of the sink's group.
    func recorder(on loop: any EventLoop) -> SinkLoopRecorder? {
        loops.first { $0.loop === loop }?.recorder.value
    }

    /// Hands every loop's records over now (`drain`, and before a run's summary is read).
    func handOver() {
        for (loop, recorder) in loops {
            try? loop.submit { recorder.value.handOver(now: NIODeadline.now().uptimeNanoseconds) }.wait()
        }
    }

    /// Stops the probes (the sink has drained).
    func stop() {
        for ((loop, _), probe) in zip(loops, probes) {
            try? loop.submit { probe.value.stop() }.wait()
        }
    }

    static func makeHistogram() -> Histogram<UInt64> { makeMicrosecondHistogram() }
}

/// What the loops handed over, loop by loop.
final class SinkTimingTotals: Sendable {
    private struct Loop {
        var lateness = SinkTiming.makeHistogram()
        var fromSend = SinkTiming.makeHistogram()
        var injected = SinkTiming.makeHistogram()
        var loopLag = SinkTiming.makeHistogram()
        var cpuNanoseconds: UInt64 = 0
        var wallNanoseconds: UInt64 = 0
    }

    private let loops = NIOLockedValueBox<[Int: Loop]>([:])

    func add(
        loop index: Int,
        lateness: Histogram<UInt64>,
        fromSend: Histogram<UInt64>,
        injected: Histogram<UInt64>,
        loopLag: Histogram<UInt64>,
        cpuNanoseconds: UInt64,
        wallNanoseconds: UInt64
    ) {
        loops.withLockedValue { loops in
            // Taken out of the dictionary so that its histograms are uniquely held: adding to
            // a copy still in it would copy their counts first.
            var loop = loops.removeValue(forKey: index) ?? Loop()
            if lateness.totalCount > 0 { loop.lateness.add(lateness) }
            if fromSend.totalCount > 0 { loop.fromSend.add(fromSend) }
            if injected.totalCount > 0 { loop.injected.add(injected) }
            if loopLag.totalCount > 0 { loop.loopLag.add(loopLag) }
            loop.cpuNanoseconds = cpuNanoseconds
            loop.wallNanoseconds = wallNanoseconds
            loops[index] = loop
        }
    }

    /// Every loop's records merged, as histograms in microseconds: what `/metrics` shows as
    /// Prometheus histograms (counted from these at scrape time, never on the hot path).
    var histograms:
        (
            lateness: Histogram<UInt64>, fromSend: Histogram<UInt64>, injected: Histogram<UInt64>,
            loopLag: Histogram<UInt64>
        )
    {
        loops.withLockedValue { loops in
            var lateness = SinkTiming.makeHistogram()
            var fromSend = SinkTiming.makeHistogram()
            var injected = SinkTiming.makeHistogram()
            var loopLag = SinkTiming.makeHistogram()
            for loop in loops.values {
                lateness.add(loop.lateness)
                fromSend.add(loop.fromSend)
                injected.add(loop.injected)
                loopLag.add(loop.loopLag)
            }
            return (lateness, fromSend, injected, loopLag)
        }
    }

    /// Every loop's records merged; each loop's CPU share since the sink started.
    var summary: SinkOwnDelays {
        loops.withLockedValue { loops in
            var lateness = SinkTiming.makeHistogram()
            var fromSend = SinkTiming.makeHistogram()
            var injected = SinkTiming.makeHistogram()
            var loopLag = SinkTiming.makeHistogram()
            var utilisation: [Double] = []
            for index in loops.keys.sorted() {
                let loop = loops[index]!
                lateness.add(loop.lateness)
                fromSend.add(loop.fromSend)
                injected.add(loop.injected)
                loopLag.add(loop.loopLag)
                utilisation.append(
                    loop.wallNanoseconds == 0 ? 0 : Double(loop.cpuNanoseconds) / Double(loop.wallNanoseconds)
                )
            }
            return SinkOwnDelays(
                lateness: DelayPercentiles(lateness),
                fromSend: DelayPercentiles(fromSend),
                injected: DelayPercentiles(injected),
                loopLag: DelayPercentiles(loopLag),
                loopUtilisation: utilisation
            )
        }
    }
}

/// The answers queued since a connection's bytes last went to the socket, with their due times
/// (and transits), so that each answer's lateness is timed when it is really written.
///
/// Memory of its own, grown when full and kept, so that queueing an answer is two plain stores:
/// the `Array` this replaced checked its storage for sharing on every append and again when
/// emptied (two copy-on-write checks a request in the sink's turn, counted with callgrind on
/// the cost workload). A class, so that the connection state holding it stays copyable; one
/// connection's, on its event loop.
final class UnwrittenAnswers {
    @exclusivity(unchecked) private var entries: UnsafeMutablePointer<(due: UInt64, transit: UInt64)>
    @exclusivity(unchecked) private var capacity: Int
    @exclusivity(unchecked) private(set) var count = 0

    init(capacity: Int) {
        self.capacity = max(capacity, 1)
        entries = .allocate(capacity: self.capacity)
    }

    deinit {
        entries.deallocate()
    }

    /// Queues an answer due at `due` whose request spent `transit` before its read (0: unknown).
    func append(due: UInt64, transit: UInt64) {
        if count == capacity { grow() }
        (entries + count).initialize(to: (due, transit))
        count += 1
    }

    /// Calls `body` with each queued answer, oldest first, and empties the queue.
    func drain(_ body: (_ due: UInt64, _ transit: UInt64) -> Void) {
        for index in 0..<count { body(entries[index].due, entries[index].transit) }
        count = 0
    }

    /// Doubles the room, keeping what is queued.
    @inline(never)
    private func grow() {
        let larger = UnsafeMutablePointer<(due: UInt64, transit: UInt64)>.allocate(capacity: capacity * 2)
        larger.moveInitialize(from: entries, count: count)
        entries.deallocate()
        entries = larger
        capacity *= 2
    }
}
