import ArgumentParser
import FanoutResults
import FanoutRun
import FanoutTestSupport
import Foundation
import Testing

@testable import fanout

/// `fanout run`, the main job, as a user runs it: the summary, the files, the exit status.
@Suite(.serialized) struct RunCommandTests {
    /// `--tls`: the main job as APNs requires it — TLS to the embedded sink with a certificate
    /// made for the run, and a JWT on every connection that the sink verifies (a token the sink
    /// refused would show as 403s, and the run would not reconcile as all accepted).
    @Test func theMainJobSpeaksTLSWithTokenAuth() throws {
        let folder = NSTemporaryDirectory() + "fanout-run-tls-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let result = try CommandRunner.run(
            ["run", "--verbose", "--count", "3000", "--connections", "2", "--tls", "--output", folder],
            timeout: .seconds(120)
        )
        #expect(result.status == 0, "\(result.standardError)")
        let summary = try CommandRunner.summary(in: folder)
        // "the embedded sink at https://127.0.0.1:PORT": the address it was sent to.
        let address = try #require(summary.endpoint.components(separatedBy: " at ").last)
        let endpoint = try #require(URLComponents(string: address), "\(summary.endpoint)")
        #expect(endpoint.scheme == "https" && endpoint.host == "127.0.0.1", "\(summary.endpoint)")
        #expect(summary.configuration.endpoint == "the embedded sink (TLS)")
        #expect(summary.configuration.tokenAuth)
        #expect(
            summary.accepted == 3000 && summary.rejected.isEmpty && summary.failed.isEmpty && summary.skipped.isEmpty
        )
        #expect(summary.reconciled == true && summary.sink?.requests == 3000, "\(String(describing: summary.sink))")
    }

    @Test func theMainJobReconcilesAndWritesItsFiles() throws {
        let folder = NSTemporaryDirectory() + "fanout-run-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let result = try CommandRunner.run(
            ["run", "--verbose", "--count", "20000", "--connections", "2", "--streams", "200", "--output", folder],
            timeout: .seconds(120)
        )
        #expect(result.status == 0, "\(result.standardError)")
        let summary = try CommandRunner.summary(in: folder)
        #expect(summary.sink?.requests == 20_000, "\(String(describing: summary.sink))")
        #expect(summary.schemaVersion == 8)
        #expect(summary.sent == 20_000)
        #expect(summary.accepted == 20_000)
        #expect(summary.rejected.isEmpty)
        #expect(summary.failed.isEmpty && summary.skipped.isEmpty)
        #expect(summary.reconciled == true)
        #expect(try #require(summary.throughputPerSecond) > 0)
        let latency = try #require(summary.latency)
        #expect(try SummaryKeyNames(in: folder).latency.names == ["p50", "p90", "p99", "p99_9", "p99_99", "max"])
        #expect(latency.p50 <= latency.p99 && latency.p99 <= latency.max)
        // CPU by thread clock: both sides used some, neither more than its threads had, and the
        // per-notification figure is the seconds over what was sent.
        let cpu = try #require(summary.cpu)
        let elapsed = summary.elapsedSeconds
        let cores = Double(ProcessInfo.processInfo.activeProcessorCount)
        for (role, seconds, perNotification) in [
            ("sender", cpu.senderSeconds, cpu.senderPerNotification),
            ("sink", cpu.sinkSeconds, cpu.sinkPerNotification),
        ] {
            let seconds = try #require(seconds, "\(role)")
            #expect(seconds > 0 && seconds <= elapsed * cores * 1.05, "\(role): \(seconds) s of CPU in \(elapsed) s")
            let perNotification = try #require(perNotification, "\(role)")
            #expect(abs(perNotification - seconds * 1e6 / 20_000) < 1e-6 * perNotification + 1e-9)
        }
        func part(_ role: String, _ seconds: Double?, _ perNotification: Double?) -> String {
            "\(role) \(String(format: "%.2f", perNotification ?? -1)) (\(String(format: "%.2f", seconds ?? -1)) s)"
        }
        #expect(
            lines(of: result.standardOutput, keyed: "cpu")
                == [
                    "cpu µs per notification: " + part("sender", cpu.senderSeconds, cpu.senderPerNotification) + "  "
                        + part("sink", cpu.sinkSeconds, cpu.sinkPerNotification)
                ],
            "\(result.standardOutput)"
        )

        // HdrHistogram's percentile distribution: a header, rows of value/percentile/count, and
        // the total count in its footer.
        let hgrm = try String(contentsOfFile: folder + "/latency.hgrm", encoding: .utf8)
        #expect(
            hgrm.split(separator: "\n").first?.trimmingCharacters(in: .whitespaces)
                == "Value     Percentile TotalCount 1/(1-Percentile)",
            "\(hgrm.prefix(400))"
        )
        #expect(hgrm.contains(/Total count\s+=\s+20000\]/), "\(hgrm.suffix(400))")
        // The interval log: HdrHistogram's header lines, then one histogram per second, the first
        // from 0 (shorter than a second when the whole run is: 20,000 notifications can be).
        let hlog = try String(contentsOfFile: folder + "/latency.hlog", encoding: .utf8)
        #expect(
            lines(of: hlog, keyed: "#[Histogram log format version") == ["#[Histogram log format version 1.3]"],
            "\(hlog.prefix(600))"
        )
        #expect(hlog.contains(/\n0\.000,(1\.000|0\.\d{3}),[\d.]+,HISTF/), "\(hlog.prefix(600))")
        #expect(
            lines(of: result.standardOutput, keyed: "results: ")
                == ["results: \(folder)/ (summary.json, summary.md, report.html, latency.hgrm, latency.hlog)"],
            "\(result.standardOutput)"
        )
    }

    @Test func theEmbeddedPollIsTheFixture() throws {
        let fixture = try String(contentsOfFile: CommandRunner.repositoryRoot + "/fixtures/poll.json", encoding: .utf8)
        #expect(RunJob.poll == fixture.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    @Test func badOptionsAreUsageErrors() throws {
        for arguments in [
            ["run", "--verbose", "--count", "0"], ["run", "--verbose", "--connections", "0"],
            ["run", "--verbose", "--streams", "-1"],
            ["run", "--verbose", "--timeout", "soon"], ["run", "--verbose", "--attempts", "0"],
            ["run", "--verbose", "--repeat", "0"],
            ["run", "--verbose", "--shard", "4/3"], ["run", "--verbose", "--rate", "-5"],
        ] {
            let result = try CommandRunner.run(arguments)
            #expect(result.status == 64, "\(arguments)")
        }
    }
}

