/// The search for the highest offered rate at which an endpoint keeps its objectives
/// (`fanout search`), as a state machine: it says which rate to measure next, is told how that
/// step went, and ends with the answer. It runs nothing itself.
///
/// ```
///  explore   from, 2·from, 4·from … (capped at `to`) until a step fails;
///            when the first step fails: from/2, from/4 … until one passes (or `floor`)
///  bisect    between the highest rate that passed (lo) and the lowest that did not (hi),
///            at (lo + hi) / 2, until (hi − lo) / lo ≤ precision
///  confirm   lo once more: a pass ends the search with lo; a failure makes lo the new hi,
///            the highest pass below it the new lo, and the bisection goes on
/// ```
///
/// A step the generator could not offer (it fell behind its own schedule) says nothing about
/// the endpoint: it bounds the search from above like a failure, but when the search ends
/// against it the answer is the generator's limit, never the endpoint's. `maxSteps` bounds the
/// whole search; running out of them ends it with the bracket measured so far.
public struct RateSearch: Sendable {
    /// Where to look, how closely, and for how many steps at most.
    public struct Bounds: Sendable, Hashable {
        /// The first rate tried, per second.
        public var from: Double
        /// The highest rate tried, per second.
        public var to: Double
        /// The bisection stops when (hi − lo) / lo is at most this (0.05: 5%).
        public var precision: Double
        public var maxSteps: Int
        /// Below this rate a failing endpoint is reported as keeping the objectives at no rate.
        public var floor: Double

        public init(from: Double = 1000, to: Double = 1_000_000, precision: Double = 0.05, maxSteps: Int = 30) {
            self.from = from
            self.to = to
            self.precision = precision
            self.maxSteps = maxSteps
            floor = max(1, from / 1024)
        }
    }

    /// How a step went.
    public enum Outcome: String, Sendable, Hashable {
        /// The run was valid and every objective held.
        case passed
        /// An objective did not hold (or the endpoint could not keep up).
        case failed
        /// The generator could not offer the rate: the step measured nothing of the endpoint.
        case generatorLimit = "generator-limit"
    }

    /// Why a step is measured.
    public enum Purpose: String, Sendable, Hashable {
        case explore, bisect, confirm
    }

    public enum Action: Sendable, Hashable {
        /// Measure this rate (per second) next.
        case measure(rate: Double, purpose: Purpose)
        case finished(Answer)
    }

    public enum Answer: Sendable, Hashable {
        /// `rate` passed twice (the second time to confirm it); `ceiling`, within the precision
        /// above it, failed.
        case found(rate: Double, ceiling: Double)
        /// `to` itself passed twice: the endpoint keeps the objectives at least that far.
        case atLeast(rate: Double)
        /// Every rate the generator could offer passed (the highest, confirmed, is `passed`);
        /// at `limit` the generator fell behind. A faster generator (more threads, more
        /// machines) is needed to find the endpoint's limit.
        case generatorLimit(passed: Double?, limit: Double)
        /// Even `lowest` failed.
        case noRate(lowest: Double)
        /// `maxSteps` ran out first: the bracket measured so far.
        case stepsExhausted(passed: Double?, failed: Double?)

        /// The rate the search answers with, when it found one.
        public var rate: Double? {
            switch self {
            case .found(let rate, _), .atLeast(let rate): rate
            case .generatorLimit(let passed, _): passed
            case .noRate: nil
            case .stepsExhausted(let passed, _): passed
            }
        }
    }

    public let bounds: Bounds
    /// Steps measured so far.
    public private(set) var steps = 0
    /// Rates that passed, and the lowest that failed and that the generator could not offer.
    private var passes: [Double] = []
    private var lowestFailure: Double?
    private var lowestGeneratorLimit: Double?
    /// The step being measured.
    private var current: (rate: Double, purpose: Purpose)?

    public init(_ bounds: Bounds) {
        var bounds = bounds
        bounds.to = max(bounds.to, bounds.from)
        bounds.precision = max(bounds.precision, 1e-6)
        bounds.maxSteps = max(bounds.maxSteps, 1)
        self.bounds = bounds
    }

    /// The first step.
    public mutating func start() -> Action {
        measure(bounds.from, .explore)
    }

    /// The step asked for last went `outcome`; what to do next.
    public mutating func finished(_ outcome: Outcome) -> Action {
        guard let (rate, purpose) = current else { preconditionFailure("finished(_:) before start()") }
        current = nil
        steps += 1
        switch outcome {
        case .passed: passes.append(rate)
        case .failed: lowestFailure = min(rate, lowestFailure ?? rate)
        case .generatorLimit: lowestGeneratorLimit = min(rate, lowestGeneratorLimit ?? rate)
        }
        if purpose == .confirm && outcome == .passed { return .finished(answer(confirmed: rate)) }
        if purpose == .confirm {
            // What passed at or above the failed confirmation is not to be trusted.
            passes.removeAll { $0 >= rate }
        }
        guard steps < bounds.maxSteps else {
            return .finished(.stepsExhausted(passed: highestPass, failed: lowestFailure ?? lowestGeneratorLimit))
        }
        return next()
    }

    /// The highest rate that passed below every failure.
    private var highestPass: Double? {
        passes.filter { $0 < (ceiling ?? .infinity) }.max()
    }

    /// The lowest rate that did not pass, for either reason.
    private var ceiling: Double? {
        [lowestFailure, lowestGeneratorLimit].compactMap { $0 }.min()
    }

    private mutating func next() -> Action {
        guard let ceiling else {
            // Everything so far passed: double, up to `to`, which is confirmed once reached.
            let highest = highestPass ?? bounds.from
            if highest >= bounds.to { return measure(bounds.to, .confirm) }
            return measure(min(highest * 2, bounds.to), .explore)
        }
        guard let low = highestPass else {
            // Nothing passed yet: halve below the lowest failure.
            let lower = ceiling / 2
            if lower < bounds.floor {
                if lowestFailure == nil { return .finished(.generatorLimit(passed: nil, limit: ceiling)) }
                return .finished(.noRate(lowest: ceiling))
            }
            return measure(lower, .explore)
        }
        if (ceiling - low) / low <= bounds.precision { return measure(low, .confirm) }
        return measure((low + ceiling) / 2, .bisect)
    }

    private func answer(confirmed rate: Double) -> Answer {
        guard let ceiling else { return .atLeast(rate: rate) }
        if let lowestFailure, lowestFailure == ceiling { return .found(rate: rate, ceiling: lowestFailure) }
        // The generator fell behind between the confirmed rate and an endpoint failure within
        // twice the precision above it: the endpoint's limit is bracketed, one step short of the
        // precision, and that is the answer (newcomer pass 5: 19,000 passed, 19,500 fell behind,
        // 20,000 failed the objectives, and the answer blamed the generator alone).
        if let lowestFailure, (lowestFailure - rate) / rate <= 2 * bounds.precision {
            return .found(rate: rate, ceiling: lowestFailure)
        }
        return .generatorLimit(passed: rate, limit: ceiling)
    }

    private mutating func measure(_ rate: Double, _ purpose: Purpose) -> Action {
        current = (rate, purpose)
        return .measure(rate: rate, purpose: purpose)
    }
}
