import FanoutReport
import FanoutResults
import Foundation
import Testing

/// The gate checks the figures it reads, not only the flags: each edit a hostile user made to a
/// valid summary.json (and that passed the gate before) makes the run invalid, the cause named.
@Suite struct SummaryContradictionTests {
    /// A valid open-model run without a sink section (the golden files' run).
    static let golden = GoldenFilesTests.golden + "/summary.json"
    /// A valid run reconciled with its sink (the committed baseline's first repeat).
    static let reconciled = GoldenFilesTests.repositoryRootFromHere + "/results/baselines/default/repeat-1/summary.json"

    /// `edit` applied to the JSON object of `source`, written as a run folder, then gated on
    /// thresholds the untouched run passes.
    static func gate(
        _ source: String = golden,
        _ edit: (inout [String: Any]) -> Void
    ) throws -> (Gate.Outcome, [InvalidReason]) {
        var json = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: source))) as? [String: Any]
        )
        edit(&json)
        let folder = NSTemporaryDirectory() + "fanout-contradiction-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try JSONSerialization.data(withJSONObject: json).write(to: URL(fileURLWithPath: folder + "/summary.json"))
        // The run's histogram beside it, as the run wrote it.
        let histogram = (source as NSString).deletingLastPathComponent + "/" + LatencyFile.fileName
        if FileManager.default.fileExists(atPath: histogram) {
            try FileManager.default.copyItem(atPath: histogram, toPath: folder + "/" + LatencyFile.fileName)
        }
        let outcome = try Gate(run: folder, baseline: nil, thresholds: ["failed < 1000"], file: nil).evaluate()
        return (outcome, outcome.invalidReasons.map(\.reason))
    }

    @Test(arguments: [golden, reconciled])
    func theUntouchedRunsPass(source: String) throws {
        let (outcome, reasons) = try Self.gate(source) { _ in }
        #expect(reasons == [])
        #expect(outcome.status == .passed)
    }

    /// A percentile edited in order with the others but unlike the histogram beside it (p99
    /// 300 ms where latency.hgrm's rows either side of 99% both say 404.479; a p50 of 1e-300 ms).
    @Test func aPercentileUnlikeTheFoldersHistogramIsInvalid() throws {
        let (outcome, reasons) = try Self.gate {
            var latency = $0["latency_ms"] as! [String: Any]
            latency["p99"] = 300.0
            latency["p50"] = 1e-300
            $0["latency_ms"] = latency
        }
        #expect(outcome.status == .invalid)
        let file = try #require(LatencyFile.read(in: GoldenFilesTests.golden))
        #expect(
            reasons == [
                .latencyFileDisagrees(
                    percentile: "p50",
                    summaryMs: 1e-300,
                    fileLowMs: file.bounds(at: 50).lowerBound,
                    fileHighMs: file.bounds(at: 50).upperBound
                ),
                .latencyFileDisagrees(percentile: "p99", summaryMs: 300, fileLowMs: 404.479, fileHighMs: 404.479),
            ]
        )
        #expect(file.bounds(at: 100) == 404.991...404.991)
        #expect(
            reasons.last?.description
                == "summary.json's p99 (300.000 ms) is not what latency.hgrm holds (404.479 ms): a file edited, or one run's summary beside another's histogram"
        )
        #expect(
            reasons.first?.description
                == "summary.json's p50 (1e-300 ms) is not what latency.hgrm holds (between \(String(format: "%.3f", file.bounds(at: 50).lowerBound)) and \(String(format: "%.3f", file.bounds(at: 50).upperBound)) ms): a file edited, or one run's summary beside another's histogram"
        )
    }

    /// Review of issue 61: percentiles edited and latency.hgrm deleted passed the gate, the
    /// run's latency.hlog still beside them. A folder with its interval log and without the
    /// histogram written beside it is invalid.
    @Test func aHistogramTakenFromBesideItsIntervalLogIsInvalid() throws {
        let folder = NSTemporaryDirectory() + "fanout-contradiction-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        for name in ["summary.json", "latency.hlog"] {
            try FileManager.default.copyItem(atPath: GoldenFilesTests.golden + "/" + name, toPath: folder + "/" + name)
        }
        let outcome = try Gate(run: folder, baseline: nil, thresholds: ["failed < 1000"], file: nil).evaluate()
        #expect(outcome.status == .invalid)
        #expect(outcome.invalidReasons.map(\.reason) == [.latencyFileMissing])
    }

    /// Review of issue 61: a repeat set whose repeat-2 is a link to repeat-1 and whose repeat-3
    /// a copy of it gated as three repeats, and two such sets compared "beyond noise". Each
    /// repeat that is another under a second name makes the set invalid.
    @Test func aRepeatCountedTwiceIsInvalid() throws {
        let folder = NSTemporaryDirectory() + "fanout-twice-\(UUID().uuidString)"
        let files = FileManager.default
        try files.createDirectory(atPath: folder + "/repeat-1", withIntermediateDirectories: true)
        defer { try? files.removeItem(atPath: folder) }
        for name in ["summary.json", "latency.hgrm", "latency.hlog"] {
            try files.copyItem(atPath: GoldenFilesTests.golden + "/" + name, toPath: folder + "/repeat-1/" + name)
        }
        try files.createSymbolicLink(atPath: folder + "/repeat-2", withDestinationPath: folder + "/repeat-1")
        try files.copyItem(atPath: folder + "/repeat-1", toPath: folder + "/repeat-3")
        try #"{"asked": 3, "finished": 3, "version": 1}"#.write(
            toFile: folder + "/repeats.json",
            atomically: true,
            encoding: .utf8
        )
        let set = try RunSet.load(folder)
        #expect(
            set.invalidReasons == [
                .sameRunTwice(folders: [folder + "/repeat-1", folder + "/repeat-2"]),
                .sameRunTwice(folders: [folder + "/repeat-1", folder + "/repeat-3"]),
            ]
        )
    }

    /// A rate above everything sent over the run's length (1e9/s from 6,000 notifications in
    /// about 3 s) is a figure no run wrote.
    @Test func aThroughputAboveWhatWasSentIsInvalid() throws {
        let (outcome, reasons) = try Self.gate { $0["throughput_per_second"] = 1e9 }
        #expect(outcome.status == .invalid)
        #expect(reasons.count == 1)
        guard case .throughputAboveSent(1e9, 6000, _) = reasons.first else {
            Issue.record("\(reasons)")
            return
        }
        #expect(
            reasons.first?.description.hasPrefix("throughput_per_second is 1,000,000,000/s, above all 6,000 sent")
                == true
        )
    }

    @Test func moreAcceptedThanSentIsInvalid() throws {
        let (outcome, reasons) = try Self.gate { $0["accepted"] = 40_000 }
        #expect(outcome.status == .invalid)
        #expect(
            reasons == [
                .outcomesDoNotAddUp(sent: 6000, accepted: 40_000, rejected: 20, failed: 10),
                .digestDisagrees(where: "", digested: 5970, accepted: 40_000),
            ]
        )
    }

    @Test func aNegativeCountOrPercentileIsInvalid() throws {
        let (_, accepted) = try Self.gate {
            $0["accepted"] = -1
            $0["sent"] = 29
            // The digest edited alike: this test is of the negative count.
            $0["digest"] = "-1 notifications, digest 0000000000000000-0000000000000000"
        }
        // 29 sent cannot be its rate of thousands a second either.
        #expect(accepted.first == .negativeFigure(field: "accepted", value: -1))
        #expect(accepted.count == 2, "\(accepted)")
        guard case .throughputAboveSent(_, 29, _) = accepted.last else {
            Issue.record("\(accepted)")
            return
        }
        let (outcome, latency) = try Self.gate {
            var latency = $0["latency_ms"] as! [String: Any]
            latency["p99"] = -5
            $0["latency_ms"] = latency
        }
        #expect(outcome.status == .invalid)
        #expect(
            latency == [
                .negativeFigure(field: "latency_ms.p99", value: -5), .percentilesOutOfOrder,
                .latencyFileDisagrees(percentile: "p99", summaryMs: -5, fileLowMs: 404.479, fileHighMs: 404.479),
            ]
        )
    }

    @Test func aSinkSectionThatDisagreesWithReconciledTrueIsInvalid() throws {
        let (outcome, requests) = try Self.gate(Self.reconciled) {
            var sink = $0["sink"] as! [String: Any]
            sink["accepted"] = 999_000
            $0["sink"] = sink
        }
        #expect(outcome.status == .invalid)
        #expect(
            requests == [
                .digestDisagrees(where: "sink", digested: 1_000_000, accepted: 999_000),
                .reconciledButDisagrees(field: "accepted", sender: 1_000_000, sink: 999_000),
            ]
        )
        let (_, differences) = try Self.gate(Self.reconciled) {
            var sink = $0["sink"] as! [String: Any]
            sink["differences"] = ["digest of accepted notifications: sink …, sender …"]
            $0["sink"] = sink
        }
        #expect(differences == [.senderAndSinkDisagree])
    }

    /// Issue 61, session 37's pass: sent, accepted and requests all edited to 2,000 beside a
    /// digest of 1,000 notifications passed `sent >= 2000`. The digest counts what was accepted,
    /// the sender's and the sink's alike.
    @Test func countsUnlikeTheirDigestAreInvalid() throws {
        let (outcome, reasons) = try Self.gate(Self.reconciled) {
            for key in ["sent", "accepted", "requests"] { $0[key] = 2_000_000 }
            var sink = $0["sink"] as! [String: Any]
            sink["accepted"] = 2_000_000
            sink["requests"] = 2_000_000
            $0["sink"] = sink
            $0["throughput_per_second"] = 1.0
        }
        #expect(outcome.status == .invalid)
        #expect(
            reasons == [
                .digestDisagrees(where: "", digested: 1_000_000, accepted: 2_000_000),
                .digestDisagrees(where: "sink", digested: 1_000_000, accepted: 2_000_000),
            ]
        )
        #expect(
            reasons.map(\.description) == [
                "the digest counts 1,000,000 notifications where accepted is 2,000,000",
                "the sink's digest counts 1,000,000 notifications where its accepted is 2,000,000",
            ]
        )
    }

    /// The docs say a run with no answers never passes, whatever `valid` says.
    @Test func noAnswersWithValidTrueIsInvalid() throws {
        let (outcome, reasons) = try Self.gate {
            $0["sent"] = 0
            $0["accepted"] = 0
            $0["rejected"] = [String: Int]()
            $0["failed"] = [String: Int]()
            $0["latency_ms"] = NSNull()
            $0["throughput_per_second"] = NSNull()
            $0["digest"] = "0 notifications, digest 0000000000000000-0000000000000000"
        }
        #expect(outcome.status == .invalid)
        #expect(reasons == [.noAnswers])
    }

    /// Before schema 7 nothing measured was written as zeros: "measured 0 ms" passes nothing.
    @Test func anOldSchemasZeroLatenciesAreNothingMeasured() throws {
        let (outcome, reasons) = try Self.gate {
            $0["schema_version"] = 6
            $0["latency_ms"] = ["p50": 0, "p90": 0, "p99": 0, "p99_9": 0, "p99_99": 0, "max": 0]
        }
        #expect(outcome.status == .invalid)
        // The histogram beside them says so too, percentile by percentile.
        #expect(reasons.first == .zeroLatencies(schema: 6))
        #expect(
            reasons.dropFirst().map {
                if case .latencyFileDisagrees(let percentile, 0, _, _) = $0 { percentile } else { "\($0)" }
            } == ["p50", "p90", "p99", "p99.9", "p99.99", "max"]
        )
    }

    /// `"valid": true, "valid": false`: Foundation keeps the first, Python the last. Refused.
    @Test func aKeyWrittenTwiceIsRefused() throws {
        let text = try String(contentsOfFile: Self.golden, encoding: .utf8)
        let doubled = text.replacingOccurrences(of: "\"valid\" : true,", with: "\"valid\" : true, \"valid\" : false,")
        #expect(doubled != text)
        let folder = NSTemporaryDirectory() + "fanout-duplicate-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try doubled.write(toFile: folder + "/summary.json", atomically: true, encoding: .utf8)
        let error = #expect(throws: ResultsError.self) { try SummaryDocument.read(folder + "/summary.json") }
        #expect(error?.kind == .malformed)
        // Escapes name the same key: "\u0076alid" is "valid".
        let escaped = text.replacingOccurrences(
            of: "\"valid\" : true,",
            with: "\"valid\" : true, \"\\u0076alid\" : false,"
        )
        try escaped.write(toFile: folder + "/summary.json", atomically: true, encoding: .utf8)
        #expect(throws: ResultsError.self) { try SummaryDocument.read(folder + "/summary.json") }
        // Nested objects are checked too, and the same key in two objects is no duplicate.
        let nested = text.replacingOccurrences(of: "\"p50\" :", with: "\"p50\" : 1, \"p50\" :")
        try nested.write(toFile: folder + "/summary.json", atomically: true, encoding: .utf8)
        #expect(throws: ResultsError.self) { try SummaryDocument.read(folder + "/summary.json") }
        try text.write(toFile: folder + "/summary.json", atomically: true, encoding: .utf8)
        #expect(try SummaryDocument.read(folder + "/summary.json").valid)
    }
}
