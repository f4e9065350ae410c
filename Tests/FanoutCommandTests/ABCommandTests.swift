import FanoutNotation
import FanoutRun
import FanoutTestSupport
import Foundation
import Testing

/// `fanout ab` with this build on both sides, on runs small enough for a debug build: the
/// pairs it runs and keeps, the order swapped each pair, a table whose verdict matches the exit
/// status. Whether a planted slowdown is caught is timing, measured in release (docs/reports.md).
@Suite struct ABCommandTests {
    @Test func pairsRunAlternatelyIntoTheirFoldersAndTheVerdictIsTheExitStatus() throws {
        let folder = NSTemporaryDirectory() + "fanout-ab-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let fanout = CommandRunner.executable.path
        let result = try CommandRunner.run(
            ["ab", fanout, fanout, "--repeat", "2", "--output", folder, "--", "run", "--count", "2000"],
            timeout: .seconds(240)
        )
        // Two pairs cannot measure the noise: no verdict, whatever the runs measured; said first.
        #expect(result.status == 0, "\(result.standardError)")
        #expect(
            result.standardError.split(separator: "\n").first
                == "warning: --repeat 2: 2 pairs cannot measure the noise, so no verdict will be given (at least 3 can; 5 or more narrow the interval)"
        )
        let expected =
            "ab: noise unknown: 2 pairs cannot tell a difference from the noise (at least 3 can; 5 or more narrow the interval)"
        #expect(lines(of: result.standardOutput, keyed: "ab: ") == [expected], "\(result.standardOutput)")
        // A row a metric: the medians, their ratio and interval, and no verdict but the noise's.
        let rows = textRows(result.standardOutput)
        for metric in ["throughput", "p50", "p99"] {
            #expect(rows[metric]?.count == 6 && rows[metric]?.last == "noise unknown", "\(result.standardOutput)")
        }
        #expect(rows["errors"] == ["errors", "0", "0", "—", "—", "within noise"], "\(result.standardOutput)")
        var started: [String: Date] = [:]
        for run in ["pair-1/a", "pair-1/b", "pair-2/a", "pair-2/b"] {
            let summary = try CommandRunner.summary(in: folder + "/" + run)
            #expect(summary.sent == 2000, "\(run)")
            started[run] = summary.started
        }
        // A then B in the first pair, B then A in the second: the four one after another. The
        // start times are to the millisecond and a run of 2,000 takes longer than that, so each
        // starts strictly after the one before.
        #expect(started.count == 4, "\(started)")
        let order = ["pair-1/a", "pair-1/b", "pair-2/b", "pair-2/a"]
        let times = order.map { started[$0] ?? .distantFuture }
        #expect(zip(times, times.dropFirst()).allSatisfy { $0 < $1 }, "\(zip(order, times).map { "\($0) \($1)" })")
        let table = try String(contentsOfFile: folder + "/ab.txt", encoding: .utf8)
        #expect(lines(of: table, keyed: "ab: ") == [expected], "\(table)")
        // Into the same folder again: refused before either build runs, the pairs untouched.
        let again = try CommandRunner.run(
            ["ab", fanout, fanout, "--repeat", "2", "--output", folder, "--", "run", "--count", "2000"],
            timeout: .seconds(60)
        )
        #expect(again.status == 1, "\(again.standardError)")
        #expect(ABJob.earlierResults(in: folder) == ["ab.txt", "pair-1", "pair-2"])
        #expect(
            again.standardError
                == "error: --output \(folder): holds earlier results (ab.txt, pair-1, pair-2): give a new folder, or remove them first\n",
            "\(again.standardError)"
        )
        #expect(try CommandRunner.summary(in: folder + "/pair-1/a").started == started["pair-1/a"])
        // Into a run's folder: refused too (a search's or a run's files are not ab's to mix with).
        let run = try CommandRunner.run(
            ["ab", fanout, fanout, "--repeat", "2", "--output", folder + "/pair-1/a", "--", "run", "--count", "2000"],
            timeout: .seconds(60)
        )
        #expect(run.status == 1, "\(run.standardError)")
        let found = ABJob.earlierResults(in: folder + "/pair-1/a")
        #expect(!found.isEmpty)
        #expect(
            run.standardError
                == "error: --output \(folder)/pair-1/a: holds earlier results (\(found.joined(separator: ", "))): give a new folder, or remove them first\n",
            "\(run.standardError)"
        )
    }

    static let stdinTokens =
        "error: --tokens - reads standard input, which only the first of ab's runs would see: give a token file."
    static let ownOptions =
        "error: ab gives each run its --output and runs the pairs itself: leave out --output and --repeat."

    /// Each refused before any run, its first line whole. `--repeat=2` and `--output=x` got
    /// through the check for `--repeat 2`, and `--tokens -` fed the first run only (issue 61,
    /// review).
    @Test(arguments: [
        (["--", "gate", "x"], "error: After -- comes what both builds run: run … or send …."),
        (["--", "run", "--output", "x"], ownOptions),
        (["--", "run", "--output=x"], ownOptions),
        (["--", "run", "--repeat", "2"], ownOptions),
        (["--", "run", "--repeat=2"], ownOptions),
        (
            ["--metric", "speed", "--", "run"],
            "error: The value 'speed' is invalid for '--metric <metric>'. Please provide one of the following:"
        ),
        (
            ["--min-effect", "150%", "--", "run"],
            "error: --min-effect is a share from 0% to below 100%, like 5%; not 150%."
        ),
        (["--", "send", "--tokens", "-"], stdinTokens),
        (["--", "send", "--tokens=-"], stdinTokens),
        (["--", "send", "--tokens", "a.txt", "--tokens", "-"], stdinTokens),
    ])
    func badInputIsAUsageError(arguments: [String], message: String) throws {
        let fanout = CommandRunner.executable.path
        let result = try CommandRunner.run(["ab", fanout, fanout] + arguments)
        #expect(result.status == 64, "\(result.standardError)")
        #expect(
            result.standardError.split(separator: "\n").first.map(String.init) == message,
            "\(result.standardError)"
        )
    }

    @Test func aBuildThatIsNotThereIsSaid() throws {
        let result = try CommandRunner.run(["ab", "/nonexistent/fanout", CommandRunner.executable.path, "--", "run"])
        #expect(result.status == 1)
        #expect(
            errorLine(of: result.standardError) == "error: /nonexistent/fanout: not an executable (a fanout build)",
            "\(result.standardError)"
        )
    }

    /// Review of issue 61: a build that is a wrapper script (`sleep 1000` after `#!/bin/sh`)
    /// outliving --run-timeout was stopped and its `sleep` not, and ab never returned. Now the
    /// run's process group is stopped whole and ab says so.
    @Test func aRunPastItsTimeoutIsStoppedWithWhatItStarted() throws {
        let folder = NSTemporaryDirectory() + "fanout-ab-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let wrapper = folder + "/w.sh"
        try Data("#!/bin/sh\nsleep 1000 &\necho $! > \(folder)/sleep.pid\nwait\n".utf8)
            .write(to: URL(fileURLWithPath: wrapper))
        chmod(wrapper, 0o755)
        let result = try CommandRunner.run(
            ["ab", wrapper, wrapper, "--repeat", "3", "--run-timeout", "1s", "--output", folder + "/ab", "--", "run"],
            timeout: .seconds(60)
        )
        #expect(result.status == 1, "\(result.standardError)")
        #expect(
            result.standardError == "error: \(wrapper): took longer than 1.0 seconds (\(folder)/ab/pair-1/a.log)\n"
        )
        let sleeper = try #require(processID(writtenTo: folder + "/sleep.pid"))
        poll(timeout: .seconds(10)) { processEnded(sleeper) }
        #expect(processEnded(sleeper), "the wrapper's sleep \(sleeper) outlived ab")
        #expect(
            try String(contentsOfFile: folder + "/ab/ab.txt", encoding: .utf8)
                == "ab: no verdict: stopped at pair 1 of 3, A: \(wrapper): took longer than 1.0 seconds (\(folder)/ab/pair-1/a.log)\n"
        )
    }

    /// A stop signal reaches the run going on (in a group of its own, it would not get a
    /// terminal's Ctrl-C): it writes its folder marked interrupted, and ab ends 130 with no
    /// verdict, no run left behind.
    @Test func aStopSignalIsPassedToTheRunAndEndsWithoutAVerdict() throws {
        let folder = NSTemporaryDirectory() + "fanout-ab-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let fanout = CommandRunner.executable.path
        let ab = try PeerProcess(
            fanout,
            [
                "ab", fanout, fanout, "--repeat", "3", "--output", folder, "--", "run", "--rate", "200", "--duration",
                "120s",
            ]
        )
        defer { ab.stop() }
        // The run watches its stop signals once it catches SIGINT (its dispatch source does).
        var run: pid_t?
        poll(timeout: .seconds(60), every: .milliseconds(20)) {
            run = Self.process(withArgument: folder + "/pair-1/a")
            return run.map(Self.catchesSIGINT) ?? false
        }
        let child = try #require(run)
        ab.interrupt()
        let result = try ab.wait(timeout: .seconds(60))
        #expect(result.status == 130, "\(result.errors)")
        #expect(
            result.errors == "stopped by SIGINT during pair 1, A (its run: \(folder)/pair-1/a): no verdict\n",
            "\(result.errors)"
        )
        #expect(processEnded(child))
        let summary = try CommandRunner.summary(in: folder + "/pair-1/a")
        #expect(summary.valid == false)
        #expect(!FileManager.default.fileExists(atPath: folder + "/pair-1/b"))
        // The folder says it too (review of issue 61: a job stopped early left no ab.txt).
        #expect(
            try String(contentsOfFile: folder + "/ab.txt", encoding: .utf8)
                == "ab: no verdict: stopped at pair 1 of 3, A: stopped by SIGINT during pair 1, A (its run: \(folder)/pair-1/a): no verdict\n"
        )
    }

    /// A process one of whose arguments is `argument`.
    static func process(withArgument argument: String) -> pid_t? {
        let ids = ((try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []).compactMap { pid_t($0) }
        return ids.first { id in
            guard let line = FileManager.default.contents(atPath: "/proc/\(id)/cmdline") else { return false }
            return line.split(separator: 0).contains { String(decoding: $0, as: UTF8.self) == argument }
        }
    }

    /// Whether process `id` catches SIGINT (`SigCgt` in /proc/ID/status, bit 1).
    static func catchesSIGINT(_ id: pid_t) -> Bool {
        guard let status = try? String(contentsOfFile: "/proc/\(id)/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("SigCgt:") }),
            let mask = UInt64(line.dropFirst("SigCgt:".count).trimmingCharacters(in: .whitespaces), radix: 16)
        else { return false }
        return mask & (1 << (SIGINT - 1)) != 0
    }
}
