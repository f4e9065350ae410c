import FanoutFiles
import FanoutNotation
import FanoutResults
import FanoutRun
import FanoutTestSupport
import Foundation
import Testing

/// Issue #48's false passes, each re-run as the issue wrote it: a gate that reads a CRLF
/// thresholds file whole, a warm-up that leaves nothing, a summary that says `valid: false`
/// without a reason, a comparison of a run with one 100 times slower, a cost from a run with no
/// answers, credentials refused. Each passed (exit 0) before.
@Suite(.serialized) struct GatesNeverLieTests {
    static let folder = NSTemporaryDirectory() + "fanout-never-lie-\(UUID().uuidString)"

    static func file(_ name: String, _ text: String) throws -> String {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let path = folder + "/" + name
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// The use of the file at `path` as a run's files name it, its digest sha256sum's.
    static func use(of path: String) throws -> FileUse {
        let sha = try PeerProcess.run("/usr/bin/sha256sum", [path])
        return FileUse(path: path, sha256: String(sha.output.prefix(64)))
    }

    /// `printf '# t\r\np99 < 0.001ms\r\n' > th; fanout gate D --threshold 'p99 < 25ms' --thresholds th`
    /// passed "1 of 1": the file was one comment.
    @Test func aCRLFThresholdsFileIsReadWhole() throws {
        let thresholds = try Self.file("crlf.thresholds", "# t\r\np99 < 0.001ms\r\n")
        let result = try CommandRunner.run([
            "gate", GateCommandTests.runs.valid, "--threshold", "p99 < 60s", "--thresholds", thresholds,
        ])
        #expect(result.status == 1, "\(result.standardOutput)\(result.standardError)")
        #expect(
            GateCommandTests.verdicts(result.standardOutput) == ["p99 < 60s": "pass", "p99 < 0.001ms": "FAIL"],
            "\(result.standardOutput)"
        )
        // The file that applied, by path and content hash.
        #expect(
            lines(of: result.standardOutput, keyed: "thresholds: ")
                == ["thresholds: \(try Self.use(of: thresholds)), 2 in all"],
            "\(result.standardOutput)"
        )
    }

    /// A CRLF copy of a scenario applies every line, and the summary says which file ran.
    @Test func aCRLFScenarioAppliesAndTheSummaryNamesIt() throws {
        let text = "# a scenario saved on Windows\r\nseed = 1\r\nlatency = fixed:30ms\r\n"
        let scenario = try Self.file("crlf.scenario", text)
        let output = Self.folder + "/crlf-scenario-run"
        let result = try CommandRunner.run(
            ["run", "--verbose", "--count", "300", "--sink-scenario", scenario, "--output", output],
            timeout: .seconds(120)
        )
        #expect(result.status == 0, "\(result.standardOutput)\(result.standardError)")
        let summary = try CommandRunner.summary(in: output)
        let latency = try #require(summary.latency)
        #expect(latency.p50 >= 30, "\(latency)")
        let recorded = try #require(summary.configuration.scenario)
        #expect(recorded.path == scenario)
        // sha256sum's answer for the same bytes.
        let sha = try PeerProcess.run("/usr/bin/sha256sum", [scenario])
        #expect(sha.output.hasPrefix(recorded.sha256), "\(sha.output)")
        #expect(
            lines(of: result.standardOutput, keyed: "scenario: ") == ["scenario: \(try Self.use(of: scenario))"],
            "\(result.standardOutput)"
        )
    }

    /// `fanout run --count 2000 --warm-up 2s --sink-latency fixed:100ms`: every latency was 0,
    /// `valid: true`, and `gate 'p99 < 25ms'` passed.
    @Test func aWarmUpThatTakesTheWholeRunMeasuresNothing() throws {
        let output = Self.folder + "/warm-up"
        let run = try CommandRunner.run(
            [
                "run", "--verbose", "--count", "2000", "--warm-up", "2s", "--sink-latency", "fixed:100ms", "--output",
                output,
            ],
            timeout: .seconds(120)
        )
        #expect(run.status == 4, "\(run.standardOutput)\(run.standardError)")
        let summary = try CommandRunner.summary(in: output)
        #expect(
            lines(of: run.standardOutput, keyed: "INVALID: ")
                == ["INVALID: " + InvalidReason.warmUpTookAll(warmUpSeconds: 2).description],
            "\(run.standardOutput)"
        )
        // No latency, so the harness's delay is no share of one (it printed "0% of the measured p99").
        let harness = lines(of: run.standardOutput, keyed: "harness: its own delay at p99 is ")
        let account = try #require(try CommandRunner.summary(in: output).harness)
        // Its figure is whatever part it has (the sender's leave the warm-up out, as the latency
        // does; the sink's lateness is all it has then), never a share.
        #expect(
            harness.count == 1
                && harness[0].hasPrefix(
                    "harness: its own delay at p99 is \(account.ownMeasured ? "" : "at least ")"
                        + "\(String(format: "%.2f", account.ownP99)) ms, no p99 measured to share ("
                ),
            "\(run.standardOutput)"
        )
        #expect(summary.latency == nil && summary.throughputPerSecond == nil)
        #expect(try CommandRunner.summaryHoldsNull(in: output, at: ["latency_ms"]))
        #expect(try CommandRunner.summaryHoldsNull(in: output, at: ["throughput_per_second"]))
        #expect(summary.valid == false)
        #expect(summary.invalidity == [.warmUpTookAll(warmUpSeconds: 2)])
        let markdown = MarkdownDocument(try String(contentsOfFile: output + "/summary.md", encoding: .utf8))
        #expect(markdown.lines.first?.components(separatedBy: " · ").first == "❌ **invalid**", "\(markdown)")
        #expect(markdown.items == summary.invalidity.map(\.description), "\(markdown)")
        #expect(markdown.lines.count { $0 == "Latency: nothing measured." } == 1, "\(markdown)")
        let html = HTMLDocument(try String(contentsOfFile: output + "/report.html", encoding: .utf8))
        #expect(html.elements("p", class: "invalid").map(\.text) == summary.invalidity.map { "INVALID: \($0)" })
        let gate = try CommandRunner.run(["gate", output, "--threshold", "p99 < 25ms"])
        #expect(gate.status == 2, "\(gate.standardOutput)")
        #expect(gate.standardOutput.contains(/p99 < 25ms\s+measured not measured\s+limit 25 ms\s+FAIL/))
    }

    /// A summary that says `"valid": false` with no reason passed: only the reasons were read.
    @Test func validFalseIsAuthoritative() throws {
        let copy = Self.folder + "/valid-false"
        try? FileManager.default.removeItem(atPath: copy)
        try FileManager.default.copyItem(atPath: GateCommandTests.runs.valid, toPath: copy)
        let path = copy + "/summary.json"
        var document = try JSONValue(Data(contentsOf: URL(fileURLWithPath: path)))
        #expect(document["valid"] == .bool(true))
        document["valid"] = .bool(false)
        try document.data().write(to: URL(fileURLWithPath: path))
        let gate = try CommandRunner.run(["gate", copy, "--threshold", "sent > 0"])
        #expect(gate.status == 2, "\(gate.standardOutput)")
        #expect(
            lines(of: gate.standardOutput, keyed: "INVALID ")
                == ["INVALID run: " + InvalidReason.validWithoutReason.description],
            "\(gate.standardOutput)"
        )
    }

    /// `compare A B --fail-on-regression` with p99 6 → 600 ms, or one side invalid, exited 0
    /// ("noise unknown").
    @Test func compareFailsOnAChangeBeyondTheBoundAndOnAnInvalidSide() throws {
        let slow = Self.folder + "/slow"
        let run = try CommandRunner.run(
            [
                "run", "--verbose", "--count", "3000", "--streams", "100", "--sink-latency", "fixed:600ms", "--output",
                slow,
            ],
            timeout: .seconds(120)
        )
        #expect(run.status == 0, "\(run.standardOutput)\(run.standardError)")
        let worse = try CommandRunner.run(["compare", GateCommandTests.runs.valid, slow, "--fail-on-regression"])
        #expect(worse.status == 1, "\(worse.standardOutput)")
        #expect(worse.standardOutput.contains(/p99 .*WORSE beyond 5% \(noise unknown: one run a side\)/))
        let invalid = try CommandRunner.run([
            "compare", GateCommandTests.runs.valid, GateCommandTests.runs.invalid, "--fail-on-regression",
        ])
        #expect(invalid.status == 2, "\(invalid.standardOutput)")
        #expect(
            lines(of: invalid.standardOutput, keyed: "compare: ") == ["compare: a side is invalid: no verdict stands"],
            "\(invalid.standardOutput)"
        )
        // 3,000 notifications against 2,000 a repeat, closed against open: said.
        let unlike = try CommandRunner.run(["compare", GateCommandTests.runs.valid, GateCommandTests.runs.invalid])
        #expect(
            lines(of: unlike.standardOutput, keyed: "WARNING the sides differ in model: ")
                == ["WARNING the sides differ in model: closed vs open"],
            "\(unlike.standardOutput)"
        )
    }

    /// `fanout plan --cost RUN` from a run with no answers planned 4 machines from 562 µs a
    /// notification, with no word.
    @Test func aCostFromAnInvalidRunIsRefused() throws {
        let result = try CommandRunner.run([
            "plan", "--devices", "1M", "--deadline", "60s", "--rtt", "50ms", "--cost", GateCommandTests.runs.invalid,
        ])
        #expect(result.status != 0, "\(result.standardOutput)")
        // A job's own error, thrown from run(): once written "Error: " by ArgumentParser.
        let reasons = try CommandRunner.summary(in: GateCommandTests.runs.invalid).invalidity
        #expect(
            errorLine(of: result.standardError)
                == "error: --cost \(GateCommandTests.runs.invalid) is an invalid run "
                + "(\(reasons.map(\.description).joined(separator: "; "))): its CPU per notification stands for "
                + "nothing; measure a valid run, or --calibrate",
            "\(result.standardError)"
        )
    }

    /// 403 on every answer: the run printed a rate and percentiles, "✅ valid", with 0 accepted.
    @Test func refusedCredentialsMakeARunInvalid() throws {
        let scenario = try Self.file("refuse.scenario", "error = InvalidProviderToken:100%\n")
        let output = Self.folder + "/refused"
        let run = try CommandRunner.run(
            ["run", "--verbose", "--count", "200", "--sink-scenario", scenario, "--output", output],
            timeout: .seconds(120)
        )
        #expect(run.status != 0, "\(run.standardOutput)")
        let summary = try CommandRunner.summary(in: output)
        #expect(summary.valid == false)
        #expect(
            summary.invalidity.contains {
                guard case .credentialsRefused(let refusals) = $0 else { return false }
                return Array(refusals.keys) == [.apns(.invalidProviderToken)]
            },
            "\(summary.invalidity)"
        )
        #expect(
            lines(of: run.standardOutput, keyed: "INVALID: ") == summary.invalidity.map { "INVALID: \($0)" },
            "\(run.standardOutput)"
        )
        let gate = try CommandRunner.run(["gate", output, "--threshold", "sent > 0"])
        #expect(gate.status == 2, "\(gate.standardOutput)")
    }
}

