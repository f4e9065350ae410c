import Atomics

/// A sink's accepted count and the one count a watcher asked to be woken at
/// (`SinkActivity.signal(whenAccepted:)`), for both sinks: `add` says when an addition reached
/// it, and the sink signals its watcher then, not at every addition.
///
/// ```
///   watcher:     mark ← n (store)  ──► reads the count: already n? done
///   connection:  count += k (then load) ──► reads the mark: crossed from below? signal
/// ```
///
/// Sequentially consistent, both: of the watcher's store-then-read and a connection's
/// add-then-read, one sees the other, so a mark reached is never missed.
public final class AcceptedCount: Sendable {
    private let total = ManagedAtomic(0)
    private let mark = ManagedAtomic(Int.max)

    public init() {}

    /// The accepted count so far.
    public var value: Int { total.load(ordering: .sequentiallyConsistent) }

    /// Asks `add` to say when the count reaches `count`.
    public func signal(at count: Int) { mark.store(count, ordering: .sequentiallyConsistent) }

    /// Adds `count` accepted; true when this addition took the count from below the mark to
    /// it or past it.
    public func add(_ count: Int) -> Bool {
        let after = total.wrappingIncrementThenLoad(by: count, ordering: .sequentiallyConsistent)
        let mark = mark.load(ordering: .sequentiallyConsistent)
        return after >= mark && after - count < mark
    }
}
