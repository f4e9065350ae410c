import FanoutClient
import FanoutFiles
import FanoutNotation
import FanoutResults
import FanoutRun
import FanoutTestSupport
import Foundation
import Testing

/// `--abort-on`: a send against a sink that stalls stops within seconds of the stall, writes its
/// folder marked aborted and exits 6; `fanout gate` fails it naming the abort; the same run
/// without `--abort-on` runs its whole duration.
@Suite struct AbortOnTests {
    static func folder() throws -> String {
        let folder = NSTemporaryDirectory() + "fanout-abort-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        return folder
    }

    /// A sink that holds every answer due 10 s to 19 s after a connection opens until 19 s:
    /// the first 10 s are answered at once, then nothing is for 9 s.
    static func stallingSink() throws -> (sink: PeerProcess, port: Int) {
        try CommandRunner.sink(["--no-auth", "--stall", "10s/9s"])
    }

    /// `fanout send` with `arguments` to a stalling sink of its own, into `folder/run`.
    static func sendToAStallingSink(_ arguments: [String], into folder: String) throws -> CommandRunner.Result {
        let (sink, port) = try stallingSink()
        defer { sink.stop() }
        return try CommandRunner.send(to: port, arguments + ["--output", folder + "/run"], timeout: .seconds(60))
    }

    /// The case, 5,000/s for 60 s with `--abort-after 5s`, on a limit only the stall
    /// can reach: `--abort-on 'p99 > 2s'` (the 200 ms is within what a loaded machine's
    /// scheduling adds to a debug build's latency, and once aborted such a run 3 s in, before
    /// the stall). The stall begins at 10 s; the notifications sent from 10 s on are unanswered
    /// 3 s later (the look-back of a 2 s limit, ⌈2⌉ + 1 s), so the run is judged over the limit
    /// at 13 or 14 s and ends soon after — long before its 60 s.
    @Test(.requires(.jsonschema)) func aStalledSinkAbortsTheRunWithinSecondsAndTheGateNamesIt() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let result = try Self.sendToAStallingSink(
            [
                "--generate", "400000", "--rate", "5000/s", "--duration", "60s", "--abort-on", "p99 > 2s",
                "--abort-after", "5s",
            ],
            into: folder
        )
        #expect(result.status == 6, "\(result.standardError)")
        let summary = try CommandRunner.summary(in: folder + "/run")
        let aborted = try #require(summary.aborted, "\(result.standardOutput)")
        #expect(aborted.condition == "p99 > 2s")
        #expect(aborted.windowSeconds == 10)
        #expect(aborted.unit == "ms")
        if summary.valid {
            // Judged once the stall's first notifications had been unanswered for 3 s: after
            // 13 s, and within the stall (the counts the connections hand over lag a second at
            // most; a loaded machine's judging, a few more).
            #expect(aborted.afterSeconds >= 10 && aborted.afterSeconds <= 19, "\(aborted)")
            #expect((aborted.unanswered ?? 0) > 0 && aborted.unansweredAfterSeconds == 3, "\(aborted)")
        } else {
            // Two busy loops beside a debug build: the generator fell behind its 5,000/s, and
            // its lateness, which the latencies count, can pass 2 s before the stall does. The
            // run says so, and the abort is the load's (seen under `yes` twice: at 8 s, nothing
            // unanswered).
            #expect(summary.isInvalidOnlyByGeneratorLag, "\(summary.invalidity)")
        }
        #expect(aborted.measured > 2000)
        // It drained (half a second on an idle machine) and stopped: not the 60 s asked for.
        #expect(summary.elapsedSeconds < aborted.afterSeconds + 5, "elapsed \(summary.elapsedSeconds)")
        #expect(summary.cancelled)
        #expect(
            lines(of: result.standardOutput, keyed: "ABORTED") == ["ABORTED: " + aborted.line],
            "\(result.standardOutput)"
        )
        let markdown = MarkdownDocument(try String(contentsOfFile: folder + "/run/summary.md", encoding: .utf8))
        #expect(markdown.items.count { $0 == "⛔ **\(aborted.line)**" } == 1, "\(markdown)")
        let schema = try SummarySchemaCheck.validate([folder + "/run/summary.json"])
        #expect(schema.status == 0, "\(schema.output)")

        // The gate fails it (1, not invalid's 2) and says why, whatever its thresholds — unless
        // a loaded machine made the generator fall behind its 5,000/s, when the run says it is
        // invalid for that alone and the gate calls it invalid (2), the abort still named.
        let gate = try CommandRunner.run(["gate", folder + "/run", "--threshold", "p99 < 1s"])
        #expect(
            lines(of: gate.standardOutput, keyed: "ABORTED") == ["ABORTED " + aborted.line],
            "\(gate.standardOutput)"
        )
        if summary.valid {
            #expect(gate.status == 1, "\(gate.standardOutput)")
            #expect(lines(of: gate.standardOutput, keyed: "INVALID").isEmpty, "\(gate.standardOutput)")
            #expect(
                lines(of: gate.standardOutput, keyed: "gate: ") == ["gate: FAILED (the run was aborted)"],
                "\(gate.standardOutput)"
            )
        } else {
            #expect(summary.isInvalidOnlyByGeneratorLag, "\(summary.invalidity)")
            #expect(gate.status == 2, "\(gate.standardOutput)")
        }
    }

    /// The same stall without `--abort-on` (shortened to 13 s): the run goes to its end and is
    /// not marked aborted; its stalled notifications are answered late, at 19 s.
    @Test func withoutAbortOnTheSameStallRunsItsWholeDuration() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let result = try Self.sendToAStallingSink(
            ["--generate", "100000", "--rate", "5000/s", "--duration", "13s"],
            into: folder
        )
        #expect(result.status != 6, "\(result.standardError)")
        let summary = try CommandRunner.summary(in: folder + "/run")
        #expect(summary.aborted == nil)
        #expect(summary.elapsedSeconds >= 13, "elapsed \(summary.elapsedSeconds)")
        if summary.valid {
            #expect(summary.sent >= 60_000, "sent \(summary.sent)")
        } else {
            // A loaded machine's debug sender could not keep 5,000/s (54,705 sent under two busy
            // loops) or drain the stall's backlog within --max-backlog: the run says so.
            #expect(summary.isInvalidOnlyByThePace, "\(summary.invalidity)")
        }
    }

    /// A condition the run cannot judge while it goes is refused before it starts, saying why.
    @Test(arguments: [
        ("delivered > 1", "known only when the run has ended"),
        ("p99 > baseline + 10%", "no baseline"),
        ("p99 > soon", "is not a number with a unit"),
    ])
    func conditionsARunCannotJudgeAreRefused(condition: String, words: String) throws {
        let result = try CommandRunner.run([
            "run", "--verbose", "--rate", "100", "--duration", "1s", "--abort-on", condition,
        ])
        #expect(result.status == 64, "\(result.standardOutput)")
        // The whole line: the option, the condition, and the condition's own refusal.
        var refusal = ""
        do { _ = try AbortCondition(parsing: condition) } catch { refusal = error.description }
        #expect(
            errorLine(of: result.standardError) == "error: --abort-on \(TextLines.quoted(condition)): \(refusal)",
            "\(result.standardError)"
        )
        #expect(result.standardError.contains(words), "\(result.standardError)")
    }
}
