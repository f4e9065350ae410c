import FanoutClient
import Foundation

/// The sender's CPU a notification once a run has settled: its seconds from `settle` on, the
/// last (partial) one left out, as the sum of their CPU over the sum of their completions.
/// A calibration's connections start together and their answers come back together, which
/// costs less a notification than the spread a long fan-out settles into (`PlanJob
/// .calibrationSettle`); a plan is for the long fan-out.
///
/// ```
///   second   0    1    2    3    4  | 5    6   …   18 | 19 (partial)
///   cost     low, rising          | measured here    | left out
/// ```
struct SteadyCost: Equatable {
    var microseconds: Double
    /// The seconds measured: `first` through `last`.
    var first: Int
    var last: Int

    /// The fewest settled seconds a figure is taken from; `nil` below them.
    static let fewestSeconds = 5

    /// One second's completions and its sender CPU (`nil`: not measured).
    typealias Second = (second: Int, completed: Int, cpuNanoseconds: UInt64?)

    init?(_ intervals: [LoadInterval], settle: Int) {
        self.init(seconds: intervals.map { ($0.second, $0.completed, $0.cpuNanoseconds) }, settle: settle)
    }

    init?(seconds: [Second], settle: Int) {
        guard let end = seconds.map(\.second).max() else { return nil }
        let settled = seconds.filter { $0.second >= settle && $0.second < end }
        guard settled.count >= Self.fewestSeconds, settled.allSatisfy({ $0.cpuNanoseconds != nil }) else { return nil }
        let completed = settled.reduce(0) { $0 + $1.completed }
        let nanoseconds = settled.reduce(UInt64(0)) { $0 + ($1.cpuNanoseconds ?? 0) }
        guard completed > 0 else { return nil }
        microseconds = Double(nanoseconds) / 1000 / Double(completed)
        first = settled.map(\.second).min() ?? settle
        last = settled.map(\.second).max() ?? settle
    }

    /// For the plan's assumptions.
    var spoken: String { "measured over seconds \(first)–\(last), once the connections' answers had spread" }
}
