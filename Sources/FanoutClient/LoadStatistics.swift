import Atomics
import FanoutAPNs
import FanoutHTTP2
import FanoutMeasure
import Histogram
import NIOConcurrencyHelpers

/// One connection's counts since it last added them to the statistics.
struct LoadCounts {
    static let flushInterval = 256

    /// HTTP/2 requests sent, retries included.
    var requests = 0
    /// Notifications that reached a final outcome, by kind.
    var accepted = 0
    var rejected = [Int](repeating: 0, count: APNsReason.all.count)
    var failed = [Int](repeating: 0, count: FailureCause.all.count)
    var skipped = [Int](repeating: 0, count: SkipCause.all.count)
    /// Requests sent again: after a retryable answer, a reset, a timeout or a lost connection.
    var retries = 0
    /// Requests the server never processed and that were sent again without a try used:
    /// above a GOAWAY's last stream, or refused (REFUSED_STREAM).
    var resent = 0
    /// Every answer received, final or not: 200s, and errors by reason (what a server counts).
    var answeredOK = 0
    var answers = [Int](repeating: 0, count: APNsReason.all.count)
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

    mutating func reject(_ reason: APNsReason) {
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

/// What a run has sent and what came of it, across connections; connections add their counts
/// every `LoadCounts.flushInterval` outcomes, at least once a second, and when they end.
/// Latencies go through each event loop's `LoopRecorder` to the run's `IntervalCollector`.
public final class LoadStatistics: Sendable {
    private let counts = NIOLockedValueBox(LoadCounts())
    private let collector = NIOLockedValueBox<IntervalCollector?>(nil)
    private let finals = ManagedAtomic<Int>(0)
    let connectionsOpened = ManagedAtomic<Int>(0)
    let connectionFailures = ManagedAtomic<Int>(0)
    private let largestPacingWindow = ManagedAtomic<UInt64>(0)
    private let firstSendUptime = ManagedAtomic<UInt64>(.max)
    /// The rejections and failures counted by the end of each second, and what was in flight
    /// then (`markSecond(_:connections:)`).
    private let marks = NIOLockedValueBox<[OutcomeMark]>([])
    /// A bounded sample of the answers' `apns-unique-id`s (`fanout send`'s answer-ids.json).
    public let answerIDs = AnswerIDSample()

    public init() {}

    /// A connection sent its first request at `now` (uptime nanoseconds).
    func noteFirstSend(_ now: UInt64) {
        Self.store(now, in: firstSendUptime, while: <)
    }

    /// Stores `value` in `atomic` unless another thread stored one it does not `replace`:
    /// the earliest or the largest of all offered, without a lock.
    private static func store(
        _ value: UInt64,
        in atomic: ManagedAtomic<UInt64>,
        while replace: (UInt64, UInt64) -> Bool
    ) {
        var seen = atomic.load(ordering: .relaxed)
        while replace(value, seen) {
            let (exchanged, original) = atomic.compareExchange(expected: seen, desired: value, ordering: .relaxed)
            if exchanged { return }
            seen = original
        }
    }

    /// When the run's first request went out (uptime nanoseconds), 0 before any did.
    var firstSend: UInt64 {
        let value = firstSendUptime.load(ordering: .relaxed)
        return value == .max ? 0 : value
    }

    /// Latencies in microseconds, from 1 µs to an hour, three significant digits.
    public static func makeHistogram() -> Histogram<UInt64> { makeMicrosecondHistogram() }

    func add(_ local: LoadCounts) {
        counts.withLockedValue { total in
            total.requests += local.requests
            total.accepted += local.accepted
            for index in local.rejected.indices { total.rejected[index] += local.rejected[index] }
            for index in local.failed.indices { total.failed[index] += local.failed[index] }
            for index in local.skipped.indices { total.skipped[index] += local.skipped[index] }
            total.retries += local.retries
            total.resent += local.resent
            total.answeredOK += local.answeredOK
            for index in local.answers.indices { total.answers[index] += local.answers[index] }
            total.digest.combine(local.digest)
            total.unscheduled += local.unscheduled
            total.unsent += local.unsent
        }
        finals.wrappingIncrement(by: local.finals, ordering: .relaxed)
    }

    /// A connection's largest pacing window so far (nanoseconds).
    func notePacingWindow(_ nanoseconds: UInt64) {
        Self.store(nanoseconds, in: largestPacingWindow, while: >)
    }

    /// Where the run's latencies are collected (set when it starts).
    func record(into collector: IntervalCollector) {
        self.collector.withLockedValue { $0 = collector }
    }

    /// Notes the rejections and failures counted so far as those of `second` and before, and
    /// what was in flight at its end: `connections` open or opening, and the notifications sent
    /// without a final outcome. The run calls it once a second, on its own thread, so that
    /// summary.json can say each second's outcomes by reason without a counter more on the
    /// notifications' path. What a connection has not handed over yet (it does every
    /// `LoadCounts.flushInterval` outcomes and at least once a second) falls in the next second;
    /// its notifications in flight are those of its last hand-over.
    func markSecond(_ second: Int, connections: Int) {
        let finished = finished
        let mark = counts.withLockedValue {
            OutcomeMark(
                second: second,
                rejected: $0.rejected,
                failed: $0.failed,
                connections: connections,
                inFlight: max(0, $0.requests - $0.retries - $0.resent - finished)
            )
        }
        marks.withLockedValue { $0.append(mark) }
    }

    /// Notifications with a final outcome so far.
    public var finished: Int { finals.load(ordering: .relaxed) }

    /// The counts `AbortWatch` judges, at the run's whole `second`.
    func tally(at second: Int) -> AbortWatch.Tally {
        let finished = finished
        return counts.withLockedValue {
            AbortWatch.Tally(
                second: second,
                // A notification's first sending: neither a retry nor a request sent again
                // because the server never processed it (`resent`).
                started: $0.requests - $0.retries - $0.resent,
                finished: finished,
                rejected: $0.rejected,
                failed: $0.failed
            )
        }
    }

    /// Every count now, with the latencies recorded so far.
    public var snapshot: LoadSnapshot {
        let counts = counts.withLockedValue { $0 }
        var rejected: [APNsReason: Int] = [:]
        for (index, count) in counts.rejected.enumerated() where count > 0 {
            rejected[APNsReason.all[index]] = count
        }
        var failed: [FailureCause: Int] = [:]
        for (index, count) in counts.failed.enumerated() where count > 0 { failed[FailureCause.all[index]] = count }
        var skipped: [SkipCause: Int] = [:]
        for (index, count) in counts.skipped.enumerated() where count > 0 { skipped[SkipCause.all[index]] = count }
        var answers: [APNsReason: Int] = [:]
        for (index, count) in counts.answers.enumerated() where count > 0 { answers[APNsReason.all[index]] = count }
        let collector = collector.withLockedValue { $0 }
        var intervals = collector?.intervals ?? []
        OutcomeMark.attribute(
            marks.withLockedValue { $0 },
            final: OutcomeMark(second: .max, rejected: counts.rejected, failed: counts.failed),
            to: &intervals
        )
        return LoadSnapshot(
            requests: counts.requests,
            accepted: counts.accepted,
            rejected: rejected,
            failed: failed,
            skipped: skipped,
            retries: counts.retries,
            resent: counts.resent,
            answeredOK: counts.answeredOK,
            answers: answers,
            digest: counts.digest,
            connectionsOpened: connectionsOpened.load(ordering: .relaxed),
            connectionFailures: connectionFailures.load(ordering: .relaxed),
            unscheduled: counts.unscheduled,
            unsent: counts.unsent,
            latency: collector?.latency ?? Self.makeHistogram(),
            lag: collector?.lag ?? Self.makeHistogram(),
            intervals: intervals,
            largestPacingWindow: largestPacingWindow.load(ordering: .relaxed),
            streamWaits: collector?.streamWaits ?? StreamWaits(),
            fineCompleted: collector?.fineCompleted ?? []
        )
    }
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
            for (reason, count) in zip(APNsReason.all, zip(mark.rejected, previous.rejected)) where count.0 > count.1 {
                intervals[target].rejected[reason, default: 0] += count.0 - count.1
            }
            for (cause, count) in zip(FailureCause.all, zip(mark.failed, previous.failed)) where count.0 > count.1 {
                intervals[target].failed[cause, default: 0] += count.0 - count.1
            }
            previous = mark
        }
    }
}

/// A run's counts at one moment.
public struct LoadSnapshot: Sendable {
    /// HTTP/2 requests sent, retries included.
    public var requests: Int
    public var accepted: Int
    public var rejected: [APNsReason: Int]
    public var failed: [FailureCause: Int]
    public var skipped: [SkipCause: Int]
    public var retries: Int
    /// Requests the server never processed (above a GOAWAY's last stream, or refused) and
    /// that were sent again without a try used: `requests` counts them each time.
    public var resent: Int = 0
    /// Every answer received, retried ones included: 200s, and errors by reason.
    public var answeredOK: Int
    public var answers: [APNsReason: Int]
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
