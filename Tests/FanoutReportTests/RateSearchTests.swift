import FanoutReport
import Testing

/// The search's state machine against simulated endpoints whose true limits are known: it must
/// find them within its precision, confirm before answering, and never blame the endpoint for
/// what the generator could not offer.
@Suite struct RateSearchTests {
    /// An endpoint that keeps the objectives up to `capacity`, and a generator that cannot
    /// offer `generator` or more.
    struct Simulated {
        var capacity: Double
        var generator = Double.infinity

        func outcome(_ rate: Double) -> RateSearch.Outcome {
            if rate >= generator { return .generatorLimit }
            return rate <= capacity ? .passed : .failed
        }
    }

    /// Runs a search to its end; the steps it measured, in order.
    static func search(
        _ bounds: RateSearch.Bounds,
        outcome: (Double, RateSearch.Purpose, Int) -> RateSearch.Outcome
    ) -> (answer: RateSearch.Answer, steps: [(rate: Double, purpose: RateSearch.Purpose)]) {
        var search = RateSearch(bounds)
        var steps: [(Double, RateSearch.Purpose)] = []
        var action = search.start()
        while case .measure(let rate, let purpose) = action {
            steps.append((rate, purpose))
            action = search.finished(outcome(rate, purpose, steps.count))
            if steps.count > 1000 { break }
        }
        guard case .finished(let answer) = action else {
            Issue.record("no answer")
            return (.noRate(lowest: 0), steps)
        }
        return (answer, steps)
    }

