import FanoutResults
import FanoutTestSupport
import Foundation
import Testing

@testable import FanoutReport

/// The gate's expression language: every form it reads, what it rejects, and how it judges.
struct ThresholdTests {
    static func run(
        _ metrics: [RunMetric: Double],
        invalid: [InvalidReason] = [],
        directory: String = "run"
    ) -> RunRecord {
        var all = metrics
        all[.errors] = (metrics[.rejected] ?? 0) + (metrics[.failed] ?? 0)
        let sent = metrics[.sent] ?? 0
        return RunRecord(
            directory: directory,
            metrics: all,
            errorShare: sent > 0 ? all[.errors]! / sent : 0,
            invalidReasons: invalid
        )
    }

    static let current = RunSet(
        directory: "current",
        runs: [run([.p99: 22, .p50: 3, .throughput: 150_000, .sent: 1_000_000, .rejected: 500, .failed: 0, .lag: 4])]
    )
    static let baseline = RunSet(
        directory: "baseline",
        runs: [run([.p99: 20, .p50: 2, .throughput: 160_000, .sent: 1_000_000, .rejected: 0, .failed: 0])]
    )

    @Test(
        arguments: [
            ("p99 < 25ms", true, 25.0), ("p99<25", true, 25), ("p99 < 0.02s", false, 20), ("p99 <= 22000us", true, 22),
            ("p50 >= 3ms", true, 3), ("throughput > 100000/s", true, 100_000), ("throughput > 200_000", false, 200_000),
            ("errors < 0.1%", true, 0.001), ("errors < 0.01%", false, 0.0001), ("errors == 500", true, 500),
            ("failed == 0", true, 0), ("rejected != 0", true, 0), ("sent >= 1,000,000", true, 1_000_000),
            ("lag < 100ms", true, 100), ("p99 <= baseline + 10%", true, 22), ("p99 < baseline + 10%", false, 22),
            ("p99 < baseline + 5%", false, 21),
            ("p99 <= baseline + 2ms", true, 22), ("throughput >= baseline - 5%", false, 152_000),
            ("throughput >= baseline - 10%", true, 144_000), ("p50 == baseline", false, 2),
            ("sent == 1e6", true, 1_000_000), ("p99 < 2.5e1ms", true, 25),
        ] as [(String, Bool, Double)]
    )
    func thresholdsReadAndJudge(text: String, passes: Bool, limit: Double) throws {
        let threshold = try Threshold(parsing: text)
        let verdict = threshold.evaluate(Self.current, baseline: Self.baseline)
        #expect(verdict.passed == passes, "\(text): measured \(verdict.measured), limit \(verdict.limit)")
        #expect(abs(verdict.limit - limit) < 1e-9, "\(text): limit \(verdict.limit)")
    }

