import FanoutAssembly
import FanoutClient
import FanoutReport
import FanoutResults
import FanoutRun
import FanoutSink
import FanoutTestSupport
import FanoutTokens
import Foundation
import Testing

/// `summary.json` against its published schema (docs/summary.schema.json), checked by the
/// jsonschema package: the closed and open models, a run with rejections, and a broken file.
@Suite(.serialized) struct SummarySchemaTests {
    static let schema = repositoryRoot + "/docs/summary.schema.json"

    /// A closed-model run of `count` notifications as two shards, into `folder/shard-1` and
    /// `folder/shard-2`.
    static func runTwoShards(of count: UInt64, into folder: String) throws {
        for index in 1...2 {
            var shard = RunJob()
            shard.count = count
            shard.shard = try TokenShard(index, of: 2)
            try shard.run().write(to: folder + "/shard-\(index)")
        }
    }

    static func validate(_ files: [String]) throws -> PeerProcess.Result {
        try PeerProcess.run(
            "python3",
            [repositoryRoot + "/Tests/FanoutReportTests/Peers/validate_summary.py", schema] + files
        )
    }

    @Test(.requires(.jsonschema)) func summariesOfBothModelsMatchTheSchema() throws {
        let folder = NSTemporaryDirectory() + "fanout-schema-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        var closed = RunJob()
        closed.count = 5000
        closed.sink.scenario.errors = [(.unregistered, 0.05)]
        try closed.run().write(to: folder + "/closed")
        var open = RunJob()
        open.count = 3000
        open.shape.model.schedule = try ArrivalSchedule(rate: 2000, duration: .seconds(1))
        open.shape.model.warmUp = .milliseconds(200)
        try open.run().write(to: folder + "/open")

        let result = try Self.validate([folder + "/closed/summary.json", folder + "/open/summary.json"])
        #expect(result.status == 0, "\(result.output)\(result.errors)")
        #expect(result.output.components(separatedBy: ": valid").count == 3, "\(result.output)")
    }

    /// Two closed-model shards merged: the merged harness (each delay the largest over the
    /// shards, no send lateness in the closed model) matches the schema as a run's does.
    @Test(.requires(.jsonschema)) func aMergeMatchesTheSchema() throws {
        let folder = NSTemporaryDirectory() + "fanout-schema-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try Self.runTwoShards(of: 4000, into: folder)
        let merge = try RunMerge(directories: [folder + "/shard-1", folder + "/shard-2"])
        try merge.write(to: folder + "/merged")
        let sender = try #require(merge.document.harness).sender
        #expect(sender.sendLateness == nil)
        #expect(sender.loopUtilisation.count == 2)
        // The sender's share of each timed answer: the larger shard's, as every delay.
        let shardShares = try (1...2).map { index -> Double in
            let summary = try SummaryDocument.read(folder + "/shard-\(index)/summary.json")
            return try #require(summary.harness?.sender.perAnswer?.p99, "shard \(index)")
        }
        let merged = try #require(sender.perAnswer)
        #expect(merged.p99 == shardShares.max(), "\(merged), shards \(shardShares)")
        let result = try Self.validate([folder + "/merged/summary.json"])
        #expect(result.status == 0, "\(result.output)\(result.errors)")
    }

    /// A shard written before `unscheduled_reasons` was kept (its tokens left unsent were all
    /// past the schedule's end) merges with one that has them: the reasons add up to the total.
    @Test(.requires(.jsonschema)) func aShardWithoutUnscheduledReasonsMergesAsScheduleOver() throws {
        let folder = NSTemporaryDirectory() + "fanout-schema-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try Self.runTwoShards(of: 2000, into: folder)
        let old = URL(fileURLWithPath: folder + "/shard-1/summary.json")
        // An older shard's summary: no reasons for its unscheduled notifications.
        var summary = try JSONValue(Data(contentsOf: old))
        summary["unscheduled_reasons"] = nil
        summary["unscheduled"] = .number(3)
        try summary.data().write(to: old)
        let merge = try RunMerge(directories: [folder + "/shard-1", folder + "/shard-2"])
        #expect(merge.document.unscheduled == 3)
        #expect(merge.document.unscheduledReasons == .init(scheduleOver: 3, tokensRanOut: 0))
        try merge.write(to: folder + "/merged")
        let result = try Self.validate([folder + "/merged/summary.json"])
        #expect(result.status == 0, "\(result.output)\(result.errors)")
    }

    /// Two shards aborted by `--abort-on`: the merge keeps the one that aborted first, named.
    @Test(.requires(.jsonschema)) func aMergeKeepsTheShardThatAbortedFirst() throws {
        let folder = NSTemporaryDirectory() + "fanout-schema-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try Self.runTwoShards(of: 2000, into: folder)
        for (index, after) in [(1, 14.0), (2, 12.0)] {
            let file = URL(fileURLWithPath: folder + "/shard-\(index)/summary.json")
            var summary = try JSONValue(Data(contentsOf: file))
            summary["aborted"] = .object([
                "condition": .string("p99 > 200ms"), "window_seconds": .number(10), "after_seconds": .number(after),
                "measured": .number(250), "unit": .string("ms"),
            ])
            try summary.data().write(to: file)
        }
        let merge = try RunMerge(directories: [folder + "/shard-1", folder + "/shard-2"])
        let aborted = try #require(merge.document.aborted)
        #expect(aborted.afterSeconds == 12)
        #expect(aborted.shard == "2/2", "\(aborted)")
        #expect(
            aborted.line.hasPrefix("shard 2/2 aborted after 12.0 s: p99 > 200ms over the last 10 s"),
            "\(aborted.line)"
        )
        try merge.write(to: folder + "/merged")
        let result = try Self.validate([folder + "/merged/summary.json"])
        #expect(result.status == 0, "\(result.output)\(result.errors)")
    }

    @Test func theSchemaIsTheVersionTheCodeWrites() throws {
        let data = try Data(contentsOf: URL(fileURLWithPath: Self.schema))
        /// What the test reads of the JSON Schema: `properties.schema_version.const`.
        struct Schema: Decodable {
            struct Properties: Decodable {
                struct Version: Decodable { var const: Int }
                var schemaVersion: Version
                enum CodingKeys: String, CodingKey { case schemaVersion = "schema_version" }
            }
            var properties: Properties
        }
        let schema = try JSONDecoder().decode(Schema.self, from: data)
        #expect(schema.properties.schemaVersion.const == RunSummary.schemaVersion)
    }

    @Test(.requires(.jsonschema)) func aSummaryMissingAFieldOrWithAWrongTypeFails() throws {
        let folder = NSTemporaryDirectory() + "fanout-schema-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        var job = RunJob()
        job.count = 1000
        let summary = try job.run()
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        // Broken on purpose, which no SummaryDocument can be: as JSON.
        let written = try JSONValue(summary.document.data())
        var missing = written
        missing["sent"] = nil
        var wrong = written
        wrong["latency_ms"] = .object(["p50": .string("fast")])
        for (name, object) in [("missing", missing), ("wrong", wrong)] {
            try object.data().write(to: URL(fileURLWithPath: "\(folder)/\(name).json"))
        }
        let result = try Self.validate([folder + "/missing.json", folder + "/wrong.json"])
        #expect(result.status == 1)
        // Each file's first problem, whole.
        #expect(
            result.output
                == "\(folder)/missing.json: (top): 'sent' is a required property\n"
                + "\(folder)/wrong.json: latency_ms: 'p90' is a required property\n",
            "\(result.output)"
        )
    }
}
