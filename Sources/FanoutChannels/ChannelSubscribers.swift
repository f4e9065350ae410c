import FanoutNotation
import FanoutScenarioTerms
import Foundation

/// How many devices subscribe to each broadcast channel (`--channel-subscribers`): one count
/// for every channel, or a spread drawn once per channel, when it is created, from the
/// scenario's seed.
///
/// ```
///   10000                  every channel has 10,000 subscribers
///   uniform:1000-20000     each channel's count uniform in [1,000, 20,000]
///   lognormal:50000,1      median 50,000, σ 1 of the underlying normal
/// ```
public enum ChannelSubscribers: Sendable, Hashable, CustomStringConvertible {
    /// Every channel has this many.
    case fixed(Int)
    /// Each channel's count uniform from the first to the second.
    case uniform(Int, Int)
    /// Each channel's count log-normal: its median, and the σ of the underlying normal.
    case logNormal(median: Int, sigma: Double)

    /// The most subscribers one channel may have: 100 million (a draw beyond it is it), so that
    /// a broadcast's deliveries times a run's broadcasts stays far inside an `Int`.
    public static let largest = 100_000_000

    /// Reads the grammar above; the error names the option and what was wrong.
    public init(parsing text: String) throws {
        func count(_ part: Substring) throws -> Int {
            guard let number = DecimalNotation.parseGrouped(part), number == number.rounded(), number >= 0,
                number <= Double(Self.largest)
            else {
                throw SinkScenarioError(
                    "--channel-subscribers: '\(part)' is not a count from 0 to \(Self.largest) in '\(text)'"
                )
            }
            return Int(number)
        }
        if text.hasPrefix("uniform:") {
            let bounds = text.dropFirst("uniform:".count).split(separator: "-", omittingEmptySubsequences: false)
            guard bounds.count == 2 else {
                throw SinkScenarioError("--channel-subscribers: uniform is uniform:LOW-HIGH; got '\(text)'")
            }
            let (low, high) = (try count(bounds[0]), try count(bounds[1]))
            guard low <= high else {
                throw SinkScenarioError("--channel-subscribers: uniform's LOW is above its HIGH in '\(text)'")
            }
            self = .uniform(low, high)
        } else if text.hasPrefix("lognormal:") {
            let parts = text.dropFirst("lognormal:".count).split(separator: ",", omittingEmptySubsequences: false)
            guard parts.count == 2, let sigma = DecimalNotation.parse(parts[1]), sigma >= 0, sigma <= 4 else {
                throw SinkScenarioError(
                    "--channel-subscribers: log-normal is lognormal:MEDIAN,SIGMA with 0 ≤ σ ≤ 4; got '\(text)'"
                )
            }
            self = .logNormal(median: try count(parts[0]), sigma: sigma)
        } else {
            self = .fixed(try count(Substring(text.hasPrefix("fixed:") ? String(text.dropFirst(6)) : text)))
        }
    }

    /// The grammar's text for it.
    public var description: String {
        switch self {
        case .fixed(let count): "\(count)"
        case .uniform(let low, let high): "uniform:\(low)-\(high)"
        case .logNormal(let median, let sigma): "lognormal:\(median),\(sigma)"
        }
    }

    /// One channel's count.
    func draw(_ random: inout SinkRandom) -> Int {
        switch self {
        case .fixed(let count):
            return count
        case .uniform(let low, let high):
            return low + Int(random.next() % UInt64(high - low + 1))
        case .logNormal(let median, let sigma):
            let value = Double(median) * Foundation.exp(sigma * random.normal())
            return value.isFinite ? Int(min(max(value.rounded(), 0), Double(Self.largest))) : Self.largest
        }
    }
}
