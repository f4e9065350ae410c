import FanoutFiles
import FanoutNotation
import Foundation

extension LatencyDistribution {
    /// As an option writes it, which `init(parsing:)` reads back: `fixed:80ms`,
    /// `uniform:1ms-5ms`, `lognormal:7m,1.2`; an empirical one by its count of values (the
    /// file it came from is not kept).
    public var notation: String {
        let d = DurationNotation.format
        return switch self {
        case .fixed(let value): "fixed:\(d(value))"
        case .uniform(let low, let high): "uniform:\(d(low))-\(d(high))"
        case .normal(let mean, let deviation): "normal:\(d(mean)),\(d(deviation))"
        case .logNormal(let median, let sigma): "lognormal:\(d(median)),\(String(format: "%g", sigma))"
        case .empirical(let values): "empirical (\(values.count) values)"
        }
    }

    /// The largest log-normal σ taken: round trips measured on the Internet have σ well below 1;
    /// beyond 10 the distribution is a few huge values and zeros.
    static let largestSigma: Double = 10

    /// `fixed:5ms`, `uniform:1ms-10ms`, `normal:MEAN,DEVIATION`, `lognormal:MEDIAN,SIGMA` or
    /// `empirical:FILE` (one duration per line).
    public init(parsing text: String) throws(SinkScenarioError) {
        guard let colon = text.firstIndex(of: ":") else {
            throw SinkScenarioError("a latency is KIND:VALUES, like fixed:5ms or uniform:1ms-10ms; got \(text)")
        }
        let kind = text[..<colon]
        let values = String(text[text.index(after: colon)...])
        switch kind {
        case "fixed":
            self = .fixed(try ScenarioNotation.duration(values))
        case "uniform":
            let bounds = values.split(separator: "-")
            guard bounds.count == 2 else { throw SinkScenarioError("uniform latency is uniform:LOW-HIGH; got \(text)") }
            let low = try ScenarioNotation.duration(bounds[0])
            let high = try ScenarioNotation.duration(bounds[1])
            guard low <= high else { throw SinkScenarioError("uniform latency needs LOW ≤ HIGH; got \(text)") }
            self = .uniform(low, high)
        case "normal":
            let parameters = values.split(separator: ",")
            guard parameters.count == 2 else {
                throw SinkScenarioError("normal latency is normal:MEAN,DEVIATION; got \(text)")
            }
            self = .normal(
                mean: try ScenarioNotation.duration(parameters[0]),
                deviation: try ScenarioNotation.duration(parameters[1])
            )
        case "lognormal":
            let parameters = values.split(separator: ",")
            guard parameters.count == 2, let sigma = DecimalNotation.parse(parameters[1]), sigma >= 0,
                sigma <= Self.largestSigma
            else {
                throw SinkScenarioError(
                    "log-normal latency is lognormal:MEDIAN,SIGMA with 0 ≤ σ ≤ \(Int(Self.largestSigma)); got \(text)"
                )
            }
            self = .logNormal(median: try ScenarioNotation.duration(parameters[0]), sigma: sigma)
        case "empirical":
            let content: String
            do {
                content = try String(contentsOfFile: values, encoding: .utf8)
            } catch {
                throw SinkScenarioError("cannot read the latency samples \(values): \(error.reason)")
            }
            var samples: [Duration] = []
            for line in TextLines(content) {
                let sample = line.text.trimmingCharacters(in: .whitespaces)
                if sample.isEmpty || sample.hasPrefix("#") { continue }
                do {
                    samples.append(try ScenarioNotation.duration(sample))
                } catch {
                    throw SinkScenarioError("\(values):\(line.number): \(error.description)")
                }
            }
            guard !samples.isEmpty else { throw SinkScenarioError("\(values) holds no latency samples") }
            self = .empirical(samples)
        default:
            throw SinkScenarioError("\(kind) is not a latency kind; use fixed, uniform, normal, lognormal or empirical")
        }
    }
}