    @Test(
        arguments: [
            (
                "",
                "a threshold starts with a metric (p50, p90, p99, p99.9, p99.99, max, throughput, errors, failed, rejected, sent, accepted, lag, harness, fanout, unread, violations, violations.permanent-retried, violations.fast-retry, violations.stream-limit, violations.after-goaway, violations.churn, violations.provider-token, violations.apns-id-reused, violations.payload-near-limit, violations.expiration-zero-offline, violations.stale-delivery, violations.background-over-budget, violations.channels-left-open, violations.channels-near-limit, violations.deleted-channel-retried, violations.liveactivity-over-budget, violations.timestamp-backwards, violations.quota-ignored, violations.client-errors, violations.duplicate, violations.access-token, violations.bearer, delivered, delivered.p50, delivered.p90, delivered.p99, delivered.last, discarded.expired, discarded.unregistered, discarded.disabled, forgotten, broadcast.accepted, broadcast.delivered, broadcast.p99, broadcast.last, broadcast.last.p99, broadcast.from_storage, broadcast.storage.p99, broadcast.open, return.offered, return.answered, return.errors, return.p50, return.p99, return.max, return.peak, rejected.REASON, failed.CAUSE, window(10s).p99)",
                .metric
            ),
            (
                "p98 < 5ms",
                "p98 is not a metric; the metrics are p50, p90, p99, p99.9, p99.99, max, throughput, errors, failed, rejected, sent, accepted, lag, harness, fanout, unread, violations, violations.permanent-retried, violations.fast-retry, violations.stream-limit, violations.after-goaway, violations.churn, violations.provider-token, violations.apns-id-reused, violations.payload-near-limit, violations.expiration-zero-offline, violations.stale-delivery, violations.background-over-budget, violations.channels-left-open, violations.channels-near-limit, violations.deleted-channel-retried, violations.liveactivity-over-budget, violations.timestamp-backwards, violations.quota-ignored, violations.client-errors, violations.duplicate, violations.access-token, violations.bearer, delivered, delivered.p50, delivered.p90, delivered.p99, delivered.last, discarded.expired, discarded.unregistered, discarded.disabled, forgotten, broadcast.accepted, broadcast.delivered, broadcast.p99, broadcast.last, broadcast.last.p99, broadcast.from_storage, broadcast.storage.p99, broadcast.open, return.offered, return.answered, return.errors, return.p50, return.p99, return.max, return.peak, rejected.REASON, failed.CAUSE, window(10s).p99",
                .metric
            ),
            ("p99 ~ 5ms", "after p99 comes a comparison: <, <=, >, >=, == or !=", .comparison),
            ("p99 <", "p99 <: the limit is missing, e.g. 25ms or baseline + 10%", .limit),
            ("p99 < fast", "fast is not a number with a unit, like 25ms, 100000/s or 0.1%", .limit),
            ("p99 < 5 parsecs", "parsecs is not a unit of p99 (use us, ms, s or m)", .unit),
            ("throughput > 5ms", "ms is not a unit of throughput (use /s or none)", .unit),
            (
                "p99 < 5%",
                "only errors, rejected.REASON and failed.CAUSE (a share of sent) and the devices' counts (delivered, discarded.expired, discarded.unregistered, discarded.disabled, forgotten: a share of received) take a percentage; p99 does not",
                .unit
            ),
            ("failed < 5/s", "/s is not a unit of failed (use none)", .unit),
            ("p99 < baseline * 2", "after baseline comes + or - and an amount, like baseline + 10%; got * 2", .limit),
            // Issue 61, review: thresholds no run can fail, refused.
            ("errors < 101%", "errors < 101% cannot fail: no share is above 100%", .cannotFail),
            ("errors <= 100%", "errors <= 100% cannot fail: no share is above 100%", .cannotFail),
            (
                "rejected.BadDeviceToken != 150%",
                "rejected.BadDeviceToken != 150% cannot fail: no share is above 100%", .cannotFail
            ),
            ("p99 >= 0", "p99 >= 0 cannot fail: no metric is below 0", .cannotFail),
            ("failed >= 0", "failed >= 0 cannot fail: no metric is below 0", .cannotFail),
            (
                "throughput > baseline - 200%",
                "throughput > baseline - 200% cannot fail: no metric is below 0, and baseline - 200% is below 0",
                .cannotFail
            ),
            (
                "throughput >= baseline - 100%",
                "throughput >= baseline - 100% cannot fail: no metric is below 0, and baseline - 100% is 0",
                .cannotFail
            ),
            // A decimal comma is no thousands separator (issue 61, review: 2,5ms was 25 ms).
            ("p99 < 2,5ms", "2,5ms is not a number with a unit, like 25ms, 100000/s or 0.1%", .limit),
            ("sent == 10,00", "10,00 is not a number with a unit, like 25ms, 100000/s or 0.1%", .limit),
            // Too small for a Double: it read as 0 (issue 61, session 37's pass).
            ("throughput > 1e-400", "1e-400 is too small to be told from 0", .limit),
            ("p99 < 0.5e-330s", "0.5e-330s is too small to be told from 0", .limit),
            // The gate's fuzzer (CI, stop 69): a percentage past Int's range trapped in Int(_:).
            (
                "throughput >= baseline - 58888888888888888888888888888888888888888888888%",
                "throughput >= baseline - 58888888888888888888888888888888888888888888888% cannot fail: no metric is below 0, and baseline - 5.888888888888889e+46% is below 0",
                .cannotFail
            ),
            // Numbers are decimal: Swift's Double reads 0x10 as 16 and inf as infinity.
            ("p99 < 0x10ms", "x10ms is not a unit of p99 (use us, ms, s or m)", .unit),
            ("p99 < 1e400ms", "1e400ms is not a number with a unit, like 25ms, 100000/s or 0.1%", .limit),
        ] as [(String, String, ThresholdError.Kind)]
    )
    func badThresholdsSayWhatIsWrong(text: String, message: String, kind: ThresholdError.Kind) {
        #expect {
            _ = try Threshold(parsing: text)
        } throws: { error in
            "\(error)" == message && (error as? ThresholdError)?.kind == kind
        }
    }

    @Test func aThresholdsFileIsReadLineByLineWithComments() throws {
        let path = NSTemporaryDirectory() + "thresholds-\(UUID().uuidString).txt"
        defer { try? FileManager.default.removeItem(atPath: path) }
        try "# the release gate\np99 < 25ms   # users notice beyond\n\nthroughput > baseline - 5%\n"
            .write(toFile: path, atomically: true, encoding: .utf8)
        #expect(try Threshold.load(file: path).map(\.text) == ["p99 < 25ms", "throughput > baseline - 5%"])
        try "p99 < 25ms\nerrors < lots\n".write(toFile: path, atomically: true, encoding: .utf8)
        #expect {
            _ = try Threshold.load(file: path)
        } throws: { error in
            "\(error)" == "\(path):2: lots is not a number with a unit, like 25ms, 100000/s or 0.1%"
        }
    }

    @Test func repeatsAreGatedOnTheirMedian() {
        let repeats = RunSet(
            directory: "repeats",
            runs: [Self.run([.p99: 30]), Self.run([.p99: 10]), Self.run([.p99: 20])]
        )
        #expect(repeats.median(.p99) == 20)
        #expect(repeats.range(.p99) == 10...30)
        #expect(repeats.noise(.p99) == 0.5)
        #expect(RunSet(directory: "even", runs: [Self.run([.p99: 1]), Self.run([.p99: 4])]).median(.p99) == 2.5)
        #expect(Self.current.noise(.p99) == nil)
    }

    @Test func comparisonsJudgeChangesAgainstTheNoiseBetweenRepeats() {
        let steady = RunSet(
            directory: "baseline",
            runs: [
                Self.run([.throughput: 100, .p99: 20]), Self.run([.throughput: 110, .p99: 22]),
                Self.run([.throughput: 90, .p99: 18]),
            ]
        )
        // Throughput −30% against ±10% noise: worse; p99 +5%: within noise.
        let slower = RunSet(
            directory: "current",
            runs: [
                Self.run([.throughput: 70, .p99: 21]), Self.run([.throughput: 72, .p99: 21]),
                Self.run([.throughput: 68, .p99: 21]),
            ]
        )
        let comparison = RunComparison(baseline: steady, current: slower, metrics: [.throughput, .p99])
        #expect(comparison.rows.map(\.verdict) == [.worse, .withinNoise])
        #expect(comparison.regressed)
        // Faster beyond noise is better, not a regression; one run a side leaves noise unknown.
        let faster = RunSet(
            directory: "current",
            runs: [Self.run([.throughput: 200, .p99: 5]), Self.run([.throughput: 210, .p99: 5])]
        )
        let better = RunComparison(baseline: steady, current: faster, metrics: [.throughput, .p99])
        #expect(better.rows.map(\.verdict) == [.better, .better])
        #expect(!better.regressed)
        // One run a side: the noise is unknown, and the change itself is judged against the
        // minimum effect (said so), not waved through.
        let single = RunComparison(baseline: Self.current, current: Self.baseline, metrics: [.p99])
        #expect(single.rows[0].basis == .change)
        #expect(single.rows[0].interval == nil)
        // p99 22 → 20 ms: −9.1%, beyond 5%.
        #expect(single.rows[0].verdict == .better)
        #expect(textRows(single.text)["p99"]?.last == "better beyond 5% (noise unknown: one run a side)")
        // Counts are counts, times milliseconds, the rate per second (counts were "ms").
        let counts = RunComparison(
            baseline: RunSet(directory: "a", runs: [Self.run([.sent: 1_000_000, .p99: 20, .throughput: 5000])]),
            current: RunSet(directory: "b", runs: [Self.run([.sent: 999_000, .p99: 21, .throughput: 4990])]),
            metrics: [.sent, .p99, .throughput]
        )
        let rows = textRows(counts.text)
        #expect(rows["sent"]?.prefix(3) == ["sent", "1,000,000", "999,000"], "\(counts.text)")
        #expect(rows["p99"]?.prefix(3) == ["p99", "20.00 ms", "21.00 ms"], "\(counts.text)")
        #expect(rows["throughput"]?.prefix(3) == ["throughput", "5,000/s", "4,990/s"], "\(counts.text)")
        // A metric no run measured (a sink's) is said so, not compared as 0 with 0, and a long
        // name keeps its column ("violations.churn0" ran on, newcomer pass, issue 64).
        let sinkOnly = RunComparison(
            baseline: RunSet(directory: "a", runs: [Self.run([.p99: 20])]),
            current: RunSet(directory: "b", runs: [Self.run([.p99: 21])]),
            metrics: [.churn, .p99]
        )
        #expect(!sinkOnly.rows[0].measured && sinkOnly.rows[1].measured)
        // Nor decided on: a sink's 2 against a run's nothing is no regression.
        let half = RunComparison(
            baseline: RunSet(directory: "a", runs: [Self.run([.p99: 20])]),
            current: RunSet(directory: "b", runs: [Self.run([.p99: 20, .churn: 2])]),
            metrics: [.churn]
        )
        #expect(half.rows[0].verdict == .same && half.rows[0].change == nil && !half.regressed)
        let churn = textRows(sinkOnly.text)["violations.churn"]
        #expect(churn?.prefix(3) == ["violations.churn", "-", "-"], "\(sinkOnly.text)")
        #expect(churn?.last == "not measured (on one side or both)", "\(sinkOnly.text)")
    }

    /// With repeats on both sides, each change has a 95% interval (each side resampled on its
    /// own): it holds the observed change, lies where the repeats allow, and is the same on
    /// every call (seeded).
    @Test func comparingRepeatsGivesEachChangeAnInterval() throws {
        let steady = RunSet(
            directory: "baseline",
            runs: [100, 95, 105, 98, 102].map { Self.run([.throughput: $0, .p99: 20]) }
        )
        let slower = RunSet(
            directory: "current",
            runs: [70, 72, 68, 71, 69].map { Self.run([.throughput: $0, .p99: 20]) }
        )
        let rows = RunComparison(baseline: steady, current: slower, metrics: [.throughput, .p99]).rows
        let throughput = try #require(rows[0].interval)
        let change = try #require(rows[0].change)
        #expect(throughput.contains(change))
        // Medians can only come from the repeats: 68/105 − 1 … 72/95 − 1 bound every resample.
        #expect(throughput.lowerBound >= 68.0 / 105 - 1 && throughput.upperBound <= 72.0 / 95 - 1)
        #expect(throughput.upperBound < 0)
        // Identical repeats: no spread, an interval of exactly no change.
        #expect(rows[1].interval == 0...0)
        #expect(RunComparison(baseline: steady, current: slower).rows[0].interval == throughput)
        let text = RunComparison(baseline: steady, current: slower).text
        #expect(
            textRows(text)["metric"] == ["metric", "baseline", "current", "change", "noise", "95% interval", "verdict"]
        )
        #expect(textRows(text)["throughput"]?.count == 7, "\(text)")
    }
}

