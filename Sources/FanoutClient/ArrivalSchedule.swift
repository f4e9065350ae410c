import FanoutAPNs
import FanoutFiles
import FanoutNotation
import FanoutTokens

/// The open model's arrivals: when each notification is meant to be sent, whatever the server
/// does. A run is a list of stages, each moving the rate linearly from where the last one ended
/// to its target over its duration (k6's ramping arrival rate); a constant rate is one stage
/// that starts and ends at the same rate.
///
/// ```
///   rate ▲        ┌──────────┐
///        │       ╱            ╲          arrivals up to t: N(t) = ∫ rate
///        │      ╱              ╲         notification k is due at N⁻¹(k)
///        │─────╱                ╲
///        └──────────────────────────► t
///         stage 1 │ 2 │    3     │ 4 │
/// ```
public struct ArrivalSchedule: Sendable, Hashable, CustomStringConvertible {
    /// One stage: the rate moves from the previous stage's target (or the start rate) to
    /// `target` per second over `duration`.
    public struct Stage: Sendable, Hashable {
        public var duration: Duration
        public var target: Double

        public init(duration: Duration, target: Double) {
            self.duration = duration
            self.target = target
        }
    }

    public let startRate: Double
    public let stages: [Stage]
    /// Notifications the schedule holds: `nil` for a constant rate with no end (it lasts as
    /// long as the tokens do).
    public let total: UInt64?

    /// Precomputed per stage: where it starts in time (ns) and in arrivals, its rates.
    private let segments: [Segment]
    /// The part of the whole schedule this one is (`sharded(_:)`): its arrival k is arrival
    /// `shard.index − 1 + shard.count · k` of the whole.
    public let shard: TokenShard

    private struct Segment: Hashable {
        var start: Double
        var length: Double
        var arrivalsBefore: Double
        var from: Double
        var to: Double
    }

    /// The highest rate a schedule takes, per second: far beyond any machine (Fanout's sender
    /// does about 2·10⁵ a core), and low enough that a year of it counts exactly.
    public static let highestRate: Double = 1e9

    /// A constant `rate` per second, for `duration` (or until the tokens run out).
    public init(rate: Double, duration: Duration?) throws(ScheduleError) {
        guard rate > 0, rate <= Self.highestRate else {
            throw ScheduleError("a rate must be above 0 and at most \(Int(Self.highestRate)) per second, not \(rate)")
        }
        if let duration {
            try self.init(startRate: rate, stages: [Stage(duration: duration, target: rate)])
        } else {
            self.init(
                startRate: rate,
                stages: [],
                segments: [Segment(start: 0, length: .infinity, arrivalsBefore: 0, from: rate, to: rate)],
                total: nil
            )
        }
    }

    private init(
        startRate: Double,
        stages: [Stage],
        segments: [Segment],
        total: UInt64?,
        shard: TokenShard = .all
    ) {
        self.startRate = startRate
        self.stages = stages
        self.segments = segments
        self.total = total
        self.shard = shard
    }

    /// Shard i of N of this schedule: the arrivals k ≡ i − 1 (mod N), at the times the whole
    /// schedule gives them. N machines running shards 1…N from one start send exactly the
    /// whole schedule between them, each arrival once, so their merged latencies mean what a
    /// single generator's mean.
    ///
    /// ```
    ///  whole   0  1  2  3  4  5  6  7  8 …      (N = 3)
    ///  2/3        0        1        2    …      its arrival k is arrival 1 + 3k of the whole
    /// ```
    public func sharded(_ part: TokenShard) -> ArrivalSchedule {
        precondition(shard == .all, "a schedule is sharded once")
        guard part != .all else { return self }
        let phase = UInt64(part.index - 1)
        let stride = UInt64(part.count)
        return ArrivalSchedule(
            startRate: startRate,
            stages: stages,
            segments: segments,
            total: total.map { $0 > phase ? ($0 - phase + stride - 1) / stride : 0 },
            shard: part
        )
    }

