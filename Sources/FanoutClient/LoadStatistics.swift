import Atomics
import FanoutAPNs
import FanoutHTTP2
import FanoutMeasure
import FanoutPush
import Histogram
import NIOConcurrencyHelpers

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
    /// When the run's first request went out (the closed model's warm-up counts from it).
    let firstSendClock = FirstSendClock()
    /// The rejections and failures counted by the end of each second, and what was in flight
    /// then (`markSecond(_:connections:)`).
    private let marks = NIOLockedValueBox<[OutcomeMark]>([])
    /// A bounded sample of the answers' `apns-unique-id`s (`fanout send`'s answer-ids.json).
    public let answerIDs = AnswerIDSample()

    public init() {}

    /// A connection sent its first request at `now` (uptime nanoseconds).
    func noteFirstSend(_ now: UInt64) {
        firstSendClock.note(now)
    }

    /// Stores `value` in `atomic` unless another thread stored one it does not `replace`:
    /// the earliest or the largest of all offered, without a lock.
    static func store(
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
        var rejected: [PushReason: Int] = [:]
        for (index, count) in counts.rejected.enumerated() where count > 0 {
            rejected[PushReason.all[index]] = count
        }
        var failed: [FailureCause: Int] = [:]
        for (index, count) in counts.failed.enumerated() where count > 0 { failed[FailureCause.all[index]] = count }
        var skipped: [SkipCause: Int] = [:]
        for (index, count) in counts.skipped.enumerated() where count > 0 { skipped[SkipCause.all[index]] = count }
        var answers: [PushReason: Int] = [:]
        for (index, count) in counts.answers.enumerated() where count > 0 { answers[PushReason.all[index]] = count }
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
