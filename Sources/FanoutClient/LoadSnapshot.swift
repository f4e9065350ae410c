import FanoutAPNs
import FanoutPush
import Histogram

/// A run's counts at one moment.
public struct LoadSnapshot: Sendable {
    /// HTTP/2 requests sent, retries included.
    public var requests: Int
    public var accepted: Int
    public var rejected: [PushReason: Int]
    public var failed: [FailureCause: Int]
    public var skipped: [SkipCause: Int]
    public var retries: Int
    /// Requests the server never processed (above a GOAWAY's last stream, or refused) and
    /// that were sent again without a try used: `requests` counts them each time.
    public var resent: Int = 0
    /// Every answer received, retried ones included: 200s, and errors by reason.
    public var answeredOK: Int
    public var answers: [PushReason: Int]
    /// Over every accepted notification's (token, payload): equal to the sink's when nothing
    /// was lost, duplicated or corrupted.
    public var digest: NotificationDigest
    public var connectionsOpened: Int
    /// Connections that could not be opened or ended with an error.
    public var connectionFailures: Int
    /// Tokens read but not sent: the schedule (or the closed model's duration) was over.
    public var unscheduled: Int
    /// Tokens read ahead but never sent: the run was interrupted before their turn. Not in
    /// `sent`, and not failures.
    public var unsent: Int = 0
    /// Microseconds from each notification's start (its intended send time in the open model,
    /// its first send in the closed one) to its final outcome, outside the warm-up, over the
    /// seconds closed so far.
    public var latency: Histogram<UInt64>
    /// The open model: how late (µs) the generator sent each notification that had a stream
    /// free for it (empty in the closed model).
    public var lag: Histogram<UInt64>
    /// The run second by second.
    public var intervals: [LoadInterval]
    /// The open model's largest pacing window over the connections (nanoseconds).
    public var largestPacingWindow: UInt64 = 0
    /// Notifications (outside the warm-up) that waited for a stream.
    public var streamWaits = StreamWaits()
    /// Notifications that reached a final outcome in each 100 ms of the run's first 10 s
    /// (`FineBins`; warm-up included, as `intervals`' `completed`): zeros until the run has
    /// finished, empty without a recording.
    public var fineCompleted: [Int] = []

    /// Notifications sent (at least once): each ends accepted, rejected or failed.
    public var sent: Int { accepted + rejected.values.reduce(0, +) + failed.values.reduce(0, +) }
}