/// The verdicts of `fanout compare` follow one rule, the printed interval's: the two
/// rows that disagreed with their intervals, and single runs that no longer pass by default.
@Suite struct ComparisonVerdictTests {
    static func set(_ name: String, _ values: [Double], metric: RunMetric = .p90) -> RunSet {
        RunSet(directory: name, runs: values.map { ThresholdTests.run([metric: $0, .sent: 1000]) })
    }

    /// A change beyond the noise whose interval reaches below zero is within noise: the
    /// interval printed beside it decides ("p90 +34.1% ±25.8%, interval −11.3% … +100.3%" was
    /// WORSE).
    @Test func anIntervalThatHoldsNoChangeIsWithinNoise() throws {
        let row = RunComparison(
            baseline: Self.set("a", [10, 12, 9, 11, 10]),
            current: Self.set("b", [8, 20, 13.41, 11, 15]),
            metrics: [.p90]
        ).rows[0]
        let interval = try #require(row.interval)
        #expect(interval.lowerBound < 0 && interval.upperBound > 0.05, "\(interval)")
        #expect(row.verdict == .withinNoise)
    }

    /// An interval wholly below −5% is better, however large the noise ("p99 −71.8% ±179.1%,
    /// interval −74.4% … −17.6%" was within noise).
    @Test func anIntervalWhollyBeyondTheEffectDecidesWhateverTheNoise() throws {
        let row = RunComparison(
            baseline: Self.set("a", [100, 90, 110, 400, 95], metric: .p99),
            current: Self.set("b", [28, 30, 26, 29, 27], metric: .p99),
            metrics: [.p99]
        ).rows[0]
        let interval = try #require(row.interval)
        let noise = try #require(row.noise)
        #expect(noise > 1 && interval.upperBound < -0.05, "\(interval) ±\(noise)")
        #expect(row.verdict == .better)
    }

