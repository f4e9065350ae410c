import FanoutAPNs
import FanoutRandom
import FanoutTestSupport
import NIOCore
import Testing

@testable import FanoutScenarioTerms
@testable import FanoutSink

/// Latency, stalls and error mixes: seeded, reproducible, and as the options say.
@Suite struct SinkScenarioTests {
    /// A sink with `scenario`, allowing `initialStreams` until its first answer.
    static func harness(_ scenario: SinkScenario, initialStreams: UInt32 = 1) -> SinkHarness {
        var configuration = SinkConfiguration()
        configuration.scenario = scenario
        configuration.idleTimeout = nil  // so that what is due is only what the scenario holds
        configuration.requestTimeout = nil
        configuration.initialMaxConcurrentStreams = initialStreams
        return SinkHarness(configuration)
    }

    static func token(_ index: Int) -> String {
        var random = SeededRandom(seed: UInt64(index))
        return (0..<4).map { _ in String(random.next(), radix: 16).leftPadded(to: 16) }.joined()
    }

    /// A fixed hold is a floor: it goes out at its time to the nanosecond, never sooner, and
    /// coalescing does not move it onto a window.
    @Test func answersWaitForTheirLatency() throws {
        var scenario = SinkScenario()
        scenario.latency = .fixed(.seconds(30))
        var harness = Self.harness(scenario)
        let before = NIODeadline.now()
        #expect(harness.send(SinkHarness.fields()) == nil)
        let after = NIODeadline.now()
        let due = try #require(harness.sink.nextTimedEvent)
        #expect(due >= before + .seconds(30) && due <= after + .seconds(30))
        // Not yet due: nothing goes out, not even a nanosecond early.
        harness.wakeSink(now: before + .seconds(29))
        harness.pump()
        #expect(harness.responses.isEmpty)
        harness.wakeSink(now: due - .nanoseconds(1))
        harness.pump()
        #expect(harness.responses.isEmpty)
        harness.wakeSink(now: due)
        harness.pump()
        #expect(harness.responses[0]?.status == 200)
        #expect(harness.sink.nextTimedEvent == nil)
    }

    @Test func heldAnswersGoOutInDueOrder() {
        var queue = PendingResponses()
        var random = SeededRandom(seed: 3)
        for stream in 0..<5000 as Range<UInt32> {
            queue.push(.init(due: random.next() % 1_000_000, stream: stream, digestHash: 0, reason: -1))
        }
        var last: UInt64 = 0
        var popped = 0
        while let entry = queue.popDue(now: .max) {
            #expect(entry.due >= last)
            last = entry.due
            popped += 1
        }
        #expect(popped == 5000)
        queue.push(.init(due: 10, stream: 1, digestHash: 0, reason: -1))
        #expect(queue.popDue(now: 9) == nil)
        #expect(queue.popDue(now: 10)?.stream == 1)
    }

    /// A hold's window is its share (3%) as a power of two nanoseconds, at most the longest
    /// (4 ms): a 10 ms hold's is 262 µs, an 80 ms one's 2.1 ms, a 30 s one's no longer.
    @Test func theWindowIsAShareOfTheHold() {
        let coalescing = SinkConfiguration().coalescing
        #expect(coalescing.shift(forHold: 10_000_000) == 18)
        #expect(coalescing.shift(forHold: 80_000_000) == 21)
        #expect(coalescing.shift(forHold: 30_000_000_000) == 21)
        #expect(coalescing.shift(forHold: 10_000) == 0)  // 300 ns: not worth waiting for
        #expect(AnswerCoalescing.off.shift(forHold: 80_000_000) == 0)
        // Windows nest: an instant of a long window is an instant of every shorter one.
        let drawn: UInt64 = 5_000_000_123
        let long = AnswerCoalescing.nearest(drawn, shift: 21)
        #expect(long % (1 << 21) == 0 && max(long, drawn) - min(long, drawn) <= 1 << 20)
        #expect(AnswerCoalescing.nearest(long, shift: 18) == long)
    }

    /// A drawn hold moves to its window's nearest instant, half a window either way (the later
    /// at a tie); a floor only ever waits for the next one.
    @Test func aDrawnHoldMovesToItsNearestInstant() {
        #expect(AnswerCoalescing.nearest(1_000, shift: 10) == 1_024)
        #expect(AnswerCoalescing.nearest(1_500, shift: 10) == 1_024)  // 476 sooner, not 548 later
        #expect(AnswerCoalescing.nearest(1_536, shift: 10) == 2_048)  // a tie: the later
        #expect(AnswerCoalescing.nearest(2_048, shift: 10) == 2_048)
        #expect(AnswerCoalescing.nearest(1_500, shift: 0) == 1_500)
        #expect(LatencyDistribution.logNormal(median: .milliseconds(80), sigma: 0.25).hasSpread)
        #expect(LatencyDistribution.uniform(.milliseconds(1), .milliseconds(9)).hasSpread)
        #expect(!LatencyDistribution.fixed(.milliseconds(80)).hasSpread)
        #expect(!LatencyDistribution.uniform(.milliseconds(5), .milliseconds(5)).hasSpread)
        #expect(!LatencyDistribution.normal(mean: .milliseconds(5), deviation: .zero).hasSpread)
    }

