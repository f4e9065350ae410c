import FanoutTestSupport
import Foundation
import Testing

/// `fanout gate`, `fanout compare` and `fanout run --repeat` on real run folders: every exit
/// status the gate documents, and an invalid run that never passes.
@Suite(.serialized) struct GateCommandTests {
    static let folder = NSTemporaryDirectory() + "fanout-gate-\(UUID().uuidString)"

    /// A valid run, a set of 3 repeats, and an invalid run (its generator "fell behind" a 1 µs
    /// lag limit), made once.
    static let runs: (valid: String, repeats: String, invalid: String) = {
        let valid = folder + "/valid"
        let repeats = folder + "/repeats"
        let invalid = folder + "/invalid"
        _ = try? CommandRunner.run(
            ["run", "--count", "3000", "--streams", "100", "--output", valid],
            timeout: .seconds(120)
        )
        _ = try? CommandRunner.run(
            ["run", "--count", "2000", "--streams", "100", "--repeat", "3", "--output", repeats],
            timeout: .seconds(180)
        )
        _ = try? CommandRunner.run(
            ["run", "--rate", "1000", "--duration", "500ms", "--max-lag", "1us", "--output", invalid],
            timeout: .seconds(120)
        )
        return (valid, repeats, invalid)
    }()

    static func gate(_ arguments: [String]) throws -> CommandRunner.Result {
        try CommandRunner.run(["gate"] + arguments)
    }

    @Test func thresholdsThatHoldPassWithStatus0() throws {
        let result = try Self.gate([
            Self.runs.valid, "--threshold", "sent == 3000", "--threshold", "failed == 0", "--threshold",
            "errors < 0.1%", "--threshold", "p99 < 60s", "--threshold", "throughput > 1/s",
        ])
        #expect(result.status == 0, "\(result.standardOutput)\(result.standardError)")
        #expect(result.standardOutput.contains("gate: passed (5 of 5)"), "\(result.standardOutput)")
    }

    @Test func aThresholdThatFailsGivesStatus1AndSaysWhich() throws {
        let result = try Self.gate([Self.runs.valid, "--threshold", "sent == 3000", "--threshold", "p99 < 1us"])
        #expect(result.status == 1, "\(result.standardOutput)\(result.standardError)")
        #expect(
            result.standardOutput.contains(/p99 < 1us\s+measured [\d.]+ ms\s+limit 0.001 ms\s+FAIL/),
            "\(result.standardOutput)"
        )
        #expect(result.standardOutput.contains("gate: FAILED (1 of 2 thresholds)"))
    }

    @Test func anInvalidRunNeverPassesAndGivesStatus2() throws {
        let result = try Self.gate([Self.runs.invalid, "--threshold", "sent > 0"])
        #expect(result.status == 2, "\(result.standardOutput)\(result.standardError)")
        #expect(result.standardOutput.contains("INVALID run: the generator fell"), "\(result.standardOutput)")
        #expect(result.standardOutput.contains("sent > 0"))
        // An invalid baseline makes the comparison untrustworthy too.
        let withBaseline = try Self.gate([
            Self.runs.valid, "--baseline", Self.runs.invalid, "--threshold", "p99 < baseline + 1000%",
        ])
        #expect(withBaseline.status == 2, "\(withBaseline.standardOutput)")
        #expect(withBaseline.standardOutput.contains("INVALID baseline: the generator fell"))
    }

    @Test func repeatsAreGatedOnTheirMediansAgainstABaseline() throws {
        let summaries = try FileManager.default.contentsOfDirectory(atPath: Self.runs.repeats).sorted()
        #expect(summaries == ["repeat-1", "repeat-2", "repeat-3"])
        let result = try Self.gate([
            Self.runs.repeats, "--baseline", Self.runs.valid, "--threshold", "sent == 2000", "--threshold",
            "p99 <= baseline + 100000%",
        ])
        #expect(result.status == 0, "\(result.standardOutput)\(result.standardError)")
        #expect(result.standardOutput.contains("medians of 3 repeats"), "\(result.standardOutput)")
    }

    @Test func usageErrorsGiveStatus64AndSayWhere() throws {
        let thresholds = Self.folder + "/thresholds.txt"
        try "p99 < 25ms\nthroughput > lots\n".write(toFile: thresholds, atomically: true, encoding: .utf8)
        let cases: [([String], String)] = [
            ([Self.runs.valid, "--thresholds", thresholds], "\(thresholds):2: lots is not a number with a unit"),
            ([Self.runs.valid, "--threshold", "p99 < baseline + 5%"], "compares with a baseline: give --baseline"),
            ([Self.folder + "/nothing", "--threshold", "p99 < 1s"], "not a Fanout run folder"),
            ([Self.runs.valid], "no threshold: give --threshold EXPR or --thresholds FILE"),
            ([Self.runs.valid, "--threshold", "p98 < 1s"], "p98 is not a metric"),
        ]
        for (arguments, message) in cases {
            let result = try Self.gate(arguments)
            #expect(result.status == 64, "\(arguments): \(result.standardOutput)")
            #expect(result.standardError.contains(message), "\(arguments): \(result.standardError)")
        }
    }

    @Test func compareShowsChangesAndNoise() throws {
        let result = try CommandRunner.run(["compare", Self.runs.valid, Self.runs.repeats])
        #expect(result.status == 0, "\(result.standardError)")
        #expect(result.standardOutput.contains("baseline: \(Self.runs.valid) (1 run)"))
        #expect(result.standardOutput.contains("current:  \(Self.runs.repeats) (3 runs)"))
        #expect(result.standardOutput.contains(/throughput\s+[\d,]+\/s\s+[\d,]+\/s\s+[+-][\d.]+%\s+-\s+noise unknown/))
        let repeats = try CommandRunner.run(["compare", Self.runs.repeats, Self.runs.repeats])
        #expect(
            repeats.standardOutput.contains(/p99\s+[\d.]+ ms\s+[\d.]+ ms\s+-?\s*[+-]?[\d.]*%?\s*±[\d.]+%\s+same/),
            "\(repeats.standardOutput)"
        )
        let missing = try CommandRunner.run(["compare", Self.runs.valid, Self.folder + "/nothing"])
        #expect(missing.status == 64)
    }
}
