import FanoutTestSupport
import Foundation
import Testing

/// `fanout merge` on the shards of a run: histograms add exactly (checked by HdrHistogram's
/// Python reader), counts sum, and the digest and reconciliation are a single run's.
@Suite(.serialized) struct MergeCommandTests {
    @Test func theShardsOfARunMergeIntoTheRun() throws {
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
        let merged = try CommandRunner.run(["merge"] + shards + ["--output", folder + "/merged"])
        #expect(merged.status == 0, "\(merged.standardOutput)\(merged.standardError)")
        #expect(
            merged.standardOutput.contains("merged 3 shards: 6000 notifications, digest"),
            "\(merged.standardOutput)"
        )

        let whole = try CommandRunner.summary(in: folder + "/merged")
        let alone = try CommandRunner.summary(in: folder + "/single")
        for key in ["sent", "accepted", "requests", "digest", "reconciled", "valid"] {
            #expect("\(whole[key] ?? "nil")" == "\(alone[key] ?? "nil")", "\(key)")
        }
        let sink = try #require(whole["sink"] as? [String: Any])
        #expect(sink["requests"] as? Int == 6000)
        #expect(sink["digest"] as? String == alone["digest"] as? String)
        #expect(whole["merged_from"] as? [String] == shards)

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
        let result = try #require(try JSONSerialization.jsonObject(with: Data(check.output.utf8)) as? [String: Any])
        #expect(result["equal"] as? Bool == true, "\(result)")
        #expect(result["total"] as? Int == 6000)
        let hgrm = try String(contentsOfFile: folder + "/merged/latency.hgrm", encoding: .utf8)
        #expect(hgrm.contains(/Total count\s+=\s+6000\]/))
    }

    @Test func foldersThatAreNotShardsOfOneRunAreRefused() throws {
        let folder = NSTemporaryDirectory() + "fanout-merge-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let one = try CommandRunner.run(["merge", folder + "/a", "--output", folder + "/out"])
        #expect(one.status == 64)
        #expect(one.standardError.contains("merging needs at least two run folders"), "\(one.standardError)")
        let missing = try CommandRunner.run(["merge", folder + "/a", folder + "/b", "--output", folder + "/out"])
        #expect(missing.status == 64)
        #expect(missing.standardError.contains("cannot read \(folder)/a"), "\(missing.standardError)")
    }
}
