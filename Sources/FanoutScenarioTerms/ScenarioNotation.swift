import FanoutFiles
import FanoutNotation
import Foundation

/// The textual forms of the values a scenario's settings share (durations, rates, shares), for
/// command-line options and scenario files alike, each error naming what was wrong
/// (`SinkScenario.duration` and its siblings say the same).
public enum ScenarioNotation {
    /// A duration like `250us`, `5ms`, `1.5s`, `2m` or `1h`.
    public static func duration(_ text: some StringProtocol) throws(SinkScenarioError) -> Duration {
        guard let duration = DurationNotation.parse(text) else {
            throw SinkScenarioError(
                "\(TextLines.quoted(text.trimmingCharacters(in: .whitespaces))) is not a duration; \(DurationNotation.hint)"
            )
        }
        return duration
    }

    /// `LIMIT/WINDOW` (`EventRate`), e.g. `100/s`, `10/1m` or `5000/1.5s`; a bare unit means
    /// one of it, and a bare `LIMIT` a second. The limit counts requests: a whole number ≥ 1.
    public static func rate(_ text: String) throws(SinkScenarioError) -> Rate {
        guard let rate = EventRate(parsing: text), rate.count >= 1, rate.count == rate.count.rounded(),
            rate.count <= Double(Int32.max)
        else {
            throw SinkScenarioError(
                "a rate is LIMIT/WINDOW with a whole LIMIT ≥ 1 and a WINDOW above 0, like 100/s or 10/1m; got \(text)"
            )
        }
        return Rate(limit: Int(rate.count), window: rate.windowOrSecond)
    }

    /// A share from 0 to 1 (`ShareNotation`), e.g. `0.5%` or `0.005`.
    public static func share(_ text: some StringProtocol) throws(SinkScenarioError) -> Double {
        guard let share = ShareNotation.parse(text), (0...1).contains(share) else {
            throw SinkScenarioError("a share is from 0% to 100% (or 0 to 1), like 0.5%; got \(text)")
        }
        return share
    }
}
