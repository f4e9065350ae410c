import Histogram

/// How far a run has come, handed to its progress callback about once a second: what a
/// terminal's progress line and the live page show while the run goes.
public struct RunProgress: Sendable {
    /// Time since the run started.
    public var elapsed: Duration
    /// Notifications with a final outcome.
    public var finished: Int
    /// Finished in the last second or so, per second.
    public var ratePerSecond: Double
    /// The latencies of the seconds closed so far.
    public var latency: Histogram<UInt64>
    /// Rejected and failed so far.
    public var errors: Int

    /// The progress at `elapsed`, as the run's driver measured it.
    public init(
        elapsed: Duration,
        finished: Int,
        ratePerSecond: Double,
        latency: Histogram<UInt64>,
        errors: Int = 0
    ) {
        self.elapsed = elapsed
        self.finished = finished
        self.ratePerSecond = ratePerSecond
        self.latency = latency
        self.errors = errors
    }
}