    /// A hold drawn from a spread (80 ms or 80.001 ms, empirical) goes out at its window's
    /// nearest instant (2²¹ ns): sometimes before the drawn time, by less than half a window —
    /// unlike a fixed 80 ms, which never moves (`aFixedHoldIsKeptToTheNanosecond`).
    @Test func aDrawnHoldGoesOutAtTheNearestInstantSoonerOrLater() throws {
        var scenario = SinkScenario()
        scenario.latency = .empirical([.milliseconds(80), .microseconds(80_001)])
        let window: UInt64 = 1 << 21
        var sooner = 0
        for _ in 0..<40 {
            var harness = Self.harness(scenario)
            let before = NIODeadline.now().uptimeNanoseconds
            #expect(harness.send(SinkHarness.fields()) == nil)
            let after = NIODeadline.now().uptimeNanoseconds
            let instant = try #require(harness.sink.nextTimedEvent).uptimeNanoseconds
            #expect(instant % window == 0)
            // The drawn time lies in [before + 80 ms, after + 80.001 ms]; the instant is the
            // nearest to it, so within half a window of that range.
            #expect(instant + window / 2 >= before + 80_000_000 && instant <= after + 80_001_000 + window / 2)
            if instant < before + 80_000_000 { sooner += 1 }
            harness.wakeSink(now: .uptimeNanoseconds(instant))
            harness.pump()
            #expect(harness.responses.count == 1)
            if sooner >= 3 { return }
        }
        Issue.record("in 40 tries a drawn hold never went out before its drawn time (\(sooner))")
    }

    /// Two holds drawn moments apart (80 ms or 80.001 ms) move to one instant of their window
    /// (2²¹ ns) and go out in the same wake.
    @Test func holdsDrawnCloseTogetherGoOutInOneWake() throws {
        var scenario = SinkScenario()
        scenario.latency = .empirical([.milliseconds(80), .microseconds(80_001)])
        for _ in 0..<10 {
            var harness = Self.harness(scenario, initialStreams: 10)  // both held at once
            let before = NIODeadline.now().uptimeNanoseconds
            #expect(harness.send(SinkHarness.fields()) == nil)
            #expect(harness.send(SinkHarness.fields()) == nil)
            let after = NIODeadline.now().uptimeNanoseconds
            // Both drawn times lie in [before + 80 ms, after + 80.001 ms]; a half-window boundary
            // may fall inside that range (rarely): then try again.
            let half: UInt64 = 1 << 20
            let first = AnswerCoalescing.nearest(before + 80_000_000, shift: 21)
            guard first == AnswerCoalescing.nearest(after + 80_001_000, shift: 21) else { continue }
            let instant = try #require(harness.sink.nextTimedEvent).uptimeNanoseconds
            #expect(instant == first && instant % (2 * half) == 0)
            harness.wakeSink(now: .uptimeNanoseconds(instant))
            harness.pump()
            #expect(harness.responses.count == 2)
            return
        }
        Issue.record("in ten tries a half-window boundary fell between the two holds every time")
    }

    /// Answers queued for their write are drained in order, all of them, through growth, and
    /// the queue starts empty again after each drain.
    @Test func unwrittenAnswersDrainInOrderThroughGrowth() {
        let queue = UnwrittenAnswers(capacity: 2)
        for round in 0..<3 {
            let count = [1, 700, 5][round]
            for index in 0..<count { queue.append(due: UInt64(round * 1000 + index), transit: UInt64(index % 7)) }
            #expect(queue.count == count)
            var seen: [(UInt64, UInt64)] = []
            queue.drain { seen.append(($0, $1)) }
            #expect(seen.map(\.0) == (0..<count).map { UInt64(round * 1000 + $0) })
            #expect(seen.map(\.1) == (0..<count).map { UInt64($0 % 7) })
            #expect(queue.count == 0)
        }
    }

    @Test func stallWindowsHoldAnswersToTheirEnd() {
        let second: UInt64 = 1_000_000_000
        let start: UInt64 = 5 * second
        let stalled = { (due: UInt64) in
            AnswerScheduler.outsideStalls(due, startedAt: start, every: 10 * second, length: second)
        }
        #expect(stalled(start + 3 * second) == start + 3 * second)  // before the first window
        #expect(stalled(start + 10 * second) == start + 11 * second)  // its first instant
        #expect(stalled(start + 10 * second + second / 2) == start + 11 * second)
        #expect(stalled(start + 11 * second) == start + 11 * second)  // just after
        #expect(stalled(start + 25 * second) == start + 25 * second)
        #expect(stalled(start + 30 * second + 1) == start + 31 * second)
    }

