import FanoutReport
import FanoutResults
import FanoutTestSupport
import Foundation
import Testing

/// Issue #61, case 2: a run that kept 13 latencies after its warm-up was valid, and a gate on
/// its p99 and throughput passed. A run (or a sink's folder) that measured fewer answers than
/// `--min-measured` (100 by default) is invalid, says how many it measured, and no gate passes it.
@Suite struct TooLittleMeasuredTests {
    static func folder() -> String { NSTemporaryDirectory() + "fanout-too-little-\(UUID().uuidString)" }

    /// The cause a folder gives for measuring too little, if it gives one.
    static func tooFew(_ summary: SummaryDocument) -> (measured: Int, minimum: Int, unit: InvalidReason.MeasuredUnit)? {
        for reason in summary.invalidity {
            if case .tooFewMeasured(let measured, let minimum, let unit) = reason { return (measured, minimum, unit) }
        }
        return nil
    }

    /// The hostile case itself: 1,000/s for 1 s with a 990 ms warm-up keeps some 10 latencies
    /// (the notifications started in the last 10 ms). Before, valid, and the gate exited 0.
    @Test func aWarmUpThatLeavesAFewLatenciesMakesTheRunInvalid() throws {
        let folder = Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let run = try CommandRunner.run(
            ["run", "--rate", "1000", "--duration", "1s", "--warm-up", "990ms", "--output", folder],
            timeout: .seconds(60)
        )
        #expect(run.status == 4, "\(run.standardOutput)\(run.standardError)")
        let summary = try CommandRunner.summary(in: folder)
        #expect(!summary.valid)
        let tooFew = try #require(Self.tooFew(summary), "\(summary.invalidity)")
        #expect(tooFew.minimum == 100 && tooFew.unit == .answers)
        #expect(tooFew.measured >= 1 && tooFew.measured < 100, "\(tooFew)")
        let gate = try CommandRunner.run(
            ["gate", folder, "--threshold", "p99 < 20ms", "--threshold", "throughput > 900/s"]
        )
        #expect(gate.status == 2, "\(gate.standardOutput)\(gate.standardError)")
        #expect(try RunRecord.load(folder).invalidReasons.contains(Self.cause(tooFew)))
    }

    static func cause(_ tooFew: (measured: Int, minimum: Int, unit: InvalidReason.MeasuredUnit)) -> InvalidReason {
        .tooFewMeasured(measured: tooFew.measured, minimum: tooFew.minimum, unit: tooFew.unit)
    }

    /// The minimum is the user's to state: 50 notifications are too few by default and enough
    /// with `--min-measured 50`; every one of them is measured either way (no warm-up).
    @Test func theMinimumIsAnOption() throws {
        let small = Self.folder()
        let stated = Self.folder()
        defer {
            try? FileManager.default.removeItem(atPath: small)
            try? FileManager.default.removeItem(atPath: stated)
        }
        let byDefault = try CommandRunner.run(["run", "--count", "50", "--output", small])
        #expect(byDefault.status == 4, "\(byDefault.standardError)")
        let tooFew = try #require(Self.tooFew(try CommandRunner.summary(in: small)))
        #expect(tooFew.measured == 50 && tooFew.minimum == 100)

        let lowered = try CommandRunner.run(["run", "--count", "50", "--min-measured", "50", "--output", stated])
        #expect(lowered.status == 0, "\(lowered.standardOutput)\(lowered.standardError)")
        let summary = try CommandRunner.summary(in: stated)
        #expect(summary.valid && summary.invalidity.isEmpty, "\(summary.invalidity)")
        #expect(summary.accepted == 50)
    }

    @Test(arguments: ["0", "-3"]) func aMinimumBelowOneIsRefused(_ value: String) throws {
        for command in [["run", "--count", "10"], ["sink", "--output", Self.folder(), "--duration", "1s"]] {
            let result = try CommandRunner.run(command + ["--min-measured", value])
            #expect(result.status == 64, "\(command): \(result.standardError)")
        }
    }

    /// A sink's folder counts the provider's requests: 50 are too few for its fan-out time by
    /// default, enough when the sink was told `--min-measured 50`.
    @Test(arguments: [nil, 50]) func aSinkFolderThatReceivedTooFewIsInvalid(_ minimum: Int?) throws {
        let folder = Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let (sink, port) = try CommandRunner.sink(
            ["--no-auth", "--output", folder, "--expect", "50"] + (minimum.map { ["--min-measured", "\($0)"] } ?? [])
        )
        defer { sink.stop() }
        let send = try CommandRunner.send(
            to: port,
            ["--generate", "50", "--min-measured", "50"],
            timeout: .seconds(60)
        )
        #expect(send.status == 0, "\(send.standardError)")
        let ended = try sink.wait(timeout: .seconds(30))
        #expect(ended.status == 0, "\(ended.errors)")
        let summary = try CommandRunner.summary(in: folder)
        #expect(summary.requests == 50)
        if minimum == nil {
            let tooFew = try #require(Self.tooFew(summary), "\(summary.invalidity)")
            #expect(tooFew.measured == 50 && tooFew.minimum == 100 && tooFew.unit == .requests)
            let gate = try CommandRunner.run(["gate", folder, "--threshold", "fanout < 60s"])
            #expect(gate.status == 2, "\(gate.standardOutput)")
        } else {
            #expect(summary.valid, "\(summary.invalidity)")
        }
    }
}
