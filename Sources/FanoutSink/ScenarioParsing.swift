import FanoutAPNs
import FanoutNotation
import FanoutScenarioTerms
import Foundation

/// The textual forms of scenario settings, shared by command-line options and scenario files.
extension SinkScenario {
    /// A duration like `250us`, `5ms`, `1.5s`, `2m` or `1h`.
    public static func duration(_ text: some StringProtocol) throws(SinkScenarioError) -> Duration {
        try ScenarioNotation.duration(text)
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

    /// `N` or `N:REASON`, e.g. `1000:Shutdown`: a GOAWAY after N requests; the reason `nil`
    /// when not written (the sink's is then Shutdown), so that FCM's sink, whose GOAWAY has no
    /// APNs reason, can refuse one written out.
    public static func goAway(_ text: String) throws(SinkScenarioError) -> (requests: Int, reason: APNsReason?) {
        let parts = text.split(separator: ":")
        guard (1...2).contains(parts.count), let requests = Int(parts[0]), requests > 0 else {
            throw SinkScenarioError("a GOAWAY after requests is N or N:REASON, like 1000:Shutdown; got \(text)")
        }
        guard parts.count == 2 else { return (requests, nil) }
        guard let reason = APNsReason(rawValue: String(parts[1])) else {
            throw SinkScenarioError("\(parts[1]) is not an APNs reason")
        }
        return (requests, reason)
    }

    /// `LIMIT/WINDOW` (`EventRate`), e.g. `100/s`, `10/1m` or `5000/1.5s`; a bare unit means
    /// one of it, and a bare `LIMIT` a second. The limit counts requests: a whole number ≥ 1.
    public static func rate(_ text: String) throws(SinkScenarioError) -> Rate {
        try ScenarioNotation.rate(text)
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
        try ScenarioNotation.share(text)
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