    @Test(arguments: [20_000.0, 4_000, 1_000, 1_499, 777_777])
    func findsTheCapacityWithinItsPrecisionAndConfirmsIt(capacity: Double) throws {
        let endpoint = Simulated(capacity: capacity)
        let (answer, steps) = Self.search(.init(from: 1000, to: 1_000_000, precision: 0.05)) { rate, _, _ in
            endpoint.outcome(rate)
        }
        guard case .found(let rate, let ceiling) = answer else {
            Issue.record("\(answer)")
            return
        }
        #expect(rate <= capacity && ceiling > capacity)
        #expect((ceiling - rate) / rate <= 0.05)
        #expect(capacity / rate - 1 <= 0.05 + 1e-9, "answered \(rate) for \(capacity)")
        // It doubles from --from (up to --to), and its last step measures the answer again.
        #expect(steps.first?.rate == 1000)
        #expect(
            steps.prefix { $0.purpose == .explore }.map(\.rate).enumerated().allSatisfy {
                $1 == min(1000 * pow2($0), 1_000_000)
            }
        )
        #expect(steps.last?.purpose == .confirm && steps.last?.rate == rate)
        #expect(steps.filter { $0.purpose == .confirm }.count == 1)
    }

    @Test func aFirstStepThatFailsHalvesUntilOnePasses() {
        let (answer, steps) = Self.search(.init(from: 1000, precision: 0.05)) { rate, _, _ in
            Simulated(capacity: 300).outcome(rate)
        }
        #expect(Array(steps.prefix(3).map(\.rate)) == [1000, 500, 250])
        guard case .found(let rate, _) = answer else {
            Issue.record("\(answer)")
            return
        }
        #expect(rate <= 300 && 300 / rate - 1 <= 0.05)
    }

    @Test func theHighestRateSearchedPassingTwiceIsALowerBound() {
        let (answer, steps) = Self.search(.init(from: 1000, to: 5000)) { rate, _, _ in
            Simulated(capacity: 1e9).outcome(rate)
        }
        #expect(answer == .atLeast(rate: 5000))
        #expect(steps.map(\.rate) == [1000, 2000, 4000, 5000, 5000])
        #expect(steps.last?.purpose == .confirm)
    }

    @Test func anEndpointThatKeepsNoRateSaysSoAtTheFloor() {
        let bounds = RateSearch.Bounds(from: 1000)
        let (answer, steps) = Self.search(bounds) { _, _, _ in .failed }
        guard case .noRate(let lowest) = answer else {
            Issue.record("\(answer)")
            return
        }
        #expect(lowest >= bounds.floor && lowest / 2 < bounds.floor)
        #expect(steps.allSatisfy { $0.purpose == .explore })
    }

    /// The generator tops out at 8,000/s, the endpoint would keep 20,000/s: the answer is the
    /// generator's limit, with the highest rate it could offer confirmed, never a `.found`.
    @Test func aGeneratorLimitIsNeverTheEndpointsAnswer() {
        let endpoint = Simulated(capacity: 20_000, generator: 8_000)
        let (answer, steps) = Self.search(.init(from: 1000, precision: 0.05)) { rate, _, _ in endpoint.outcome(rate) }
        guard case .generatorLimit(let passed, let limit) = answer, let passed else {
            Issue.record("\(answer)")
            return
        }
        #expect(limit >= 8_000 && passed < 8_000 && (limit - passed) / passed <= 0.05)
        #expect(steps.last?.purpose == .confirm)
    }

    /// With the endpoint failing first (5,000/s) below the generator's limit (12,000/s), the
    /// endpoint's limit is the answer.
    @Test func anEndpointFailureBelowTheGeneratorsLimitIsTheAnswer() {
        let endpoint = Simulated(capacity: 5_000, generator: 12_000)
        let (answer, _) = Self.search(.init(from: 1000)) { rate, _, _ in endpoint.outcome(rate) }
        guard case .found(let rate, _) = answer else {
            Issue.record("\(answer)")
            return
        }
        #expect(rate <= 5_000 && 5_000 / rate - 1 <= 0.05)
    }

    /// The generator falls behind once between a pass and the endpoint's failure (newcomer
    /// pass 5: 19,000/s passed, 19,500/s fell behind, 20,000/s failed the objectives): the
    /// endpoint's limit is bracketed, and that is the answer, not the generator's limit.
    @Test func aGeneratorStumbleBelowAnEndpointFailureLeavesTheEndpointsAnswer() {
        let (answer, _) = Self.search(.init(from: 1000, precision: 0.05)) { rate, _, _ in
            if rate >= 20_000 { return .failed }
            if rate >= 19_250 { return .generatorLimit }
            return .passed
        }
        guard case .found(let rate, let ceiling) = answer else {
            Issue.record("\(answer)")
            return
        }
        #expect(rate < 19_250 && ceiling == 20_000, "\(answer)")
        // Far below the failure (16,000/s, measured first), the generator's limit stays the answer.
        let (far, _) = Self.search(.init(from: 16_000, precision: 0.05)) { rate, _, _ in
            if rate >= 16_000 { return .failed }
            if rate >= 8_000 { return .generatorLimit }
            return .passed
        }
        guard case .generatorLimit(let passed?, 8_000) = far else {
            Issue.record("\(far)")
            return
        }
        #expect(passed < 8_000 && passed > 7_000)
    }

    /// A confirmation that fails (a noisy endpoint) is not the answer: the search goes on below
    /// it and confirms again.
    @Test func aFailedConfirmationSendsTheSearchLower() {
        var failedConfirmations = 0
        let (answer, steps) = Self.search(.init(from: 1000, precision: 0.05)) { rate, purpose, _ in
            if purpose == .confirm && failedConfirmations == 0 {
                failedConfirmations += 1
                return .failed
            }
            return Simulated(capacity: 20_000).outcome(rate)
        }
        let confirmations = steps.filter { $0.purpose == .confirm }
        #expect(confirmations.count == 2)
        guard case .found(let rate, let ceiling) = answer else {
            Issue.record("\(answer)")
            return
        }
        #expect(rate < confirmations[0].rate && ceiling <= confirmations[0].rate)
        #expect(rate == confirmations[1].rate)
    }

    @Test func maxStepsBoundsTheSearch() {
        let (answer, steps) = Self.search(.init(from: 1000, precision: 0.001, maxSteps: 7)) { rate, _, _ in
            Simulated(capacity: 20_000).outcome(rate)
        }
        #expect(steps.count == 7)
        guard case .stepsExhausted(let passed, let failed) = answer else {
            Issue.record("\(answer)")
            return
        }
        #expect(passed.map { $0 <= 20_000 } == true && failed.map { $0 > 20_000 } == true)
    }

    private func pow2(_ exponent: Int) -> Double { Double(1 << exponent) }
}
