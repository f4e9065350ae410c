import FanoutMeasure
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
            from: tickets.map { .schedule($0) } ?? .firstSend(statistics),
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
