import FanoutAssembly
import FanoutResults
import FanoutRun
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

    /// The gate's verdict rows (`p99 < 1us   measured 3.2 ms   limit 0.001 ms   FAIL`), each
    /// threshold's last column, `pass` or `FAIL`, by the threshold as written.
    static func verdicts(_ output: String) -> [String: String] {
        var verdicts: [String: String] = [:]
        for line in output.split(separator: "\n") {
            let columns = textColumns(line)
            guard columns.count == 4, let last = columns.last, last == "pass" || last == "FAIL" else { continue }
            verdicts[columns[0]] = last
        }
        return verdicts
    }

    @Test func thresholdsThatHoldPassWithStatus0() throws {
        let result = try Self.gate([
            Self.runs.valid, "--threshold", "sent == 3000", "--threshold", "failed == 0", "--threshold",
            "errors < 0.1%", "--threshold", "p99 < 60s", "--threshold", "throughput > 1/s",
        ])
        #expect(result.status == 0, "\(result.standardOutput)\(result.standardError)")
        #expect(
            Self.verdicts(result.standardOutput) == [
                "sent == 3000": "pass", "failed == 0": "pass", "errors < 0.1%": "pass", "p99 < 60s": "pass",
                "throughput > 1/s": "pass",
            ],
            "\(result.standardOutput)"
        )
    }

    /// By reason and over the worst window, on a real run's summary.json and latency.hlog: the
    /// worst one-second window's p99 is at least the whole run's (it is one of the run's
    /// seconds, or all of them).
    @Test func reasonsAndWindowsGateARealRun() throws {
        let result = try Self.gate([
            Self.runs.valid, "--threshold", "rejected.Unregistered == 0", "--threshold", "failed.Timeout < 0.1%",
            "--threshold", "window(1s).p99 < 60s", "--threshold", "window(1s).p99 < 1us",
        ])
        #expect(result.status == 1, "\(result.standardOutput)\(result.standardError)")
        #expect(
            Self.verdicts(result.standardOutput) == [
                "rejected.Unregistered == 0": "pass", "failed.Timeout < 0.1%": "pass", "window(1s).p99 < 60s": "pass",
                "window(1s).p99 < 1us": "FAIL",
            ],
            "\(result.standardOutput)"
        )
        #expect(result.standardOutput.contains(/window\(1s\).p99 < 1us\s+measured [\d.]+ ms\s+limit 0.001 ms\s+FAIL/))
    }

    @Test func aThresholdThatFailsGivesStatus1AndSaysWhich() throws {
        let result = try Self.gate([Self.runs.valid, "--threshold", "sent == 3000", "--threshold", "p99 < 1us"])
        #expect(result.status == 1, "\(result.standardOutput)\(result.standardError)")
        #expect(
            result.standardOutput.contains(/p99 < 1us\s+measured [\d.]+ ms\s+limit 0.001 ms\s+FAIL/),
            "\(result.standardOutput)"
        )
        #expect(Self.verdicts(result.standardOutput) == ["sent == 3000": "pass", "p99 < 1us": "FAIL"])
    }

    @Test func anInvalidRunNeverPassesAndGivesStatus2() throws {
        let result = try Self.gate([Self.runs.invalid, "--threshold", "sent > 0"])
        #expect(result.status == 2, "\(result.standardOutput)\(result.standardError)")
        // The run's own reason, a line of its own; the threshold judged still.
        let reasons = try CommandRunner.summary(in: Self.runs.invalid).invalidity
        try #require(reasons.count == 1, "\(reasons)")
        #expect(reasons.allSatisfy { if case .generatorBehind = $0 { true } else { false } })
        let said = result.standardOutput.split(separator: "\n").map(String.init)
        #expect(said.count { $0 == "INVALID run: \(reasons[0])" } == 1, "\(result.standardOutput)")
        #expect(Array(Self.verdicts(result.standardOutput).keys) == ["sent > 0"], "\(result.standardOutput)")
        // An invalid baseline makes the comparison untrustworthy too.
        let withBaseline = try Self.gate([
            Self.runs.valid, "--baseline", Self.runs.invalid, "--threshold", "p99 < baseline + 1000%",
        ])
        #expect(withBaseline.status == 2, "\(withBaseline.standardOutput)")
        let baselineSaid = withBaseline.standardOutput.split(separator: "\n").map(String.init)
        #expect(baselineSaid.count { $0 == "INVALID baseline: \(reasons[0])" } == 1, "\(withBaseline.standardOutput)")
    }

    @Test func repeatsAreGatedOnTheirMediansAgainstABaseline() throws {
        // The repeats, the manifest saying all 3 asked finished, their report side by side, and
        // the lock the run held.
        let names = try FileManager.default.contentsOfDirectory(atPath: Self.runs.repeats).sorted()
        #expect(names == [".lock", "repeat-1", "repeat-2", "repeat-3", "repeats.json", "report.html"])
        let report = try String(contentsOfFile: Self.runs.repeats + "/report.html", encoding: .utf8)
        #expect(HTMLDocument(report).texts("h1") == ["Fanout repeats: 3 runs side by side"])
        // A bar a repeat in each of its four charts: throughput, p50, p99, max.
        #expect(report.matches(of: /<rect class="repeat"/).count == 3 * 4)
        let result = try Self.gate([
            Self.runs.repeats, "--baseline", Self.runs.valid, "--threshold", "sent == 2000", "--threshold",
            "p99 <= baseline + 100000%",
        ])
        #expect(result.status == 0, "\(result.standardOutput)\(result.standardError)")
        #expect(
            lines(of: result.standardOutput, keyed: "medians of ") == ["medians of 3 repeats in \(Self.runs.repeats)"],
            "\(result.standardOutput)"
        )
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
        #expect(
            lines(of: result.standardOutput, keyed: "baseline: ") == ["baseline: \(Self.runs.valid) (1 run)"]
                && lines(of: result.standardOutput, keyed: "current: ") == ["current:  \(Self.runs.repeats) (3 runs)"],
            "\(result.standardOutput)"
        )
        // One run a side: neither noise nor an interval, and the verdict says so.
        #expect(
            result.standardOutput.contains(
                /throughput\s+[\d,]+\/s\s+[\d,]+\/s\s+[+-][\d.]+%\s+-\s+-\s+.*\(noise unknown/
            ),
            "\(result.standardOutput)"
        )
        let repeats = try CommandRunner.run(["compare", Self.runs.repeats, Self.runs.repeats])
        #expect(
            repeats.standardOutput.contains(
                /p99\s+[\d.]+ ms\s+[\d.]+ ms\s+-?\s*[+-]?[\d.]*%?\s*±[\d.]+%\s+[+-][\d.]+% … [+-][\d.]+%\s+same/
            ),
            "\(repeats.standardOutput)"
        )
        let missing = try CommandRunner.run(["compare", Self.runs.valid, Self.folder + "/nothing"])
        #expect(missing.status == 64)
    }

    /// `--report FILE` writes the comparison as a page too: a dot a metric, its verdict beside it.
    @Test func compareWritesItsReportWhenAsked() throws {
        let page = Self.folder + "/compare.html"
        let result = try CommandRunner.run(["compare", Self.runs.repeats, Self.runs.repeats, "--report", page])
        #expect(result.status == 0, "\(result.standardError)")
        #expect(lines(of: result.standardOutput, keyed: "wrote ") == ["wrote \(page)"], "\(result.standardOutput)")
        let html = try String(contentsOfFile: page, encoding: .utf8)
        // Throughput and the six latencies at least; errors and lag only where not 0 (a change
        // from 0 has no size to draw).
        #expect((7...9).contains(html.matches(of: /<circle class="change"/).count), "\(html)")
        #expect(HTMLDocument(html).count("td", text: "same") >= 1)
        let unwritable = try CommandRunner.run([
            "compare", Self.runs.valid, Self.runs.valid, "--report", "/proc/x.html",
        ])
        #expect(unwritable.status == 64, "1 would read as WORSE under --fail-on-regression")
        #expect(
            unwritable.standardError.hasPrefix("error: cannot write --report /proc/x.html"),
            "\(unwritable.standardError)"
        )
    }

    /// Python's own XML parser reads the JUnit file: `[tests, failures, errors, cases, failure
    /// messages]`.
    struct JUnitReport: Decodable {
        var tests: Int
        var failures: Int
        var errors: Int
        var names: [String]
        /// The failure messages, case by case.
        var failed: [String]
        /// The error messages, case by case.
        var erred: [String]
    }

    static func junit(_ path: String) throws -> JUnitReport {
        let script = """
            import json, sys, xml.etree.ElementTree as E
            suite = E.parse(sys.argv[1]).getroot().find("testsuite")
            cases = suite.findall("testcase")
            print(json.dumps({"tests": int(suite.get("tests")), "failures": int(suite.get("failures")),
                "errors": int(suite.get("errors")), "names": [c.get("name") for c in cases],
                "failed": [c.find("failure").get("message") for c in cases if c.find("failure") is not None],
                "erred": [c.find("error").get("message") for c in cases if c.find("error") is not None]}))
            """
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", script, path]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "xml.etree could not read \(path)")
        return try JSONDecoder().decode(JUnitReport.self, from: data)
    }

    @Test(.requires(.python3)) func junitHasOneCasePerThresholdWithTheMeasuredValueAndLimit() throws {
        let file = Self.folder + "/junit-\(UUID().uuidString).xml"
        let result = try Self.gate([
            Self.runs.valid, "--threshold", "sent == 3000", "--threshold", "p99 < 1us", "--threshold",
            "throughput > 1000000000/s", "--junit", file,
        ])
        #expect(result.status == 1, "\(result.standardOutput)\(result.standardError)")
        let report = try Self.junit(file)
        #expect(report.tests == 3 && report.failures == 2 && report.errors == 0)
        #expect(report.names == ["sent == 3000", "p99 < 1us", "throughput > 1000000000/s"])
        let messages = report.failed
        #expect(messages.count == 2)
        #expect(messages.first?.hasPrefix("measured ") == true && messages.first?.hasSuffix(", limit 0.001 ms") == true)
        #expect(messages.last?.hasSuffix(", limit 1,000,000,000/s") == true, "\(messages)")
    }

    /// A file written besides a run never goes over one: gate's --junit or --report on the
    /// run's own summary.json, compare's --report on its latency.hgrm, a sink's --output on the
    /// run's folder and send's --gone-tokens on its --tokens are refused before anything is
    /// written (gate and compare: usage, 64; sink and send: 1, as any folder they refuse), and
    /// what they would have overwritten is as it was.
    @Test func noOutputGoesOverARunsFilesOrTheTokensItReads() throws {
        // The refusal each command printed (its `error:` line), to compare with the case.
        func refusal(_ result: CommandRunner.Result) -> String? {
            result.standardError.split(separator: "\n").first { $0.hasPrefix("error: ") }.map {
                String($0.dropFirst(7))
            }
        }
        let run = Self.runs.valid
        let summary = try Data(contentsOf: URL(fileURLWithPath: run + "/summary.json"))
        let histogram = try Data(contentsOf: URL(fileURLWithPath: run + "/latency.hgrm"))
        for option in ["--junit", "--report"] {
            let gate = try Self.gate([run, "--threshold", "sent == 3000", option, run + "/summary.json"])
            #expect(gate.status == 64, "\(gate.standardOutput)\(gate.standardError)")
            let said = OutputFile.Collision.input(
                output: option,
                path: run + "/summary.json",
                input: "the run's",
                inputPath: run + "/summary.json"
            )
            #expect(refusal(gate) == said.description, "\(gate.standardError)")
        }
        let compare = try CommandRunner.run(["compare", run, run, "--report", run + "/latency.hgrm"])
        #expect(compare.status == 64)
        let histogramRefused = OutputFile.Collision.input(
            output: "--report",
            path: run + "/latency.hgrm",
            input: "the baseline's",
            inputPath: run + "/latency.hgrm"
        )
        #expect(refusal(compare) == histogramRefused.description, "\(compare.standardError)")
        let sink = try CommandRunner.run(
            ["sink", "--listen", "127.0.0.1:0", "--output", run, "--duration", "1s"],
            timeout: .seconds(30)
        )
        #expect(sink.status == 1)
        let earlier = try FileManager.default.contentsOfDirectory(atPath: run).filter(RunSummary.files.contains)
            .sorted()
        #expect(
            refusal(sink)
                == "--output \(run): holds an earlier run's results (\(earlier.joined(separator: ", "))): give a new folder, or remove them first (a gate must never read them as this run's)",
            "\(sink.standardError)"
        )
        let capture = try CommandRunner.run(
            ["sink", "--listen", "127.0.0.1:0", "--capture", run + "/summary.json", "--duration", "1s"],
            timeout: .seconds(30)
        )
        #expect(capture.status == 1)
        let captureRefused = OutputFile.Collision.runFile(
            output: "--capture",
            path: run + "/summary.json",
            name: "summary.json"
        )
        #expect(refusal(capture) == captureRefused.description, "\(capture.standardError)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: run + "/summary.json")) == summary)
        #expect(try Data(contentsOf: URL(fileURLWithPath: run + "/latency.hgrm")) == histogram)

        let tokens = Self.folder + "/tokens-\(UUID().uuidString).txt"
        let token = String(repeating: "ab", count: 32) + "\n"
        try token.write(toFile: tokens, atomically: true, encoding: .utf8)
        let send = try CommandRunner.run([
            "send", "--endpoint", "http://127.0.0.1:1", "--template",
            CommandRunner.repositoryRoot + "/fixtures/poll.json",
            "--topic", "com.example.app", "--tokens", tokens, "--gone-tokens", tokens, "--output",
            Self.folder + "/send-\(UUID().uuidString)",
        ])
        #expect(send.status == 1)
        let sendRefused = OutputFile.Collision.input(
            output: "--gone-tokens",
            path: tokens,
            input: "--tokens",
            inputPath: tokens
        )
        #expect(refusal(send) == sendRefused.description, "\(send.standardError)")
        #expect(try String(contentsOfFile: tokens, encoding: .utf8) == token)
        let read = try CommandRunner.run(
            [
                "sink", "--listen", "127.0.0.1:0", "--unregistered-tokens", tokens, "--capture", tokens, "--duration",
                "1s",
            ],
            timeout: .seconds(30)
        )
        #expect(read.status == 1)
        let readRefused = OutputFile.Collision.input(
            output: "--capture",
            path: tokens,
            input: "--unregistered-tokens",
            inputPath: tokens
        )
        #expect(refusal(read) == readRefused.description, "\(read.standardError)")
        #expect(try String(contentsOfFile: tokens, encoding: .utf8) == token)
    }

    /// `--report FILE`: a row a threshold, the measured value a bar and the limit a mark on one
    /// scale (0 to 5,000 for 3,000 sent against 1,500), green when it holds and red when not.
    @Test func theGatesReportDrawsEachMeasuredValueAgainstItsLimit() throws {
        let page = Self.folder + "/gate-\(UUID().uuidString).html"
        let result = try Self.gate([
            Self.runs.valid, "--threshold", "sent == 3000", "--threshold", "sent < 1500", "--report", page,
        ])
        #expect(result.status == 1, "\(result.standardOutput)\(result.standardError)")
        let html = try String(contentsOfFile: page, encoding: .utf8)
        #expect(HTMLDocument(html).texts("h1") == ["Fanout gate: FAILED"])
        let bars = html.matches(
            of:
                /<rect class="measured" x="260.0" y="[0-9.]+" width="([0-9.]+)" height="14" fill="(#[0-9a-f]+)"><title>([^<]*)<\/title>/
        )
        .map { (String($0.output.1), String($0.output.2), String($0.output.3)) }
        try #require(bars.count == 2, "\(html)")
        #expect(bars[0].1 == "#2ca02c" && bars[0].2 == "sent == 3000: measured 3,000, limit 3,000, pass")
        #expect(
            bars[1].0 == "276.0" && bars[1].1 == "#d62728"
                && bars[1].2 == "sent &lt; 1500: measured 3,000, limit 1,500, FAIL"
        )
        let limits = html.matches(of: /<line class="limit" x1="([0-9.]+)"/).map { String($0.output.1) }
        #expect(limits.last == "398.0", "\(limits)")

        let invalid = try Self.gate([Self.runs.invalid, "--threshold", "sent > 0", "--report", page])
        #expect(invalid.status == 2)
        let invalidPage = HTMLDocument(try String(contentsOfFile: page, encoding: .utf8))
        #expect(invalidPage.texts("h1") == ["Fanout gate: INVALID"])
        // The run's own reasons, each said.
        let reasons = try CommandRunner.summary(in: Self.runs.invalid).invalidity
        #expect(reasons.count == 1 && reasons.allSatisfy { if case .generatorBehind = $0 { true } else { false } })
        #expect(invalidPage.elements("p", class: "invalid").map(\.text) == reasons.map { "INVALID run: \($0)" })
    }

    @Test(.requires(.python3)) func junitOfAnInvalidRunHasTheInvalidityAsAnError() throws {
        let file = Self.folder + "/junit-\(UUID().uuidString).xml"
        let result = try Self.gate([Self.runs.invalid, "--threshold", "sent > 0", "--junit", file])
        #expect(result.status == 2)
        let report = try Self.junit(file)
        #expect(report.tests == 2 && report.errors == 1 && report.failures == 0)
        // The error is the run's reasons, each whole, the generator's lag among them.
        let reasons = try CommandRunner.summary(in: Self.runs.invalid).invalidity
        #expect(reasons.contains { $0.isGeneratorBehind }, "\(reasons)")
        #expect(
            report.erred == [reasons.map { "run: \($0)" }.joined(separator: "; ")],
            "\(report)"
        )
    }

    /// Bencher Metric Format: `{name: {measure: {value, lower_value, upper_value}}}`, the bounds
    /// the repeats' lowest and highest around their median.
    @Test func bencherFormatHasEveryMeasureWithTheRepeatsBounds() throws {
        let result = try CommandRunner.run(["export", Self.runs.repeats, "--format", "bencher", "--name", "poll"])
        #expect(result.status == 0, "\(result.standardError)")
        // Bencher's names are the keys: benchmark → measure → figure.
        let object = try JSONDecoder().decode(
            [String: [String: [String: Double]]].self,
            from: Data(result.standardOutput.utf8)
        )
        #expect(Array(object.keys) == ["poll"])
        let measures = try #require(object["poll"])
        #expect(
            Set(measures.keys)
                == [
                    "throughput", "latency-p50", "latency-p90", "latency-p99", "latency-p99-9", "latency-max", "errors",
                ]
        )
        for (slug, measure) in measures {
            let value = try #require(measure["value"], "\(slug)")
            let lower = try #require(measure["lower_value"], "\(slug)")
            let upper = try #require(measure["upper_value"], "\(slug)")
            #expect(lower <= value && value <= upper, "\(slug): \(measure)")
        }
        #expect(measures["errors"]?["value"] == 0 && (measures["throughput"]?["value"] ?? 0) > 0)
    }

    /// github-action-benchmark's custom tools: `[{name, unit, value}]`, throughput the only
    /// bigger-is-better entry; a single run has no range.
    @Test func benchmarkActionFormatsSplitBiggerAndSmaller() throws {
        for (format, expected) in [
            ("benchmark-action-bigger", ["fanout - throughput"]),
            (
                "benchmark-action-smaller",
                ["fanout - p50", "fanout - p90", "fanout - p99", "fanout - p99.9", "fanout - max", "fanout - errors"]
            ),
        ] {
            let file = Self.folder + "/\(format).json"
            let result = try CommandRunner.run(["export", Self.runs.valid, "--format", format, "--output", file])
            #expect(result.status == 0, "\(result.standardError)")
            /// An entry of github-action-benchmark's custom format.
            struct Entry: Decodable {
                var name: String
                var unit: String
                var value: Double
            }
            let data = try Data(contentsOf: URL(fileURLWithPath: file))
            let entries = try JSONDecoder().decode([Entry].self, from: data)
            #expect(entries.map(\.name) == expected)
            // A single run has no range: no entry holds the key.
            let keys = try JSONDecoder().decode([JSONKeys].self, from: data)
            #expect(keys.allSatisfy { !$0.names.contains("range") }, "\(keys)")
        }
        let bad = try CommandRunner.run(["export", Self.runs.valid, "--format", "csv"])
        #expect(
            bad.status == 64
                && bad.standardError.contains(
                    "The value 'csv' is invalid for '--format <format>'. Please provide one of 'bencher', 'benchmark-action-bigger' or 'benchmark-action-smaller'"
                ),
            "\(bad.standardError)"
        )
        let missing = try CommandRunner.run(["export", Self.folder + "/nothing", "--format", "bencher"])
        #expect(missing.status == 64)
        #expect(
            errorLine(of: missing.standardError)
                == "error: \(Self.folder)/nothing holds no summary.json and no repeat-*/ folders: not a Fanout run folder",
            "\(missing.standardError)"
        )
    }

    /// On GitHub Actions a run's summary.md lands on the job's summary page.
    @Test func aRunAppendsItsSummaryToGitHubsStepSummary() throws {
        let page = Self.folder + "/step-summary-\(UUID().uuidString).md"
        try Data("# before\n".utf8).write(to: URL(fileURLWithPath: page))
        let run = Self.folder + "/summarised-\(UUID().uuidString)"
        let result = try CommandRunner.run(
            ["run", "--count", "1000", "--output", run],
            environment: ["GITHUB_STEP_SUMMARY": page],
            timeout: .seconds(120)
        )
        #expect(result.status == 0, "\(result.standardError)")
        let markdown = try String(contentsOfFile: run + "/summary.md", encoding: .utf8)
        #expect(try String(contentsOfFile: page, encoding: .utf8) == "# before\n" + markdown + "\n")
    }
}