    /// This schedule with every rate times `factor` (above 0, at most 1): one service's part of
    /// a campaign's arrivals (`fanout run --fleet` with the open model). Two parts whose factors
    /// add up to one carry the whole's arrivals between them, second by second, each part's
    /// evenly spread as the whole's are.
    ///
    /// ```
    ///   whole  4,000/s ──────────►   apns ×0.55  2,200/s ─────►
    ///                                fcm  ×0.45  1,800/s ─────►
    /// ```
    public func scaled(by factor: Double) throws(ScheduleError) -> ArrivalSchedule {
        precondition(shard == .all, "a sharded schedule is not scaled")
        guard factor > 0, factor <= 1 else {
            throw ScheduleError("a schedule's part is above 0 and at most 1, not \(factor)")
        }
        guard !stages.isEmpty else { return try ArrivalSchedule(rate: startRate * factor, duration: nil) }
        return try ArrivalSchedule(
            startRate: startRate * factor,
            stages: stages.map { Stage(duration: $0.duration, target: $0.target * factor) }
        )
    }

    /// This schedule in a time `share` as long, every rate kept: a scaled rehearsal's fan-out
    /// (`fanout run --sample`; `CampaignSample`), `share` of the arrivals over `share` of the
    /// time. A constant rate without an end stays one.
    ///
    /// ```
    ///   campaign  4,000/s for 100 s ──────────────►   share 1%  4,000/s for 1 s ─►
    /// ```
    public func compressed(to share: Double) throws(ScheduleError) -> ArrivalSchedule {
        precondition(shard == .all, "a sharded schedule is not compressed")
        guard share > 0, share <= 1 else {
            throw ScheduleError("a schedule's time is compressed by a share above 0 and at most 1, not \(share)")
        }
        guard !stages.isEmpty else { return self }
        return try ArrivalSchedule(
            startRate: startRate,
            stages: stages.map {
                Stage(
                    duration: .nanoseconds(Int64((Double($0.duration.wholeNanoseconds) * share).rounded())),
                    target: $0.target
                )
            }
        )
    }

    /// Ramps: from `startRate`, through each stage in turn.
    public init(startRate: Double, stages: [Stage]) throws(ScheduleError) {
        guard startRate >= 0, startRate <= Self.highestRate else {
            throw ScheduleError(
                "the start rate must be from 0 to \(Int(Self.highestRate)) per second, not \(startRate)"
            )
        }
        guard !stages.isEmpty else { throw ScheduleError("a ramp needs at least one stage") }
        var segments: [Segment] = []
        var time = 0.0
        var arrivals = 0.0
        var from = startRate
        for (index, stage) in stages.enumerated() {
            guard stage.target >= 0, stage.target <= Self.highestRate else {
                throw ScheduleError(
                    "stage \(index + 1): the target rate must be from 0 to \(Int(Self.highestRate)), not \(stage.target)"
                )
            }
            let length = Double(stage.duration.wholeNanoseconds)
            guard length > 0 else { throw ScheduleError("stage \(index + 1): the duration must be above 0") }
            guard time + length <= Double(DurationNotation.longest.wholeNanoseconds) else {
                throw ScheduleError("the stages last more than a year")
            }
            segments.append(
                Segment(start: time, length: length, arrivalsBefore: arrivals, from: from, to: stage.target)
            )
            time += length
            arrivals += (from + stage.target) / 2 * length / 1e9
            from = stage.target
        }
        // A part of a schedule (`scaled(by:)`) may hold its one arrival a rounding error short.
        guard arrivals + 1e-6 >= 1 else {
            throw ScheduleError("the stages hold no whole arrival (every rate 0, or too low for one)")
        }
        // An arrival lands at N(t) = k; a rounding error must not drop the last whole one.
        self.init(
            startRate: startRate,
            stages: stages,
            segments: segments,
            total: UInt64((arrivals + 1e-6).rounded(.down))
        )
    }

    /// How long the schedule lasts, if it ends.
    public var duration: Duration? {
        guard let last = segments.last, last.length.isFinite else { return nil }
        return .nanoseconds(Int64(last.start + last.length))
    }

    /// When notification `k` (from 0) is due, in nanoseconds from the start; `nil` past the end.
    public func offset(of k: UInt64) -> UInt64? {
        if let total, k >= total { return nil }
        let arrival = Double(UInt64(shard.index - 1) &+ UInt64(shard.count) &* k)
        var low = 0
        var high = segments.count - 1
        while low < high {
            let middle = (low + high + 1) / 2
            if segments[middle].arrivalsBefore <= arrival { low = middle } else { high = middle - 1 }
        }
        // The last stage starting at or before this arrival: one at rate 0 holds none, so the
        // search passes over it to the next.
        let segment = segments[low]
        let n = arrival - segment.arrivalsBefore
        // Arrivals into the stage after t ns: n(t) = from·t + (to − from)·t²/(2·length), per ns.
        let from = segment.from / 1e9
        let slope = (segment.to - segment.from) / 1e9 / segment.length
        let t: Double
        if abs(slope) < 1e-30 {
            t = from > 0 ? n / from : 0
        } else {
            let discriminant = max(0, from * from + 2 * slope * n)
            t = (discriminant.squareRoot() - from) / slope
        }
        return UInt64(max(0, (segment.start + min(t, segment.length)).rounded()))
    }

