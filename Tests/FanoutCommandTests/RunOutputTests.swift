import FanoutTestSupport
import Foundation
import Testing

/// Nothing a run measures is lost, and no folder is read as a run it does not hold: `--output`
/// is checked and locked before any traffic (`RunOutput`), every file written on the side is
/// checked, and a merge never writes over its own input.
@Suite(.serialized) struct RunOutputTests {
    static func folder() throws -> String {
        let folder = NSTemporaryDirectory() + "fanout-output-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        return folder
    }

    /// Case 3 of issue #48: `--repeat` into a folder holding an older summary.json, which the
    /// gate then read as this run's and passed. The folder is refused before any traffic, and a
    /// folder holding both a summary and repeats is refused by the gate.
    @Test func aFolderHoldingAnEarlierRunIsRefusedBeforeAnyTraffic() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let first = try CommandRunner.run(["run", "--verbose", "--count", "200", "--output", folder + "/a"])
        try #require(first.status == 0, "\(first.standardError)")
        let earlier = try Data(contentsOf: URL(fileURLWithPath: folder + "/a/summary.json"))
        let lock = try Data(contentsOf: URL(fileURLWithPath: folder + "/a/.lock"))
        let again = try CommandRunner.run([
            "run", "--verbose", "--count", "200", "--repeat", "2", "--output", folder + "/a",
        ])
        #expect(again.status == 1)
        #expect(
            errorLine(of: again.standardError)
                == "error: --output \(folder)/a: holds an earlier run's results (latency.hgrm, latency.hlog, report.html, "
                + "summary.json, summary.md): give a new folder, or remove them first (a gate must never read them as "
                + "this run's)",
            "\(again.standardError)"
        )
        #expect(again.standardOutput.isEmpty, "no traffic: \(again.standardOutput)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: folder + "/a/summary.json")) == earlier)
        #expect(!FileManager.default.fileExists(atPath: folder + "/a/repeat-1"))
        // Its .lock still names the run that wrote the folder, not the one refused.
        #expect(try Data(contentsOf: URL(fileURLWithPath: folder + "/a/.lock")) == lock)

        // Files that are not a run's (a thresholds file) do not stand in the way.
        try FileManager.default.createDirectory(atPath: folder + "/b", withIntermediateDirectories: true)
        try Data("p99 < 1s\n".utf8).write(to: URL(fileURLWithPath: folder + "/b/thresholds.txt"))
        let beside = try CommandRunner.run(["run", "--verbose", "--count", "200", "--output", folder + "/b"])
        #expect(beside.status == 0, "\(beside.standardError)")

        // A folder that holds both (made by hand): the gate cannot tell which is the run.
        try FileManager.default.copyItem(atPath: folder + "/b", toPath: folder + "/a/repeat-1")
        let gate = try CommandRunner.run(["gate", folder + "/a", "--threshold", "errors == 0"])
        #expect(gate.status == 64, "\(gate.standardOutput)")
        #expect(
            errorLine(of: gate.standardError)
                == "error: \(folder)/a holds both a summary.json and repeats (repeat-*/ or repeats.json): the results of two "
                + "runs, and which is which cannot be told; give the folder of one",
            "\(gate.standardError)"
        )
    }

    /// Case 12: an --output that is a file or cannot be made was found out after the whole send.
    @Test func anOutputThatCannotBeWrittenIsFoundOutFirst() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try Data("notes\n".utf8).write(to: URL(fileURLWithPath: folder + "/file"))
        for (output, words) in [
            (folder + "/file", "--output \(folder)/file: a file, not a folder"),
            ("/proc/fanout-cannot", "cannot write --output /proc/fanout-cannot"),
        ] {
            let result = try CommandRunner.run(["run", "--verbose", "--count", "100000", "--output", output])
            #expect(result.status == 1, "\(output)")
            #expect(result.standardError.contains(words), "\(result.standardError)")
            #expect(result.standardOutput.isEmpty, "no traffic: \(result.standardOutput)")
        }
        #expect(try String(contentsOfFile: folder + "/file", encoding: .utf8) == "notes\n")
        // Issue 61, review: an empty --output said "cannot write the --output folder : no such file".
        for command in [["run", "--verbose", "--count", "100"], ["sink", "--duration", "1s"]] {
            let empty = try CommandRunner.run(command + ["--output", ""])
            #expect(empty.status == 1, "\(command)")
            #expect(
                empty.standardError == "error: --output: empty: name the folder for the results\n",
                "\(empty.standardError)"
            )
            #expect(empty.standardOutput.isEmpty, "no traffic: \(empty.standardOutput)")
        }
    }

    /// Case 12: two runs into one --output both exited 0, the last writer winning. The second
    /// is refused at once, naming the first.
    @Test func aSecondRunIntoAFolderInUseIsRefusedNamingTheFirst() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let first = try PeerProcess(
            CommandRunner.executable.path,
            ["run", "--verbose", "--rate", "500", "--duration", "20s", "--output", folder + "/run"],
            directory: CommandRunner.repositoryRoot
        )
        defer { first.stop() }
        let took = poll(timeout: .seconds(30)) {
            (try? String(contentsOfFile: folder + "/run/.lock", encoding: .utf8)) == "\(first.processIdentifier)\n"
        }
        try #require(took, "the first run never took its folder")
        let second = try CommandRunner.run(["run", "--verbose", "--count", "100", "--output", folder + "/run"])
        #expect(second.status == 1)
        #expect(
            second.standardError.contains(
                "--output \(folder)/run: in use by another run (pid \(first.processIdentifier))"
            ),
            "\(second.standardError)"
        )
        first.interrupt()
        let ended = try first.wait(timeout: .seconds(20))
        #expect(ended.status == 130, "\(ended.errors)")
        // The folder is the first run's alone.
        let summary = try CommandRunner.summary(in: folder + "/run")
        #expect(summary.configuration.schedule != nil)
    }

    /// The same holds for `fanout sink --output`: a second sink into the folder of one that is
    /// running is refused before it listens.
    @Test func aSecondSinkIntoAFolderInUseIsRefused() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let (first, _) = try CommandRunner.sink(["--no-auth", "--output", folder + "/provider"])
        defer { first.stop() }
        let second = try CommandRunner.run([
            "sink", "--listen", "127.0.0.1:0", "--no-auth", "--output", folder + "/provider", "--duration", "1s",
        ])
        #expect(second.status == 1)
        #expect(
            second.standardError.contains(
                "--output \(folder)/provider: in use by another run (pid \(first.processIdentifier))"
            ),
            "\(second.standardError)"
        )
        #expect(second.standardOutput.isEmpty, "\(second.standardOutput)")
    }

    /// Case 12: `fanout merge s1 s2 --output s1` wrote over its own input.
    @Test func aMergeRefusesToWriteOverOneOfItsShards() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        for index in 1...2 {
            let shard = try CommandRunner.run([
                "run", "--verbose", "--count", "200", "--shard", "\(index)/2", "--output", folder + "/s\(index)",
            ])
            try #require(shard.status == 0, "\(shard.standardError)")
        }
        let before = try Data(contentsOf: URL(fileURLWithPath: folder + "/s1/summary.json"))
        let merge = try CommandRunner.run([
            "merge", folder + "/s1", folder + "/s2", "--output", folder + "/s1/../s1", "--max-skew", "1h",
        ])
        #expect(merge.status == 64, "\(merge.standardOutput)")
        #expect(
            errorLine(of: merge.standardError)
                == "error: --output \(folder)/s1/../s1: also an input of this command (\(folder)/s1): the results would "
                + "overwrite it",
            "\(merge.standardError)"
        )
        #expect(try Data(contentsOf: URL(fileURLWithPath: folder + "/s1/summary.json")) == before)
    }

    /// Case 12: `--gone-tokens /dev/full` exited 0 with the list lost. The run is held invalid
    /// with the path, and exits 4.
    @Test func goneTokensThatCannotBeWrittenFailTheRunWithThePath() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let (sink, port) = try CommandRunner.sink(["--no-auth", "--error", "Unregistered:50%"])
        defer { sink.stop() }
        let result = try CommandRunner.send(
            to: port,
            ["--generate", "500", "--gone-tokens", "/dev/full", "--output", folder + "/run"]
        )
        #expect(result.status == 4, "\(result.standardError)")
        let summary = try CommandRunner.summary(in: folder + "/run")
        let reasons = summary.invalidity
        #expect(
            reasons.contains {
                guard case .listIncomplete("--gone-tokens", let failure) = $0 else { return false }
                return failure.hasPrefix("/dev/full: cannot write: No space left on device")
            },
            "\(reasons)"
        )
        #expect(
            lines(of: result.standardOutput, keyed: "INVALID: ") == reasons.map { "INVALID: \($0)" },
            "\(result.standardOutput)"
        )
    }

    /// Case 12: `--rejects /dev/full` on a send ended it with an error and no folder (the run's
    /// figures gone). Every token is sent, the folder is written, and the run is held invalid
    /// with the path of the list it lost.
    @Test func rejectsThatCannotBeWrittenFailTheRunWithThePath() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let token = String(repeating: "ab", count: 32)
        try Data("\(token)\nnot-a-token\n\(String(repeating: "cd", count: 32))\n".utf8)
            .write(to: URL(fileURLWithPath: folder + "/tokens.txt"))
        let (sink, port) = try CommandRunner.sink(["--no-auth"])
        defer { sink.stop() }
        let result = try CommandRunner.send(
            to: port,
            [
                "--tokens", folder + "/tokens.txt", "--skip-invalid", "--rejects", "/dev/full", "--output",
                folder + "/run",
            ]
        )
        #expect(result.status == 4, "\(result.standardError)")
        let summary = try CommandRunner.summary(in: folder + "/run")
        #expect(summary.accepted == 2)
        let reasons = summary.invalidity
        #expect(
            reasons.contains(
                .listIncomplete(option: "--rejects", failure: "/dev/full: cannot write: No space left on device")
            ),
            "\(reasons)"
        )
    }
}
