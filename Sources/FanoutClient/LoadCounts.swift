import FanoutAPNs
import FanoutPush

/// One connection's counts since it last added them to the statistics.
struct LoadCounts {
    static let flushInterval = 256

    /// HTTP/2 requests sent, retries included.
    var requests = 0
    /// Notifications that reached a final outcome, by kind.
    var accepted = 0
    var rejected = [Int](repeating: 0, count: PushReason.count)
    var failed = [Int](repeating: 0, count: FailureCause.all.count)
    var skipped = [Int](repeating: 0, count: SkipCause.all.count)
    /// Requests sent again: after a retryable answer, a reset, a timeout or a lost connection.
    var retries = 0
    /// Requests the server never processed and that were sent again without a try used:
    /// above a GOAWAY's last stream, or refused (REFUSED_STREAM).
    var resent = 0
    /// Every answer received, final or not: 200s, and errors by reason (what a server counts).
    var answeredOK = 0
    var answers = [Int](repeating: 0, count: PushReason.count)
    /// Over every accepted notification's (token, payload).
    var digest = NotificationDigest()
    /// Final outcomes counted since the last flush.
    var finals = 0
    /// Tokens read but not sent because the schedule (or the duration) was over.
    var unscheduled = 0
    /// Tokens read ahead but never sent because the run was interrupted (a signal): neither
    /// sent nor failed.
    var unsent = 0

    static let causeIndex: [FailureCause: Int] = Dictionary(
        uniqueKeysWithValues: FailureCause.all.enumerated().map { ($1, $0) }
    )

    mutating func reject(_ reason: PushReason) {
        rejected[reason.index] += 1
        finals += 1
    }

    mutating func fail(_ cause: FailureCause) {
        failed[Self.causeIndex[cause]!] += 1
        finals += 1
    }

    mutating func skip(_ cause: SkipCause) {
        switch cause {
        case .payloadTooLarge: skipped[0] += 1
        case .badFields: skipped[1] += 1
        }
        finals += 1
    }

    mutating func accept(digestHash: UInt64) {
        accepted += 1
        digest.add(hash: digestHash)
        finals += 1
    }

    mutating func clear() {
        self = LoadCounts(clearing: self)
    }

    /// Zero counts that keep `previous`' array storage.
    private init(clearing previous: LoadCounts) {
        self = previous
        requests = 0
        accepted = 0
        for index in rejected.indices { rejected[index] = 0 }
        for index in failed.indices { failed[index] = 0 }
        for index in skipped.indices { skipped[index] = 0 }
        retries = 0
        resent = 0
        answeredOK = 0
        for index in answers.indices { answers[index] = 0 }
        digest = NotificationDigest()
        finals = 0
        unscheduled = 0
        unsent = 0
    }

    init() {}
}

/// The rejections and failures by reason counted by the end of a second (cumulative, indexed
/// as `LoadCounts`' arrays), and what was in flight then (`nil` for the run's totals).
struct OutcomeMark {
    var second: Int
    var rejected: [Int]
    var failed: [Int]
    var connections: Int? = nil
    var inFlight: Int? = nil

    /// Gives each interval the outcomes counted between the previous mark and its own; what was
    /// counted after the last mark (`final`: the run's totals) goes to the last interval.
    static func attribute(_ marks: [OutcomeMark], final: OutcomeMark, to intervals: inout [LoadInterval]) {
        guard let last = intervals.indices.last else { return }
        let index = Dictionary(intervals.indices.map { (intervals[$0].second, $0) }) { first, _ in first }
        var previous = OutcomeMark(
            second: -1,
            rejected: Array(repeating: 0, count: final.rejected.count),
            failed: Array(repeating: 0, count: final.failed.count)
        )
        for mark in marks + [final] {
            let target = mark.second == .max ? last : index[mark.second] ?? last
            if mark.connections != nil {
                intervals[target].connections = mark.connections
                intervals[target].inFlight = mark.inFlight
            }
            for (reason, count) in zip(PushReason.all, zip(mark.rejected, previous.rejected)) where count.0 > count.1 {
                intervals[target].rejected[reason, default: 0] += count.0 - count.1
            }
            for (cause, count) in zip(FailureCause.all, zip(mark.failed, previous.failed)) where count.0 > count.1 {
                intervals[target].failed[cause, default: 0] += count.0 - count.1
            }
            previous = mark
        }
    }
}