    /// One run a side: a p99 from 6.29 to 600 ms and a throughput to 0 are WORSE, not "noise
    /// unknown" with exit 0.
    @Test func singleRunsAreJudgedAgainstTheMinimumEffect() {
        let baseline = RunSet(directory: "a", runs: [ThresholdTests.run([.p99: 6.29, .throughput: 5000, .sent: 1000])])
        let current = RunSet(directory: "b", runs: [ThresholdTests.run([.p99: 600, .throughput: 0, .sent: 1000])])
        let comparison = RunComparison(baseline: baseline, current: current, metrics: [.p99, .throughput])
        #expect(comparison.rows.map(\.verdict) == [.worse, .worse])
        #expect(comparison.regressed)
        let close = RunSet(directory: "c", runs: [ThresholdTests.run([.p99: 6.5, .throughput: 4900, .sent: 1000])])
        let near = RunComparison(baseline: baseline, current: close, metrics: [.p99, .throughput])
        #expect(near.rows.map(\.verdict) == [.withinNoise, .withinNoise])
        #expect(textRows(near.text)["p99"]?.last == "within 5% (noise unknown: one run a side)", "\(near.text)")
        // A stricter bound names the same 3.3% rise.
        let strict = RunComparison(baseline: baseline, current: close, metrics: [.p99], minimumEffect: 0.01)
        #expect(strict.rows[0].verdict == .worse)
    }

