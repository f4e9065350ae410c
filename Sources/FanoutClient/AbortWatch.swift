import FanoutAPNs
import FanoutNotation
import FanoutPush
import Histogram

/// `--abort-on`: a condition that stops a run while it goes (k6's `abortOnFail`), judged once a
/// second over the run's last `windowSeconds`, from `AbortPolicy.after` on (k6's
/// `delayAbortEval`). It says when to stop: `p99 > 200ms` aborts a run whose last window's p99
/// is over 200 ms.
///
/// ```
///   the run's whole seconds:  0 … [e−W] … [e−2] [e−1] │ e   (judged at e)
///   the window:                   └──── W seconds ────┘
///   latencies: the window's closed seconds (latency.hlog's), and every notification sent
///              before e − (⌈limit⌉ + 1 s) still unanswered at e, counted at the limit
///   counts:    the run's counts at e less its counts at e − W
/// ```
///
/// The unanswered are what a stall hides: while the server holds every answer, no latency is
/// recorded at all, and a p99 of the answers alone would wait for the stall to end. Those sent
/// ⌈limit⌉ + 1 s before and still unanswered are certainly slower than the limit (the counts
/// the connections hand over lag by a second at most), so they count as answers just over
/// it: the window's percentile is a lower bound, and an abort it calls is never a false one.
public struct AbortCondition: Sendable, Hashable, CustomStringConvertible {
    /// What is measured over the window.
    public enum Measure: Sendable, Hashable {
        /// A latency percentile (0–100; 100 is the slowest), in ms.
        case latency(percentile: Double)
        /// Notifications with a final outcome, per second.
        case throughput
        /// Notifications sent (first tries).
        case sent
        /// Notifications rejected or failed.
        case errors
        /// Rejected: by one reason, or all (`nil`).
        case rejected(PushReason?)
        /// Failed: by one cause, or all (`nil`).
        case failed(FailureCause?)
        /// The open model's generator: its worst lag behind the schedule, in ms.
        case lag
    }

    /// As written: `p99 > 200ms`.
    public var text: String
    public var measure: Measure
    public var comparison: Comparison
    /// In the measure's unit: ms for latencies and lag, per second, a count, or with
    /// `isShare` a share of those sent in the window (0.01 for 1%).
    public var limit: Double
    public var isShare: Bool
    /// The window's length, whole seconds.
    public var windowSeconds: Int

    public init(
        text: String,
        measure: Measure,
        comparison: Comparison,
        limit: Double,
        isShare: Bool = false,
        windowSeconds: Int
    ) {
        self.text = text
        self.measure = measure
        self.comparison = comparison
        self.limit = limit
        self.isShare = isShare
        self.windowSeconds = windowSeconds
    }

    public var description: String { text }

    /// The unit its figures are said in.
    public var unit: String {
        if isShare { return "%" }
        switch measure {
        case .latency, .lag: return "ms"
        case .throughput: return "/s"
        case .sent, .errors, .rejected, .failed: return ""
        }
    }

    /// How many seconds back the unanswered are counted from: ⌈limit⌉ + 1 (`nil`: the
    /// condition does not look at them).
    var unansweredLookBack: Int? {
        guard case .latency = measure, comparison.looksUp else { return nil }
        return Int((limit / 1000).rounded(.up)) + 1
    }
}

/// The `--abort-on` conditions of a run, and when they start to be judged.
public struct AbortPolicy: Sendable {
    public var conditions: [AbortCondition]
    /// Nothing is judged before this long after the start (`--abort-after`): a warm-up's
    /// connections and first round trips do not abort a run.
    public var after: Duration

    public init(conditions: [AbortCondition], after: Duration = .zero) {
        self.conditions = conditions
        self.after = after
    }
}

/// Why a run was aborted: the condition, its window, when, and what was measured.
public struct Abort: Sendable, Hashable {
    /// The condition as written (`p99 > 200ms`).
    public var condition: String
    public var windowSeconds: Int
    /// From the run's start to the judgement.
    public var after: Duration
    /// The window's figure, in `unit` (a share in percent).
    public var measured: Double
    public var unit: String
    /// A latency's: notifications still unanswered `lookBack` seconds after they were sent,
    /// counted just over the limit (`measured` is then a lower bound); `nil` when none were.
    public var unanswered: Unanswered?

    public struct Unanswered: Sendable, Hashable {
        public var count: Int
        public var lookBack: Int
    }

    public init(
        condition: String,
        windowSeconds: Int,
        after: Duration,
        measured: Double,
        unit: String,
        unanswered: Unanswered? = nil
    ) {
        self.condition = condition
        self.windowSeconds = windowSeconds
        self.after = after
        self.measured = measured
        self.unit = unit
        self.unanswered = unanswered
    }
}

