/// What a job watching a sink for its ends reads (`fanout sink`'s `--expect`, `--idle-exit`,
/// `--first-request-within`), whichever service the sink mocks: its counts, a wake-up its
/// counts signal, and, where the sink keeps it, when the last request came.
///
/// ```
///   watcher ──reads──► requestCount, acceptedCount, lastRequestUptime
///           ──waits──► changes (signalled at the first request, at the one count it was told,
///                      when the expected tokens are complete) or the next time an end falls due
/// ```
public protocol SinkActivity: Sendable {
    /// Requests counted so far.
    var requestCount: Int { get }
    /// Notifications accepted so far (answered 200 and bound for a device).
    var acceptedCount: Int { get }
    /// Signalled when the counts move as far as the watcher needs to know.
    var changes: Wakeup { get }
    /// Uptime nanoseconds of the last request, where the sink keeps it (`nil`: the watcher
    /// times the last request by when it saw `requestCount` move).
    var lastRequestUptime: UInt64? { get }
    /// Asks for `changes` to be signalled when `acceptedCount` reaches `count` (a sink that
    /// signals as its counts move anyway may do nothing).
    func signal(whenAccepted count: Int)
}