    /// The generator's lag from 0.2 to 0.5 ms, one run a side, is scheduling, not a regression
    /// (compare said WORSE and exited 1, newcomer pass 4); from 0.2 to 40 ms it is WORSE.
    @Test func aLagChangeUnderAMillisecondIsWithinNoise() {
        let baseline = RunSet(directory: "a", runs: [ThresholdTests.run([.lag: 0.2, .sent: 1000])])
        let jitter = RunSet(directory: "b", runs: [ThresholdTests.run([.lag: 0.5, .sent: 1000])])
        let near = RunComparison(baseline: baseline, current: jitter, metrics: [.lag])
        #expect(near.rows[0].verdict == .withinNoise && !near.regressed)
        #expect(textRows(near.text)["lag"]?.last == "within 1 ms (a lag's scheduling noise)", "\(near.text)")
        let stalled = RunSet(directory: "c", runs: [ThresholdTests.run([.lag: 40, .sent: 1000])])
        #expect(RunComparison(baseline: baseline, current: stalled, metrics: [.lag]).rows[0].verdict == .worse)
        // Other metrics keep the relative rule: a p99 from 0.2 to 0.5 ms is WORSE.
        let p99 = RunComparison(
            baseline: RunSet(directory: "a", runs: [ThresholdTests.run([.p99: 0.2, .sent: 1000])]),
            current: RunSet(directory: "b", runs: [ThresholdTests.run([.p99: 0.5, .sent: 1000])]),
            metrics: [.p99]
        )
        #expect(p99.rows[0].verdict == .worse)
    }

    /// Rejections from 0 to some: no relative change, and still worse.
    @Test func aRiseFromZeroIsWorse() {
        let row = RunComparison(
            baseline: Self.set("a", [0], metric: .rejected),
            current: Self.set("b", [12], metric: .rejected),
            metrics: [.rejected]
        ).rows[0]
        #expect(row.change == nil && row.verdict == .worse)
    }

    @Test func anInvalidSideMakesTheComparisonInvalid() {
        let valid = Self.set("a", [10])
        let invalid = RunSet(
            directory: "b",
            runs: [ThresholdTests.run([.p90: 10, .sent: 1000], invalid: [.stoppedBeforeTheEnd])]
        )
        #expect(RunComparison(baseline: valid, current: valid).valid)
        #expect(!RunComparison(baseline: valid, current: invalid).valid)
        #expect(!RunComparison(baseline: invalid, current: valid).valid)
    }