/// Judges an `AbortPolicy` once a second on the run's thread (`RunDriver`), from the run's
/// counts and its closed seconds; keeps the counts of the last seconds it needs.
final class AbortWatch {
    /// The run's counts at a whole second (as the connections last handed them over).
    struct Tally {
        var second: Int
        var started = 0
        var finished = 0
        var rejected = [Int](repeating: 0, count: PushReason.count)
        var failed = [Int](repeating: 0, count: FailureCause.all.count)
    }

    private let policy: AbortPolicy
    /// Oldest first, one a second, as far back as the longest window or look-back needs.
    private var tallies: [Tally] = []
    private let keep: Int

    init(policy: AbortPolicy) {
        self.policy = policy
        keep =
            (policy.conditions.map { max($0.windowSeconds, $0.unansweredLookBack ?? 0) }.max() ?? 0) + 1
    }

    /// Records `tally` (the counts at its whole second) and judges the conditions over the
    /// windows that end there; the first condition met is the abort.
    func check(_ tally: Tally, intervals: (_ from: Int) -> [LoadInterval]) -> Abort? {
        tallies.append(tally)
        if tallies.count > keep { tallies.removeFirst(tallies.count - keep) }
        guard Duration.seconds(tally.second) >= policy.after else { return nil }
        for condition in policy.conditions {
            guard let measured = measure(condition, at: tally, intervals: intervals) else { continue }
            guard condition.comparison.holds(measured, condition.limit) else { continue }
            let unanswered = condition.unansweredLookBack.map {
                Abort.Unanswered(count: self.unanswered(at: tally, lookBack: $0), lookBack: $0)
            }
            return Abort(
                condition: condition.text,
                windowSeconds: condition.windowSeconds,
                after: .seconds(tally.second),
                measured: condition.isShare ? measured * 100 : measured,
                unit: condition.unit,
                unanswered: unanswered.flatMap { $0.count > 0 ? $0 : nil }
            )
        }
        return nil
    }

    /// Notifications sent `lookBack` seconds before `now` or earlier and unanswered at `now`:
    /// at least that many (the counts `now` holds lag by a second at most).
    private func unanswered(at now: Tally, lookBack: Int) -> Int {
        max(0, tally(at: now.second - lookBack).started - now.finished)
    }

    /// The counts at `second`: the run's start's (all zero) before the first judged.
    private func tally(at second: Int) -> Tally {
        tallies.last { $0.second <= second } ?? Tally(second: 0)
    }

    /// The condition's figure over the window ending at `now` (`nil`: nothing to judge yet).
    private func measure(
        _ condition: AbortCondition,
        at now: Tally,
        intervals: (_ from: Int) -> [LoadInterval]
    ) -> Double? {
        let from = now.second - condition.windowSeconds
        let before = tally(at: from)
        let sent = now.started - before.started
        func count(_ value: Int) -> Double? {
            guard condition.isShare else { return Double(value) }
            return sent > 0 ? Double(value) / Double(sent) : nil
        }
        func sum(_ counts: [Int], _ base: [Int], at index: Int?) -> Int {
            guard let index else { return zip(counts, base).reduce(0) { $0 + $1.0 - $1.1 } }
            return counts[index] - base[index]
        }
        switch condition.measure {
        case .latency(let percentile):
            return latency(condition, percentile: percentile, at: now, window: intervals(max(0, from)))
        case .throughput:
            // Over the part of the window the run has lasted.
            return Double(now.finished - before.finished) / Double(max(1, now.second - before.second))
        case .sent:
            return Double(sent)
        case .errors:
            return count(sum(now.rejected, before.rejected, at: nil) + sum(now.failed, before.failed, at: nil))
        case .rejected(let reason):
            return count(sum(now.rejected, before.rejected, at: reason?.index))
        case .failed(let cause):
            return count(sum(now.failed, before.failed, at: cause.flatMap { LoadCounts.causeIndex[$0] }))
        case .lag:
            let window = intervals(max(0, from))
            return window.isEmpty ? nil : Double(window.map(\.maxLag).max() ?? 0) / 1000
        }
    }

    /// The window's latency percentile (ms), the unanswered counted just over the limit.
    private func latency(
        _ condition: AbortCondition,
        percentile: Double,
        at now: Tally,
        window: [LoadInterval]
    ) -> Double? {
        var histogram = LoadStatistics.makeHistogram()
        for second in window where second.latencies.totalCount > 0 {
            histogram.add(second.latencies.unpacked())
        }
        if let lookBack = condition.unansweredLookBack {
            let unanswered = unanswered(at: now, lookBack: lookBack)
            if unanswered > 0 {
                let overLimit = UInt64(max(0, condition.limit * 1000)) + 1
                _ = histogram.record(overLimit, count: UInt64(unanswered))
            }
        }
        guard histogram.totalCount > 0 else { return nil }
        let value = percentile >= 100 ? histogram.max : histogram.valueAtPercentile(percentile)
        return Double(value) / 1000
    }
}
