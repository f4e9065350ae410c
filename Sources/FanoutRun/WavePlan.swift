import FanoutNotation
import FanoutReport
import FanoutResults
import FanoutScenarioTerms
import Foundation

/// The planner's campaign question (issue #63): the return wave a fan-out sets off at the
/// provider's backend, whether the backend holds it, and the shortest fan-out that keeps it under
/// the backend's capacity.
///
/// The fan-out delivers its `N` devices evenly over its duration `T`; a share `p` opens after a
/// delay of CDF `F`, each open making `r` requests. The wave at time `t` after the fan-out's start
/// is the deliveries' rate convolved with the delays' density:
///
/// ```
///   w(t) = N·p·r/T · (F(t) − F(t − T))        F(x) = 0 for x < 0
/// ```
/// a moving average of the delays' density over a window `T`. For a delay of one mode (every
/// spread but an empirical one of several) a longer fan-out (a slower pace) flattens it and
/// never raises it, so the shortest fan-out under a capacity `C` is found by bisection on `T`;
/// for an empirical list of several modes the bisection finds a fan-out under `C`, maybe not the
/// shortest. The peak is found on a grid of 20,000 points over the wave's span (the fan-out and
/// the delays' 99.99th percentile) and at the delay's breakpoints, then refined around the best.
/// Media downloads (mutable-content: one a delivery, `N/T` a second during the fan-out) are not
/// in it.
public struct WavePlan: Sendable {
    public struct Question: Sendable, Hashable {
        public var open: Double
        public var openAfter: LatencyDistribution
        public var requestsPerOpen: Int
        /// The backend's requests a second (`--backend-capacity`), if given.
        public var capacity: Double?

        public init(open: Double, openAfter: LatencyDistribution, requestsPerOpen: Int, capacity: Double?) {
            self.open = open
            self.openAfter = openAfter
            self.requestsPerOpen = requestsPerOpen
            self.capacity = capacity
        }
    }

    public let question: Question
    public let devices: UInt64
    /// The fan-out's duration the plan expects, seconds.
    public let fanOutSeconds: Double
    /// Requests the wave makes in all.
    public let requests: Double
    /// Its busiest rate (requests a second) and when (seconds from the fan-out's start).
    public let peak: Double
    public let peakSeconds: Double
    /// With a capacity: the shortest fan-out (seconds) whose wave stays under it.
    public let pacedSeconds: Double?
    /// The fan-out's deadline, seconds, when the plan has one: a pace past it is said so.
    public let deadlineSeconds: Double?

    public init(_ question: Question, devices: UInt64, fanOutSeconds: Double, deadlineSeconds: Double? = nil) {
        self.question = question
        self.devices = devices
        self.fanOutSeconds = fanOutSeconds
        self.deadlineSeconds = deadlineSeconds
        let total = Double(devices) * question.open * Double(question.requestsPerOpen)
        requests = total
        (peak, peakSeconds) = Self.peak(question, total: total, fanOut: fanOutSeconds)
        pacedSeconds = question.capacity.map { capacity in
            Self.pace(question, total: total, fanOut: fanOutSeconds, capacity: capacity)
        }
    }

    /// The wave's rate at `t` seconds for a fan-out of `fanOut` seconds.
    static func rate(_ question: Question, total: Double, fanOut: Double, at t: Double) -> Double {
        guard fanOut > 0 else { return 0 }
        return total / fanOut * (question.openAfter.cdf(t) - question.openAfter.cdf(t - fanOut))
    }

