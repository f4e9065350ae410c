import FanoutRun
import FanoutTestSupport
import Foundation
import Testing

/// `fanout run`, the main job, as a user runs it: the summary, the files, the exit status.
@Suite(.serialized) struct RunCommandTests {
    @Test func theMainJobReconcilesAndWritesItsFiles() throws {
        let folder = NSTemporaryDirectory() + "fanout-run-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let result = try CommandRunner.run(
            ["run", "--count", "20000", "--connections", "2", "--streams", "200", "--output", folder],
            timeout: .seconds(120)
        )
        #expect(result.status == 0, "\(result.standardError)")
        #expect(result.standardOutput.contains("20,000 notifications to the embedded sink"), "\(result.standardOutput)")
        #expect(result.standardOutput.contains("accepted 20,000   rejected 0   failed 0   skipped 0"))
        #expect(result.standardOutput.contains("latency ms: p50 "))
        #expect(result.standardOutput.contains("reconciled: the sink counted 20,000 requests"))

        let data = try Data(contentsOf: URL(fileURLWithPath: folder + "/summary.json"))
        let summary = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(summary["schema_version"] as? Int == 1)
        #expect(summary["sent"] as? Int == 20_000)
        #expect(summary["accepted"] as? Int == 20_000)
        #expect((summary["rejected"] as? [String: Int])?.isEmpty == true)
        #expect((summary["failed"] as? [String: Int])?.isEmpty == true)
        #expect(summary["reconciled"] as? Bool == true)
        #expect((summary["throughput_per_second"] as? Double ?? 0) > 0)
        let latency = try #require(summary["latency_ms"] as? [String: Double])
        #expect(Set(latency.keys) == ["p50", "p90", "p99", "p99_9", "p99_99", "max"])
        #expect(latency["p50"]! <= latency["p99"]! && latency["p99"]! <= latency["max"]!)

        // HdrHistogram's percentile distribution: a header, rows of value/percentile/count, and
        // the total count in its footer.
        let hgrm = try String(contentsOfFile: folder + "/latency.hgrm", encoding: .utf8)
        #expect(hgrm.contains("Value     Percentile TotalCount 1/(1-Percentile)"))
        #expect(hgrm.contains(/Total count\s+=\s+20000\]/), "\(hgrm.suffix(400))")
    }

    @Test func theEmbeddedPollIsTheFixture() throws {
        let fixture = try String(contentsOfFile: CommandRunner.repositoryRoot + "/fixtures/poll.json", encoding: .utf8)
        #expect(MainJob.poll == fixture.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    @Test func badOptionsAreUsageErrors() throws {
        for arguments in [["run", "--count", "0"], ["run", "--connections", "0"], ["run", "--streams", "-1"]] {
            let result = try CommandRunner.run(arguments)
            #expect(result.status == 64, "\(arguments)")
        }
    }
}