extension GatesNeverLieTests {
    /// `fanout export` published an interrupted run's 5,517/s: an invalid run is not exported.
    @Test func anInvalidRunIsNotExported() throws {
        let result = try CommandRunner.run(["export", GateCommandTests.runs.invalid, "--format", "bencher"])
        #expect(result.status == 2, "\(result.standardOutput)")
        #expect(result.standardOutput.isEmpty)
        let reasons = try CommandRunner.summary(in: GateCommandTests.runs.invalid).invalidity
        #expect(reasons.contains { $0.isGeneratorBehind }, "\(reasons)")
        #expect(
            lines(of: result.standardError, keyed: "error: ")
                == reasons.map { "error: the run is invalid: \($0)" }
                + ["error: nothing exported (an invalid run's figures stand for nothing)"],
            "\(result.standardError)"
        )
    }
}

extension GatesNeverLieTests {
    /// A bad line in a 100,000-line CRLF latency-samples file echoed the whole 6.6 MB file: the
    /// line ends were not read, and the bad value was quoted whole. Now the line is found by its
    /// number and quoted short.
    @Test func aBadSampleLineIsNamedAndQuotedShort() throws {
        let crlf = try Self.file(
            "samples.txt",
            (0..<100_000).map { "\($0 % 100 + 1)ms\r\n" }.joined() + "bogus\r\n"
        )
        let named = try CommandRunner.run(["sink", "--latency", "empirical:\(crlf)", "--duration", "1s"])
        #expect(named.status == 64, "\(named.standardError.prefix(300))")
        #expect(
            errorLine(of: named.standardError)
                == "error: The value 'empirical:\(crlf)' is invalid for '--latency <kind:values>': "
                + "\(crlf):100001: bogus is not a duration; \(DurationNotation.hint)",
            "\(named.standardError.prefix(300))"
        )
        let long = try Self.file("long.txt", String(repeating: "x", count: 500_000) + "\n")
        let quoted = try CommandRunner.run(["sink", "--latency", "empirical:\(long)", "--duration", "1s"])
        #expect(quoted.status == 64)
        #expect(
            errorLine(of: quoted.standardError)
                == "error: The value 'empirical:\(long)' is invalid for '--latency <kind:values>': "
                + "\(long):1: \(String(repeating: "x", count: 80))… (500000 bytes) is not a duration; \(DurationNotation.hint)",
            "\(quoted.standardError.prefix(300))"
        )
        #expect(quoted.standardError.utf8.count < 2_000)
    }
}