    /// The wave's peak rate and its time.
    static func peak(_ question: Question, total: Double, fanOut: Double) -> (rate: Double, at: Double) {
        guard total > 0 else { return (0, 0) }
        let span = fanOut + question.openAfter.quantile(0.9999)
        let points = 20_000
        let step = span / Double(points)
        var best = (rate: 0.0, at: 0.0)
        for index in 0...points {
            let t = Double(index) * step
            let value = rate(question, total: total, fanOut: fanOut, at: t)
            if value > best.rate { best = (value, t) }
        }
        // A fixed, uniform or empirical delay makes plateaus between its breakpoints, which a
        // grid step wider than the fan-out could step over: each is looked at, and with the window.
        for point in question.openAfter.breakpoints {
            for t in [point, point + fanOut / 2, point + fanOut] {
                let value = rate(question, total: total, fanOut: fanOut, at: t)
                if value > best.rate { best = (value, t) }
            }
        }
        // Refined: the grid's best ± a step, by a finer grid ten times over.
        var (low, high) = (max(0, best.at - step), best.at + step)
        for _ in 0..<10 {
            let fine = (high - low) / 100
            for index in 0...100 {
                let t = low + Double(index) * fine
                let value = rate(question, total: total, fanOut: fanOut, at: t)
                if value > best.rate { best = (value, t) }
            }
            (low, high) = (max(0, best.at - fine), best.at + fine)
        }
        return best
    }

    /// The shortest fan-out (seconds, at least `fanOut`) whose wave peaks at or under `capacity`.
    static func pace(_ question: Question, total: Double, fanOut: Double, capacity: Double) -> Double {
        guard peak(question, total: total, fanOut: fanOut).rate > capacity else { return fanOut }
        var low = fanOut
        var high = max(fanOut, 1) * 2
        while peak(question, total: total, fanOut: high).rate > capacity { (low, high) = (high, high * 2) }
        for _ in 0..<40 where (high - low) > 0.001 * high {
            let middle = (low + high) / 2
            if peak(question, total: total, fanOut: middle).rate > capacity { low = middle } else { high = middle }
        }
        return high
    }

    /// Whether the backend holds the wave (`nil` without a capacity).
    public var holds: Bool? { question.capacity.map { peak <= $0 } }

    public var text: String {
        var lines = [
            "return wave: \(grouped(Int(devices))) devices × \(ShareNotation.percent(question.open)) open × \(question.requestsPerOpen) requests = \(grouped(Int(requests.rounded()))) requests; peak \(grouped(Int(peak.rounded())))/s, \(Self.time(peakSeconds)) after the fan-out's start (a fan-out of \(Self.time(fanOutSeconds)))"
        ]
        if let capacity = question.capacity, let pacedSeconds {
            let ratio = peak / capacity
            lines.append(
                peak <= capacity
                    ? "  the backend's \(grouped(Int(capacity.rounded())))/s holds it (its peak is \(ShareNotation.percent(ratio)) of it)"
                    : "  the backend's \(grouped(Int(capacity.rounded())))/s does NOT hold it: the peak is \(String(format: "%.2f", ratio))× its capacity"
            )
            lines.append(
                "  the shortest fan-out that keeps the wave under \(grouped(Int(capacity.rounded())))/s: \(Self.time(pacedSeconds)) (at most \(grouped(Int((Double(devices) / pacedSeconds).rounded()))) devices/s)"
            )
            // Newcomer pass 5: a 20 s pace under a 10 s deadline was printed without a word.
            if let deadlineSeconds, pacedSeconds > deadlineSeconds * (1 + 1e-9) {
                lines.append(
                    "  that is longer than the --deadline of \(Self.time(deadlineSeconds)): the deadline and this backend cannot both hold"
                )
            }
        }
        return lines.joined(separator: "\n")
    }

    /// plan.json's `wave`.
    public var document: PlanDocument.Wave {
        PlanDocument.Wave(
            open: question.open,
            requestsPerOpen: question.requestsPerOpen,
            requests: requests,
            fanOutSeconds: fanOutSeconds,
            peakPerSecond: peak,
            peakSeconds: peakSeconds,
            capacityPerSecond: question.capacity,
            holds: holds,
            pacedFanOutSeconds: pacedSeconds,
            pacedDevicesPerSecond: pacedSeconds.map { Double(devices) / $0 }
        )
    }

    /// `42.0 s`, `12.3 min`, `3.5 h`.
    static func time(_ seconds: Double) -> String {
        switch seconds {
        case ..<120: String(format: "%.1f s", seconds)
        case ..<(2 * 3600): String(format: "%.1f min", seconds / 60)
        default: String(format: "%.1f h", seconds / 3600)
        }
    }
}