    public var description: String {
        shard == .all ? whole : "shard \(shard) of \(whole)"
    }

    /// The whole schedule's description.
    private var whole: String {
        if stages.isEmpty { return "\(Self.format(startRate))/s" }
        if stages.count == 1, stages[0].target == startRate {
            return "\(Self.format(startRate))/s for \(stages[0].duration)"
        }
        let steps = stages.map { "\($0.duration):\(Self.format($0.target))/s" }.joined(separator: ", ")
        return "from \(Self.format(startRate))/s: \(steps)"
    }

    static func format(_ rate: Double) -> String {
        rate == rate.rounded() ? String(Int(rate)) : String(rate)
    }
}

public struct ScheduleError: Error, Sendable, CustomStringConvertible {
    public var description: String
    init(_ description: String) { self.description = description }
}

extension ArrivalSchedule {
    /// The schedule the options ask for: `--rate R` alone runs at R until the tokens run out,
    /// with `--duration D` for D; `--stage D:R` (repeated) ramps from `--rate` (or 0) to each
    /// stage's R over its D. `nil` (no rate, no stage) is the closed model.
    public static func parse(
        rate: EventRate?,
        duration: Duration?,
        stages: [String]
    ) throws(ScheduleError) -> ArrivalSchedule? {
        var start: Double?
        if let rate {
            guard rate.count > 0 else {
                throw ScheduleError("--rate: \(rate) is not a rate above 0; \(EventRate.hint)")
            }
            start = try perSecond(rate, what: "--rate")
        }
        guard !stages.isEmpty else {
            guard let start else { return nil }
            if let duration, duration <= .zero {
                throw ScheduleError("--duration: \(DurationNotation.format(duration)) is not a duration above 0")
            }
            return try ArrivalSchedule(rate: start, duration: duration)
        }
        if duration != nil {
            throw ScheduleError("--duration and --stage do not go together: the stages' durations make the run's")
        }
        var parsed: [Stage] = []
        for (index, text) in stages.enumerated() {
            let parts = text.split(separator: ":", maxSplits: 1)
            guard parts.count == 2 else {
                throw ScheduleError("--stage \(text): a stage is DURATION:RATE, like 30s:5000/s")
            }
            let what = "--stage \(index + 1) (\(text))"
            parsed.append(
                Stage(
                    duration: try parseDuration(parts[0], what: what),
                    target: try perSecond(String(parts[1]), what: what, allowingZero: true)
                )
            )
        }
        return try ArrivalSchedule(startRate: start ?? 0, stages: parsed)
    }

    /// `N` or `N/WINDOW` (`5000`, `5000/s`, `300/1m`: `EventRate`) as events per second.
    public static func perSecond(
        _ text: String,
        what: String,
        allowingZero: Bool = false
    ) throws(ScheduleError) -> Double {
        guard let rate = EventRate(parsing: text), rate.count > 0 || allowingZero else {
            throw ScheduleError("\(what): \(text) is not a rate; \(EventRate.hint)")
        }
        return try perSecond(rate, what: what)
    }

    /// `rate` per second, checked against the highest rate.
    public static func perSecond(_ rate: EventRate, what: String) throws(ScheduleError) -> Double {
        guard rate.perSecond <= highestRate else {
            throw ScheduleError("\(what): \(rate) is above the highest rate, \(Int(highestRate)) per second")
        }
        return rate.perSecond
    }

    static func parseDuration(_ text: some StringProtocol, what: String) throws(ScheduleError) -> Duration {
        guard let duration = DurationNotation.parse(text), duration > .zero else {
            throw ScheduleError(
                "\(what): \(TextLines.quoted(text)) is not a duration above 0; \(DurationNotation.hint)"
            )
        }
        return duration
    }
}