/// The open model, validity and the progress line through `fanout run`.
@Suite(.serialized) struct RunLoadModelCommandTests {
    /// A run of 1.5 s (3,000 at 2,000/s) writes its completions in 100 ms bins, and report.html
    /// draws them: a bar a bin, whose figures on hover add up to every notification, as the
    /// bins in summary.json do.
    @Test func aShortRunsReportDrawsHundredMillisecondBins() throws {
        let folder = NSTemporaryDirectory() + "fanout-fine-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let result = try CommandRunner.run(
            ["run", "--verbose", "--count", "3000", "--rate", "2000/s", "--output", folder],
            timeout: .seconds(120)
        )
        // The bins are the subject, not the pace: 0, or 4 for a generator a loaded machine held back.
        try expectValidOrLagged(
            status: result.status,
            folder: folder,
            "\(result.standardOutput)\(result.standardError)"
        )
        let summary = try CommandRunner.summary(in: folder)
        #expect(summary.sent == 3000)
        let fine = try #require(summary.fineIntervals, "a run of \(summary.elapsedSeconds) s")
        #expect(fine.binMilliseconds == 100)
        #expect(fine.completed.reduce(0, +) == 3000, "\(fine.completed)")
        #expect(fine.completed.count >= Int((summary.elapsedSeconds * 10).rounded(.up)), "\(summary.elapsedSeconds) s")
        let html = try String(contentsOfFile: folder + "/report.html", encoding: .utf8)
        #expect(HTMLDocument(html).count("h2", text: "Offered and achieved per second, in 100 ms bins") == 1)
        #expect(html.components(separatedBy: "<rect class=\"achieved fine\"").count - 1 == fine.completed.count)
        let hovered = html.matches(of: /<title>[0-9.]+–[0-9.]+ s(?: \(the last bin\))?: ([0-9,]+) finished/).map {
            Int($0.output.1.replacingOccurrences(of: ",", with: ""))!
        }
        #expect(hovered == fine.completed)
    }

    @Test func anOpenModelRunRecordsItsScheduleLagAndSeconds() throws {
        let folder = NSTemporaryDirectory() + "fanout-open-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let result = try CommandRunner.run(
            [
                "run", "--verbose", "--rate", "2000/s", "--duration", "2s", "--max-lag", "1s", "--timeout", "5s",
                "--attempts", "4",
                "--output", folder,
            ],
            timeout: .seconds(120)
        )
        #expect(result.status == 0, "\(result.standardOutput)\(result.standardError)")
        // Standard error is not a terminal here: no progress line, nothing at all.
        #expect(result.standardError.isEmpty, "\(result.standardError)")
        let summary = try CommandRunner.summary(in: folder)
        let counts = result.standardOutput.split(separator: "\n").first.map(String.init) ?? ""
        let said = counts.wholeMatch(
            of:
                #/([0-9,]+) notifications to (.+) in ([0-9.]+) s over ([0-9]+) connections? × ([0-9]+) streams: ([0-9,]+) notifications\/s/#
        )
        #expect(said?.1 == "4,000" && said?.2 == summary.endpoint[...], "\(counts)")
        #expect(said.flatMap { Double($0.3) }.map { abs($0 - summary.elapsedSeconds) <= 0.005 } == true, "\(counts)")
        #expect(
            said.flatMap { Int($0.6.replacing(",", with: "")) }
                == summary.throughputPerSecond.map { Int($0.rounded()) },
            "\(counts)"
        )
        let lagSaid = openModelLag(in: result.standardOutput, schedule: "2000/s for 2.0 seconds", limit: "1000.0")
        #expect(
            lagSaid.map { abs($0 - (summary.generatorLag?.max ?? -1)) <= 0.05 + 1e-9 } == true,
            "\(result.standardOutput)"
        )
        #expect(summary.model == .open)
        #expect(summary.sent == 4000)
        let configuration = summary.configuration
        #expect(configuration.streamTimeoutSeconds == 5)
        #expect(configuration.maxAttempts == 4)
        #expect(configuration.schedule == "2000/s for 2.0 seconds")
        #expect(summary.valid == true)
        #expect(summary.invalidity.isEmpty)
        let schedule = try #require(summary.schedule)
        #expect(schedule.planned == 4000)
        let lag = try #require(summary.generatorLag)
        #expect(lag.limit == 1000)
        let intervals = summary.intervals
        #expect(intervals.count >= 2)
        #expect(intervals.map(\.completed).reduce(0, +) == 4000)
        for interval in try SummaryKeyNames(in: folder).intervals {
            for key in ["second", "completed", "latency_count", "p50_ms", "p90_ms", "p99_ms", "max_ms", "max_lag_ms"] {
                #expect(interval.names.contains(key), "\(key) missing from \(interval)")
            }
        }
    }

    @Test func aRunWhoseGeneratorFellBehindIsInvalidWithExitStatus4() throws {
        let folder = NSTemporaryDirectory() + "fanout-invalid-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        // The generator sends on a 1 ms tick: some notification always leaves more than 1 µs
        // after its due time.
        let result = try CommandRunner.run(
            ["run", "--verbose", "--rate", "1000", "--duration", "1s", "--max-lag", "1us", "--output", folder],
            timeout: .seconds(120)
        )
        #expect(result.status == 4, "\(result.standardOutput)\(result.standardError)")
        let summary = try CommandRunner.summary(in: folder)
        #expect(summary.valid == false)
        #expect(summary.invalidity.first?.isGeneratorBehind == true, "\(summary.invalidity)")
        #expect(
            lines(of: result.standardOutput, keyed: "INVALID: ") == summary.invalidity.map { "INVALID: \($0)" },
            "\(result.standardOutput)"
        )
    }

    @Test(.requires(.python3)) func aTerminalShowsTheProgressLine() throws {
        let folder = NSTemporaryDirectory() + "fanout-progress-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [
            "python3", CommandRunner.repositoryRoot + "/Tests/FanoutCommandTests/Peers/in_terminal.py", "120",
            CommandRunner.executable.path, "run", "--rate", "2000", "--duration", "3s", "--max-lag", "1s",
            "--output", folder,
        ]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let written = String(decoding: data, as: UTF8.self)
        #expect(process.terminationStatus == 0, "\(written)")
        // Redrawn in place (carriage return, erase line) about once a second: elapsed time,
        // rate, done of total with its share, the errors so far (none from this sink), p99 so
        // far and the time left.
        let lines = written.components(separatedBy: "\r\u{1B}[K").dropFirst()
        #expect(lines.count >= 2, "\(written.debugDescription)")
        let first = try #require(lines.first)
        // The whole line, its figures as numbers: the ETA is the time left at the rate so far.
        let shape =
            #/(\d+\.\d) s  ([\d,]+)\/s  ([\d,]+) \/ 6,000 \((\d+\.\d)%\)  errors 0(?:  p99 \d+\.\d\d ms)?  ETA (\d+\.\d) s/#
        let progress = try #require(first.wholeMatch(of: shape), "\(first.debugDescription)")
        let rate = Double(progress.2.replacing(",", with: ""))!
        let done = Double(progress.3.replacing(",", with: ""))!
        #expect(rate > 0 && done < 6000, "\(first.debugDescription)")
        // The ETA is printed to a tenth (±0.05 s) and worked out from the exact rate, which is
        // printed to a whole send a second (±0.5/s): that half moves the ETA by up to
        // left × 0.5 / rate² (0.0012 s once, on a busy host, when the first second's rate was
        // low: 0.0512 s apart in all, over the 0.05 the check allowed alone).
        let left = 6000 - done
        #expect(
            abs(Double(progress.5)! - left / rate) <= 0.05 + left * 0.5 / (rate * (rate - 0.5)) + 1e-9,
            "\(first.debugDescription)"
        )
        // The line is cleared before the summary: the last redraw's text is the summary's first line.
        let summaryLine = lines.last?.components(separatedBy: "\r\n").first ?? ""
        #expect(
            summaryLine.wholeMatch(
                of:
                    #/6,000 notifications to the embedded sink at http:\/\/127\.0\.0\.1:\d+ in [0-9.]+ s over \d+ connections? × \d+ streams: [0-9,]+ notifications\/s/#
            ) != nil,
            "\(written.debugDescription)"
        )
    }

    /// A job is built once, in `run()`; what it refuses there is a usage error with the
    /// subcommand's own usage, as one `validate()` refuses is.
    static let subcommands: [String: any ParsableCommand.Type] = [
        "fanout run": RunCommand.self, "fanout plan": PlanCommand.self, "fanout search": SearchCommand.self,
    ]

    @Test(arguments: [
        (["run", "--verbose", "--timeout", "0s"], "fanout run"),
        (["plan", "--devices", "1M", "--deadline", "60s", "--rtt", "50ms", "--headroom", "150%"], "fanout plan"),
        (["search", "--slo", "p99 < 1s", "--from", "0"], "fanout search"),
    ])
    func aJobRefusedInRunShowsItsSubcommandsUsage(arguments: [String], path: String) throws {
        let result = try CommandRunner.run(arguments)
        #expect(result.status == 64, "\(result.standardError)")
        // The error line, then the subcommand's own usage and where its help is: nothing else.
        let command = try #require(Self.subcommands[path])
        let error = try #require(errorLine(of: result.standardError), "\(result.standardError)")
        #expect(
            result.standardError
                == error
                + "\nUsage: \(Fanout.usageString(for: command))\n  See '\(path) --help' for more information.\n",
            "\(result.standardError)"
        )
    }
}

/// The key names summary.json writes where the names themselves are under test: its latency
/// figures' and each interval's.
private struct SummaryKeyNames: Decodable {
    var latency: JSONKeys
    var intervals: [JSONKeys]

    enum CodingKeys: String, CodingKey {
        case latency = "latency_ms"
        case intervals
    }

    init(in folder: String) throws {
        self = try JSONDecoder().decode(
            Self.self,
            from: Data(contentsOf: URL(fileURLWithPath: folder + "/summary.json"))
        )
    }
}
