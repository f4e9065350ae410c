import NIOCore

/// Measures how late an event loop runs what is due on it, as Node's event-loop-delay monitor
/// does: a task is set for a deadline every `interval`, and how long after its deadline it
/// really ran is the loop's lag at that moment — what any event arriving then (an answer in
/// the socket, a held response falling due) waited for the loop to finish what it was doing.
///
/// ```
///   deadline d ──────► task runs at t ──► sample t − d ──► next deadline t + interval
///               (loop busy reading, encoding, writing)
/// ```
///
/// On a grid (`onGrid`), each deadline is the next multiple of the interval on the uptime clock
/// instead: a loop whose other timers fall on multiples of it (the sender's pacing windows) then
/// wakes for both at once, and the probe costs no wake of its own.
///
/// Confined to its loop: `start` and `stop` are called on it.
public final class EventLoopLagProbe {
    private let loop: any EventLoop
    private let interval: TimeAmount
    private let onGrid: Bool
    private let sample: (_ lateNanoseconds: UInt64, _ now: UInt64) -> Void
    private var task: Scheduled<Void>?

    /// Samples go to `sample` (nanoseconds late, and when it ran), on the loop.
    public init(
        on loop: any EventLoop,
        every interval: TimeAmount = EventLoopLagProbe.defaultInterval,
        onGrid: Bool = false,
        sample: @escaping (_ lateNanoseconds: UInt64, _ now: UInt64) -> Void
    ) {
        self.loop = loop
        self.interval = interval
        self.onGrid = onGrid && interval.nanoseconds > 0
        self.sample = sample
    }

    /// 5 ms: 200 samples a second per loop, enough for a p99 each second, for about 0.1% of a
    /// core (an idle loop wakes for each).
    public static let defaultInterval = TimeAmount.milliseconds(5)

    /// Starts sampling (on the loop).
    public func start() {
        loop.preconditionInEventLoop()
        schedule(after: NIODeadline.now())
    }

    /// Stops sampling (on the loop): no sample is taken after it.
    public func stop() {
        loop.preconditionInEventLoop()
        task?.cancel()
        task = nil
    }

    private func schedule(after now: NIODeadline) {
        let deadline = onGrid ? Self.nextOnGrid(after: now, step: UInt64(interval.nanoseconds)) : now + interval
        let probe = NIOLoopBound(self, eventLoop: loop)
        task = loop.scheduleTask(deadline: deadline) {
            let probe = probe.value
            guard probe.task != nil else { return }
            let now = NIODeadline.now()
            probe.sample(
                now.uptimeNanoseconds - min(now.uptimeNanoseconds, deadline.uptimeNanoseconds),
                now.uptimeNanoseconds
            )
            probe.schedule(after: now)
        }
    }

    /// The next multiple of `step` nanoseconds on the uptime clock after `now`.
    private static func nextOnGrid(after now: NIODeadline, step: UInt64) -> NIODeadline {
        let time = now.uptimeNanoseconds
        return .uptimeNanoseconds(time - time % step + step)
    }
}