    /// Sides that differ in what was run are named in a warning.
    @Test func sidesOfDifferentKindsAreWarnedOf() {
        let big = Self.set("a", [10])
        let small = RunSet(directory: "b", runs: [ThresholdTests.run([.p90: 10, .sent: 20])])
        let comparison = RunComparison(baseline: big, current: small, metrics: [.p90])
        #expect(comparison.differences == ["notifications sent: 1,000 vs 20"])
        #expect(
            lines(of: comparison.text, keyed: "WARNING") == [
                "WARNING the sides differ in notifications sent: 1,000 vs 20"
            ],
            "\(comparison.text)"
        )
    }

    /// The edges of "cannot fail": each of these fails some run.
    @Test(arguments: ["errors < 100%", "errors <= 99.9%", "p99 > 0", "throughput > baseline - 100%", "failed != 0"])
    func thresholdsSomeRunFailsAreTaken(text: String) throws {
        let threshold = try Threshold(parsing: text)
        #expect(Threshold.whyItCannotFail(threshold.comparison, threshold.limit, isShare: threshold.isShare) == nil)
    }

    /// A fraction is a fine limit of any metric: a repeat set's median count is one when the
    /// repeats are even in number (`sent == 5000.5` passes 5000 and 5001), so a count's
    /// fractional limit is no threshold that cannot pass (session 37's review).
    @Test(arguments: [
        "sent > 4999.5", "failed < 0.5", "errors == 0.5%", "p99 == 2.5", "throughput != 5000.5", "failed == 0e5",
        "p99 > 0.0ms", "sent == 5000.5", "rejected.BadDeviceToken != 0.5",
    ])
    func fractionsSomeRunMeetsAreTaken(text: String) throws {
        _ = try Threshold(parsing: text)
    }
}

/// A verdict's figures as a person reads them: rates and counts grouped, times to three or four
/// figures and in seconds when the limit is a second or more (newcomer pass 3 read
/// `measured 369824.968 /s` and `measured 9997.061 ms   limit 60000 ms` for `fanout < 60s`).
@Suite struct VerdictFiguresTests {
    @Test(arguments: [
        ("throughput > 100000/s", 369_824.968, 100_000.0, "measured 369,825/s   limit 100,000/s   pass"),
        ("fanout < 60s", 9_997.061, 60_000.0, "measured 9.997 s   limit 60 s   pass"),
        ("p99 < 120ms", 404.479, 120.0, "measured 404.5 ms   limit 120 ms   FAIL"),
        ("p50 < 5ms", 2.94, 5.0, "measured 2.940 ms   limit 5 ms   pass"),
        ("sent == 3000", 3_000.0, 3_000.0, "measured 3,000   limit 3,000   pass"),
        // Shares without trailing zeros (pass 4 read `measured 68.0200%   limit 90.0000%`), to a
        // decimal more than the limit, at least two (pass 5 read `68.1605%`), four where fewer
        // would print the limit for a figure on its other side.
        ("delivered > 90%", 0.6802, 0.9, "measured 68.02%   limit 90%   FAIL"),
        ("delivered > 90%", 0.681605, 0.9, "measured 68.16%   limit 90%   FAIL"),
        ("errors < 0.01%", 0.000123, 0.0001, "measured 0.012%   limit 0.01%   FAIL"),
        ("discarded.expired < 1%", 0.0, 0.01, "measured 0%   limit 1%   pass"),
        ("errors < 1%", 0.00997, 0.01, "measured 0.997%   limit 1%   pass"),
        ("errors < 1%", 0.0123, 0.01, "measured 1.23%   limit 1%   FAIL"),
    ])
    func figuresAreGroupedAndInTheLimitsUnit(text: String, measured: Double, limit: Double, line: String) throws {
        let threshold = try Threshold(parsing: text)
        let verdict = Threshold.Verdict(
            threshold: threshold,
            measured: measured,
            limit: limit,
            passed: threshold.comparison.holds(measured, limit)
        )
        #expect(verdict.line(width: 0) == "\(text)   \(line)")
    }
}
