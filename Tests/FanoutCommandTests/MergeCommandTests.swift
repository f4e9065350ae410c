import FanoutAPNs
import FanoutNotation
import FanoutPush
import FanoutResults
import FanoutTestSupport
import Foundation
import Testing

/// `fanout merge` on the shards of a run: histograms add exactly (checked by HdrHistogram's
/// Python reader), counts sum, and the digest and reconciliation are a single run's.
@Suite(.serialized) struct MergeCommandTests {
    @Test(.requires(.hdrh)) func theShardsOfARunMergeIntoTheRun() throws {
        let folder = NSTemporaryDirectory() + "fanout-merge-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        for index in 1...3 {
            let shard = try CommandRunner.run(
                [
                    "run", "--count", "6000", "--seed", "9", "--shard", "\(index)/3", "--streams", "100", "--output",
                    "\(folder)/shard-\(index)",
                ],
                timeout: .seconds(120)
            )
            try #require(shard.status == 0, "\(shard.standardOutput)\(shard.standardError)")
        }
        let single = try CommandRunner.run(
            ["run", "--count", "6000", "--seed", "9", "--streams", "100", "--output", folder + "/single"],
            timeout: .seconds(120)
        )
        try #require(single.status == 0, "\(single.standardError)")
        let shards = (1...3).map { "\(folder)/shard-\($0)" }
        // They ran one after another, not as one test: refused for their start skew…
        let refused = try CommandRunner.run(["merge"] + shards + ["--output", folder + "/refused"])
        #expect(refused.status == 2, "\(refused.standardOutput)\(refused.standardError)")
        #expect(
            refused.standardOutput.contains(
                /REFUSED: the shards began [0-9.]+ ms apart \(their first sends\), more than --max-skew allows \(100.0 ms\)/
            )
        )
        // …unless the skew allowed is wider.
        let merged = try CommandRunner.run(["merge"] + shards + ["--output", folder + "/merged", "--max-skew", "1h"])
        #expect(merged.status == 0, "\(merged.standardOutput)\(merged.standardError)")
        let mergedSummary = try CommandRunner.summary(in: folder + "/merged")
        let digest = try #require(NotificationDigest(parsing: mergedSummary.digest))
        #expect(digest.count == 6000)
        let said = lines(of: merged.standardOutput, keyed: "merged ")
        let skew =
            said.count == 1
            ? middle(
                of: said[0],
                between:
                    "merged 3 shards: 6,000 sent; \(digest.text) (the accepted)\(mergedSummary.reconciled == true ? ", reconciled" : ""), start skew ",
                and: " ms"
            ) : nil
        #expect(skew.flatMap(Double.init).map { $0 >= 0 } == true, "\(merged.standardOutput)")
        // Its last line names the files, as every run's does (newcomer pass 4: it named none).
        #expect(
            lines(of: merged.standardOutput, keyed: "results: ")
                == ["results: \(folder)/merged/ (summary.json, summary.md, report.html, latency.hgrm, latency.hlog)"]
        )

        let whole = try CommandRunner.summary(in: folder + "/merged")
        let alone = try CommandRunner.summary(in: folder + "/single")
        #expect(whole.sent == alone.sent)
        #expect(whole.accepted == alone.accepted)
        #expect(whole.requests == alone.requests)
        #expect(whole.digest == alone.digest)
        #expect(whole.reconciled == alone.reconciled)
        #expect(whole.valid == alone.valid)
        let sink = try #require(whole.sink)
        #expect(sink.requests == 6000)
        #expect(sink.digest == alone.digest)
        #expect(whole.mergedFrom == shards)
        // Each second's rejections and failures by reason are the shards' summed; over the
        // seconds, the run's.
        let parts = try shards.map { try CommandRunner.summary(in: $0) }.flatMap(\.intervals)
        for interval in whole.intervals {
            let same = parts.filter { $0.second == interval.second }
            let rejected = same.reduce(into: [PushReason: Int]()) { $0.merge($1.rejected ?? [:], uniquingKeysWith: +) }
            let failed = same.reduce(into: [FailureCause: Int]()) { $0.merge($1.failed ?? [:], uniquingKeysWith: +) }
            #expect(interval.rejected == rejected, "second \(interval.second)")
            #expect(interval.failed == failed, "second \(interval.second)")
        }
        let rejected = whole.intervals.reduce(into: [PushReason: Int]()) {
            $0.merge($1.rejected ?? [:], uniquingKeysWith: +)
        }
        #expect(rejected == whole.rejected)

        // The merged log is the sum of the shards' logs, second by second, value by value.
        let check = try PeerProcess.run(
            "python3",
            [
                CommandRunner.repositoryRoot + "/Tests/FanoutCommandTests/Peers/compare_hlogs.py",
                folder + "/merged/latency.hlog",
            ]
                + shards.map { $0 + "/latency.hlog" }
        )
        try #require(check.status == 0, "\(check.errors)")
        let result = try HlogComparison(output: check.output)
        #expect(result.equal, "\(result)")
        #expect(result.total == 6000)
        let hgrm = try String(contentsOfFile: folder + "/merged/latency.hgrm", encoding: .utf8)
        #expect(hgrm.contains(/Total count\s+=\s+6000\]/))
    }

    @Test func foldersThatDoNotExistAreAUsageError() throws {
        let folder = NSTemporaryDirectory() + "fanout-merge-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let missing = try CommandRunner.run(["merge", folder + "/a", folder + "/b", "--output", folder + "/out"])
        #expect(missing.status == 64)
        #expect(
            errorLine(of: missing.standardError) == "error: cannot read \(folder)/a: there is no such folder",
            "\(missing.standardError)"
        )
        try FileManager.default.createDirectory(atPath: folder + "/empty", withIntermediateDirectories: true)
        let nothing = try CommandRunner.run(["merge", folder + "/empty", "--output", folder + "/out"])
        #expect(nothing.status == 64)
        #expect(
            errorLine(of: nothing.standardError) == "error: no shard finished: \(folder)/empty hold no summary.json",
            "\(nothing.standardError)"
        )
    }

    /// Two shards started together (`--start-at`); the second is killed (SIGKILL) mid-run, as
    /// a lost pod is. The merge is refused and the gate on it exits 2; with --allow-partial the
    /// first shard's results are merged and marked partial, and the gate says so.
    @Test func aShardKilledMidRunRefusesTheMergeUnlessPartialIsAllowed() throws {
        let folder = NSTemporaryDirectory() + "fanout-merge-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let start = TimeNotation.format(Date().addingTimeInterval(2))
        func shard(_ index: Int) throws -> PeerProcess {
            try PeerProcess(
                CommandRunner.executable.path,
                [
                    "run", "--rate", "2000", "--duration", "3s", "--shard", "\(index)/2", "--start-at", start,
                    "--max-lag", "1s", "--output", "\(folder)/shard-\(index)",
                ]
            )
        }
        let first = try shard(1)
        let second = try shard(2)
        defer {
            first.stop()
            second.stop()
        }
        // Killed once its requests are going out (its sockets' writes, /proc/PID/io: nothing is
        // written before the start), with results half made.
        let underWay = poll(timeout: .seconds(30)) { second.bytesWritten > 100_000 }
        try #require(underWay, "the second shard wrote \(second.bytesWritten) bytes")
        #expect(second.isRunning)
        second.signal(SIGKILL)
        let finished = try first.wait(timeout: .seconds(60))
        try #require(finished.status == 0, "\(finished.output)\(finished.errors)")
        let folders =
            ["\(folder)/shard-1"]
            + (FileManager.default.fileExists(atPath: "\(folder)/shard-2") ? ["\(folder)/shard-2"] : [])

        let refused = try CommandRunner.run(["merge"] + folders + ["--output", folder + "/refused"])
        #expect(refused.status == 2, "\(refused.standardOutput)\(refused.standardError)")
        let reasons = try CommandRunner.summary(in: folder + "/refused").invalidity
        #expect(
            reasons.contains { $0 == .shardsMissing(names: ["2/2"]) || $0 == .noSummary(folder: "\(folder)/shard-2") },
            "\(reasons)"
        )
        let gate = try CommandRunner.run(["gate", folder + "/refused", "--threshold", "failed == 0"])
        #expect(gate.status == 2, "\(gate.standardOutput)")
        #expect(
            lines(of: gate.standardOutput, keyed: "INVALID ") == reasons.map { "INVALID run: \($0)" }
                && lines(of: gate.standardOutput, keyed: "gate: ") == ["gate: the run is invalid and cannot pass"],
            "\(gate.standardOutput)"
        )

        let partial = try CommandRunner.run(["merge"] + folders + ["--output", folder + "/partial", "--allow-partial"])
        #expect(partial.status == 0, "\(partial.standardOutput)\(partial.standardError)")
        let summary = try CommandRunner.summary(in: folder + "/partial")
        #expect(summary.partial == true)
        let gaps = summary.partialReasons ?? []
        // The killed shard's folder, when it got as far as making one, and the shard missing.
        let missing = InvalidReason.shardsMissing(names: ["2/2"]).description
        #expect(
            gaps == [InvalidReason.noSummary(folder: "\(folder)/shard-2").description, missing] || gaps == [missing],
            "\(gaps)"
        )
        #expect(lines(of: partial.standardOutput, keyed: "PARTIAL") == gaps.map { "PARTIAL: \($0)" })
        #expect(summary.valid == true)
        #expect(summary.sent == 3000)
        let partialGate = try CommandRunner.run(["gate", folder + "/partial", "--threshold", "failed == 0"])
        #expect(partialGate.status == 0, "\(partialGate.standardOutput)")
        #expect(
            lines(of: partialGate.standardOutput, keyed: "PARTIAL") == gaps.map { "PARTIAL \($0)" },
            "\(partialGate.standardOutput)"
        )
    }

    /// A shard whose generator fell behind its schedule is invalid, and so is the merge: its
    /// reasons come with the shard's folder, and the gate on the merge exits 2.
    @Test func anInvalidShardMakesTheMergeInvalid() throws {
        let folder = NSTemporaryDirectory() + "fanout-merge-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        for index in 1...2 {
            // The generator sends on a 1 ms tick: some notification always leaves more than
            // 1 µs after its due time.
            let shard = try CommandRunner.run(
                [
                    "run", "--rate", "1000", "--duration", "1s", "--max-lag", "1us", "--shard", "\(index)/2",
                    "--output", "\(folder)/shard-\(index)",
                ],
                timeout: .seconds(120)
            )
            try #require(shard.status == 4, "\(shard.standardOutput)\(shard.standardError)")
        }
        let shards = (1...2).map { "\(folder)/shard-\($0)" }
        let merged = try CommandRunner.run(["merge"] + shards + ["--output", folder + "/merged", "--max-skew", "1h"])
        #expect(merged.status == 2, "\(merged.standardOutput)\(merged.standardError)")
        let summary = try CommandRunner.summary(in: folder + "/merged")
        #expect(summary.valid == false)
        let reasons = summary.invalidity
        for shard in shards {
            #expect(
                reasons.contains {
                    if case .inFolder(shard, .generatorBehind) = $0 { return true }
                    return false
                },
                "\(reasons)"
            )
        }
        #expect(
            lines(of: merged.standardOutput, keyed: "REFUSED") == reasons.map { "REFUSED: \($0)" },
            "\(merged.standardOutput)"
        )
        let gate = try CommandRunner.run(["gate", folder + "/merged", "--threshold", "failed == 0"])
        #expect(gate.status == 2, "\(gate.standardOutput)")
        #expect(
            lines(of: gate.standardOutput, keyed: "INVALID ") == reasons.map { "INVALID run: \($0)" }
                && lines(of: gate.standardOutput, keyed: "gate: ") == ["gate: the run is invalid and cannot pass"],
            "\(gate.standardOutput)"
        )
    }

    /// Shards that were configured differently, or are the same shard twice, or not shards at
    /// all, do not make one run, whatever --allow-partial says.
    @Test func shardsConfiguredUnlikeOrRepeatedAreRefused() throws {
        let folder = NSTemporaryDirectory() + "fanout-merge-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        func run(_ name: String, _ options: [String]) throws {
            let result = try CommandRunner.run(
                ["run", "--count", "2000", "--output", "\(folder)/\(name)"] + options,
                timeout: .seconds(120)
            )
            try #require(result.status == 0, "\(result.standardOutput)\(result.standardError)")
        }
        try run("a", ["--shard", "1/2", "--streams", "100"])
        try run("b", ["--shard", "2/2", "--streams", "50"])
        try run("c", ["--shard", "1/2", "--streams", "100"])
        try run("whole", [])
        func merge(_ names: [String]) throws -> (CommandRunner.Result, [InvalidReason]) {
            let result = try CommandRunner.run(
                ["merge"] + names.map { "\(folder)/\($0)" } + [
                    "--output", "\(folder)/out", "--max-skew", "1h", "--allow-partial",
                ]
            )
            let summary = try CommandRunner.summary(in: folder + "/out")
            return (result, summary.invalidity)
        }
        let (unlike, unlikeReasons) = try merge(["a", "b"])
        #expect(unlike.status == 2)
        #expect(
            unlikeReasons.contains(
                .configuredUnlike(
                    folder: "\(folder)/b",
                    reference: "\(folder)/a",
                    differences: [.init(field: "streams_per_connection", value: "50", reference: "100")]
                )
            ),
            "\(unlikeReasons)"
        )
        let (twice, twiceReasons) = try merge(["a", "c"])
        #expect(twice.status == 2)
        #expect(
            twiceReasons.contains(.shardTwice(index: 1, count: 2, folders: ["\(folder)/a", "\(folder)/c"])),
            "\(twiceReasons)"
        )
        let (whole, wholeReasons) = try merge(["a", "whole"])
        #expect(whole.status == 2)
        #expect(wholeReasons.contains(.notAShard(folders: ["\(folder)/whole"])), "\(wholeReasons)")
    }

    /// Too little measured is judged on the merged run (issue #61, case 2): three shards of 50
    /// answers are each too few, and their merge of 150 is not; three of 30 merge into 90, too
    /// few, said once for the run rather than for each shard.
    @Test(arguments: [(150, true), (90, false)]) func tooFewIsJudgedOnTheMergedRun(count: Int, enough: Bool) throws {
        let folder = NSTemporaryDirectory() + "fanout-merge-few-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        for index in 1...3 {
            let shard = try CommandRunner.run([
                "run", "--count", "\(count)", "--shard", "\(index)/3", "--output", "\(folder)/shard-\(index)",
            ])
            #expect(shard.status == 4, "\(shard.standardOutput)\(shard.standardError)")
            #expect(
                try CommandRunner.summary(in: "\(folder)/shard-\(index)").invalidity
                    == [.tooFewMeasured(measured: count / 3, minimum: 100, unit: .answers)]
            )
        }
        let merged = try CommandRunner.run(
            ["merge"] + (1...3).map { "\(folder)/shard-\($0)" } + ["--output", folder + "/merged", "--max-skew", "1h"]
        )
        let summary = try CommandRunner.summary(in: folder + "/merged")
        #expect(summary.sent == count)
        if enough {
            #expect(merged.status == 0, "\(merged.standardOutput)\(merged.standardError)")
            #expect(summary.valid && summary.invalidity.isEmpty, "\(summary.invalidity)")
        } else {
            #expect(merged.status == 2, "\(merged.standardOutput)\(merged.standardError)")
            #expect(summary.invalidity == [.tooFewMeasured(measured: count, minimum: 100, unit: .answers)])
        }
    }
}