    @Test func errorMixesFollowTheirShareAndTheSeed() {
        func unregistered(seed: UInt64) -> Set<Int> {
            var scenario = SinkScenario()
            scenario.errors = [(.unregistered, 0.03)]
            scenario.seed = seed
            var harness = Self.harness(scenario)
            var hits: Set<Int> = []
            for index in 0..<3000 where harness.send(SinkHarness.fields(token: Self.token(index)))?.status == 410 {
                hits.insert(index)
            }
            return hits
        }
        let first = unregistered(seed: 1)
        // 3% of 3000 is 90; three standard deviations of a binomial are ±28.
        #expect((62...118).contains(first.count))
        #expect(unregistered(seed: 1) == first)  // the same seed, the same tokens
        #expect(unregistered(seed: 2) != first)
    }

    @Test func transientErrorsAreDrawnPerRequest() {
        var scenario = SinkScenario()
        scenario.errors = [(.internalServerError, 0.5)]
        var harness = Self.harness(scenario)
        let statuses = (0..<200).compactMap { _ in harness.send(SinkHarness.fields())?.status }
        // One token, yet both outcomes: a retry can succeed.
        #expect(Set(statuses) == [200, 500])
    }

    @Test func listedTokensAreUnregisteredOrBad() throws {
        var scenario = SinkScenario()
        scenario.unregisteredTokens.insert(Self.token(1).uppercased())
        scenario.badTokens.insert(Self.token(2))
        var harness = Self.harness(scenario)
        let answer = harness.send(SinkHarness.fields(token: Self.token(1)))
        let gone = try #require(answer)
        #expect(gone.status == 410)
        #expect(gone.reason == "Unregistered")
        #expect(gone.timestamp.map { $0 > 1_700_000_000_000 } == true)
        #expect(harness.send(SinkHarness.fields(token: Self.token(2)))?.reason == "BadDeviceToken")
        #expect(harness.send(SinkHarness.fields(token: Self.token(3)))?.status == 200)
    }

    @Test func textFormsParseOrSayWhatIsWrong() throws {
        #expect(try SinkScenario.duration("250us") == .microseconds(250))
        #expect(try SinkScenario.duration("1.5s") == .milliseconds(1500))
        #expect(try LatencyDistribution(parsing: "uniform:1ms-10ms") == .uniform(.milliseconds(1), .milliseconds(10)))
        #expect(
            try LatencyDistribution(parsing: "lognormal:5ms,0.5") == .logNormal(median: .milliseconds(5), sigma: 0.5)
        )
        #expect(try SinkScenario.error("Unregistered:3%").probability == 0.03)
        #expect(try SinkScenario.stall("10s/1s").length == .seconds(1))
        for bad in ["5", "fixed", "uniform:5ms-1ms", "gamma:1ms", "normal:1ms"] {
            #expect(throws: SinkScenarioError.self) { try LatencyDistribution(parsing: bad) }
        }
        #expect(throws: SinkScenarioError.self) { try SinkScenario.error("Unregistred:3%") }
        #expect(throws: SinkScenarioError.self) { try SinkScenario.stall("1s/10s") }
        var scenario = SinkScenario()
        scenario.errors = [(.unregistered, 0.7), (.badDeviceToken, 0.5)]
        #expect(throws: SinkScenarioError.self) { try scenario.validate() }
    }

    /// Values that cannot be represented are refused with the usual error, never trapped on
    /// (each of these once stopped the sink with signal 4).
    @Test(arguments: [
        ("latency", "lognormal:5ms,100"), ("latency", "fixed:1e300s"), ("latency", "normal:1ms,inf s"),
        ("goaway-after-time", "1e30h"), ("stall", "nans/1s"), ("latency", "uniform:0ms-9000h"),
    ])
    func unrepresentableValuesAreRefused(name: String, value: String) {
        var scenario = SinkScenario()
        #expect(throws: SinkScenarioError.self) { try scenario.set(name, value) }
    }
}

extension String {
    func leftPadded(to length: Int) -> String { String(repeating: "0", count: max(0, length - count)) + self }
}

/// A held answer is one cache line: the heap of them is what a sink holding a million answers
/// keeps in memory.
@Test func aHeldAnswerIs64Bytes() {
    #expect(MemoryLayout<PendingResponse>.stride == 64)
}

/// A latency as its option writes it, read back to itself: what a sink's folder shows
/// (`latency fixed:80ms`, where it showed `fixed(0.08 seconds)`, newcomer pass 4).
@Suite struct LatencyNotationTests {
    @Test(arguments: ["fixed:80ms", "uniform:1ms-5ms", "normal:20ms,5ms", "lognormal:7m,1.2", "fixed:250us"])
    func theNotationReadsBackToTheSameDistribution(text: String) throws {
        let latency = try LatencyDistribution(parsing: text)
        #expect(latency.notation == text)
        #expect(try LatencyDistribution(parsing: latency.notation) == latency)
    }
}
