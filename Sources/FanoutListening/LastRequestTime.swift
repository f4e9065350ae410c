import Atomics

/// When a sink's last request came (or kept it busy until), told by its connections out of
/// order from several threads: it only ever moves later. What `SinkActivity.lastRequestUptime`
/// reads, for both sinks. Relaxed: a sink orders it against its counts where a watcher needs it
/// (the time told before the count is added, releasing).
public final class LastRequestTime: Sendable {
    private let uptime = ManagedAtomic<UInt64>(0)

    public init() {}

    /// Moves the time on to `time` (uptime nanoseconds) unless a later one was told.
    public func moveOn(to time: UInt64) {
        var last = uptime.load(ordering: .relaxed)
        while time > last {
            let (exchanged, original) = uptime.weakCompareExchange(expected: last, desired: time, ordering: .relaxed)
            if exchanged { return }
            last = original
        }
    }

    /// The latest time told; `nil` before any.
    public var value: UInt64? {
        let last = uptime.load(ordering: .relaxed)
        return last == 0 ? nil : last
    }
}
