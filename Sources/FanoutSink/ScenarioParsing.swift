import FanoutAPNs
import FanoutSettings
import Foundation

/// The textual forms of scenario settings, shared by command-line options and scenario files.
extension SinkScenario {
    /// A duration like `250us`, `5ms`, `1.5s`, `2m` or `1h`.
    public static func duration(_ text: some StringProtocol) throws(SinkScenarioError) -> Duration {
        guard let duration = DurationNotation.parse(text) else {
            throw SinkScenarioError(
                "\(TextLines.quoted(text.trimmingCharacters(in: .whitespaces))) is not a duration; \(DurationNotation.hint)"
            )
        }
        return duration
    }

    /// `EVERY/LENGTH`, e.g. `10s/1s`: the sink freezes for LENGTH every EVERY.
    public static func stall(_ text: String) throws(SinkScenarioError) -> (every: Duration, length: Duration) {
        let parts = text.split(separator: "/")
        guard parts.count == 2 else { throw SinkScenarioError("a stall is EVERY/LENGTH, like 10s/1s; got \(text)") }
        let every = try duration(parts[0])
        let length = try duration(parts[1])
        guard length < every else {
            throw SinkScenarioError("a stall of \(parts[1]) must be shorter than its period \(parts[0])")
        }
        return (every, length)
    }

    /// `N` or `N:REASON`, e.g. `1000:Shutdown`: a GOAWAY after N requests.
    public static func goAway(_ text: String) throws(SinkScenarioError) -> (requests: Int, reason: APNsReason) {
        let parts = text.split(separator: ":")
        guard (1...2).contains(parts.count), let requests = Int(parts[0]), requests > 0 else {
            throw SinkScenarioError("a GOAWAY after requests is N or N:REASON, like 1000:Shutdown; got \(text)")
        }
        guard parts.count == 2 else { return (requests, .shutdown) }
        guard let reason = APNsReason(rawValue: String(parts[1])) else {
            throw SinkScenarioError("\(parts[1]) is not an APNs reason")
        }
        return (requests, reason)
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

    /// A per-token rate (`rate`) whose limit the limiter can count (`TokenRateLimiter`).
    public static func tokenRate(_ text: String) throws(SinkScenarioError) -> Rate {
        let rate = try Self.rate(text)
        guard rate.limit <= TokenRateLimiter.maximumLimit else {
            throw SinkScenarioError("token-rate allows at most \(TokenRateLimiter.maximumLimit) per window")
        }
        return rate
    }

    /// A share from 0 to 1 (`ShareNotation`), e.g. `0.5%` or `0.005`.
    public static func share(_ text: some StringProtocol) throws(SinkScenarioError) -> Double {
        guard let share = ShareNotation.parse(text), (0...1).contains(share) else {
            throw SinkScenarioError("a share is from 0% to 100% (or 0 to 1), like 0.5%; got \(text)")
        }
        return share
    }

    /// `REASON:SHARE`, e.g. `Unregistered:3%` or `InternalServerError:0.001`.
    public static func error(_ text: String) throws(SinkScenarioError) -> (reason: APNsReason, probability: Double) {
        let parts = text.split(separator: ":")
        guard parts.count == 2, let share = ShareNotation.parse(parts[1]) else {
            throw SinkScenarioError("an error is REASON:SHARE, like Unregistered:3%; got \(text)")
        }
        guard let reason = APNsReason(rawValue: String(parts[0])) else {
            let known = APNsReason.allCases.map(\.rawValue).joined(separator: ", ")
            throw SinkScenarioError("\(parts[0]) is not an APNs reason; the reasons are \(known)")
        }
        return (reason, share)
    }
}

extension LatencyDistribution {
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
            self = .fixed(try SinkScenario.duration(values))
        case "uniform":
            let bounds = values.split(separator: "-")
            guard bounds.count == 2 else { throw SinkScenarioError("uniform latency is uniform:LOW-HIGH; got \(text)") }
            let low = try SinkScenario.duration(bounds[0])
            let high = try SinkScenario.duration(bounds[1])
            guard low <= high else { throw SinkScenarioError("uniform latency needs LOW ≤ HIGH; got \(text)") }
            self = .uniform(low, high)
        case "normal":
            let parameters = values.split(separator: ",")
            guard parameters.count == 2 else {
                throw SinkScenarioError("normal latency is normal:MEAN,DEVIATION; got \(text)")
            }
            self = .normal(
                mean: try SinkScenario.duration(parameters[0]),
                deviation: try SinkScenario.duration(parameters[1])
            )
        case "lognormal":
            let parameters = values.split(separator: ",")
            guard parameters.count == 2, let sigma = Double(parameters[1]), sigma >= 0, sigma <= Self.largestSigma
            else {
                throw SinkScenarioError(
                    "log-normal latency is lognormal:MEDIAN,SIGMA with 0 ≤ σ ≤ \(Int(Self.largestSigma)); got \(text)"
                )
            }
            self = .logNormal(median: try SinkScenario.duration(parameters[0]), sigma: sigma)
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
                    samples.append(try SinkScenario.duration(sample))
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
