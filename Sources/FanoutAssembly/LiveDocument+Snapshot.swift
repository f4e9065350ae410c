import FanoutClient
import FanoutMeasure
import FanoutReport

extension LiveDocument {
    /// A sender's document (`fanout run`, `fanout send`) from its progress and its statistics'
    /// snapshot.
    public init(command: String, progress: RunProgress, snapshot: LoadSnapshot) {
        let elapsed =
            Double(progress.elapsed.components.seconds) + Double(progress.elapsed.components.attoseconds) / 1e18
        self.init(
            command: command,
            elapsedSeconds: elapsed,
            // The snapshot's own count, as its outcomes and seconds are: the progress's is read
            // earlier, and connections hand counts over every 256 outcomes, so in a run's first
            // second it said 1,024 finished beside a closed second of 1,992 (issue 64).
            finished: max(progress.finished, snapshot.sent),
            ratePerSecond: progress.ratePerSecond,
            accepted: snapshot.accepted,
            rejected: Self.named(snapshot.rejected),
            failed: Self.named(snapshot.failed),
            seconds: snapshot.intervals.suffix(Self.secondsKept).map { Second($0) }
        )
    }
}

extension LiveDocument.Second {
    /// The second of `interval`, in milliseconds and named outcomes.
    init(_ interval: LoadInterval) {
        self.init(
            second: interval.second,
            completed: interval.completed,
            p50Ms: Double(interval.p50) / 1000,
            p99Ms: Double(interval.p99) / 1000,
            rejected: LiveDocument.named(interval.rejected),
            failed: LiveDocument.named(interval.failed),
            loopLagMaxMs: Double(interval.maxLoopLag) / 1000,
            readDelayP99Ms: Double(interval.readDelayP99) / 1000,
            senderCores: interval.cpuNanoseconds.map { Double($0) / 1e9 }
        )
    }
}
