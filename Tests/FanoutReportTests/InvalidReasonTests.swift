import FanoutAPNs
import FanoutResults
import Foundation
import Testing

/// Why a run is invalid, as cases: each reads back from summary.json as it was written, old
/// folders' words read back as the cases they name (else `.stated`), and readers judge the
/// cases, never the words.
struct InvalidReasonTests {
    static let every: [InvalidReason] = [
        .interrupted(signal: "SIGTERM", afterSeconds: 1.25, unsent: 4096),
        .tokenSetStopped(at: "tokens.txt:3"),
        .listIncomplete(option: "--rejects", failure: "rej.txt: No space left on device"),
        .generatorBehind(worstLagMs: 148.2, limitMs: 100),
        .backlogExceeded(waitSeconds: 10.02, limitSeconds: 10, afterSeconds: 10.04, unsent: 96_406_658),
        .backlogExceeded(waitSeconds: 0.31, limitSeconds: 0.3, afterSeconds: 0.35, unsent: nil),
        .latencyFileDisagrees(percentile: "p99", summaryMs: 1e-300, fileLowMs: 1124.351, fileHighMs: 1150.975),
        .throughputAboveSent(perSecond: 1e9, sent: 20_000, seconds: 0.174),
        .latencyFileMissing,
        .sameRunTwice(folders: ["rep/repeat-1", "rep/repeat-3"]),
        .digestDisagrees(where: "", digested: 1000, accepted: 2000),
        .digestDisagrees(where: "sink", digested: 1000, accepted: 2000),
        .cardDoesNotAddUp(violations: 0, counted: 5),
        .cardFlagWrong(rule: "permanent-retried", count: 0, passed: false),
        .senderAndSinkDisagree,
        .noAnswers,
        .credentialsRefused(refusals: [.apns(.invalidProviderToken): 3, .apns(.expiredProviderToken): 1]),
        .warmUpTookAll(warmUpSeconds: 0.99),
        .tooFewMeasured(measured: 13, minimum: 100, unit: .answers),
        .tooFewMeasured(measured: 50, minimum: 100, unit: .requests),
        .stoppedBeforeTheEnd,
        .validWithoutReason,
        .expectedNotReached(unit: .tokens, reached: 4, expected: 10, endedBy: "idle-exit"),
        .triggerFailed(exitStatus: 3, output: "trigger.log"),
        .triggerFailed(exitStatus: nil, output: "trigger.log"),
        .inFolder(directory: "shard-2", reason: .inFolder(directory: "repeat-1", reason: .noAnswers)),
        .sinkAmongRuns(folders: ["sink-a"]),
        .notAShard(folders: ["run-1", "run-2"]),
        .shardCountsDisagree(counts: [2, 3]),
        .shardTwice(index: 1, count: 2, folders: ["a", "b"]),
        .shardsMissing(names: ["2/4", "3/4"]),
        .noSummary(folder: "shard-3"),
        .shardGaveUp(shard: "shard-1 (shard 1/2)", abandoned: "the endpoint refused every connection"),
        .shardStopped(shard: "shard-2 (shard 2/2)"),
        .configuredUnlike(
            folder: "b",
            reference: "a",
            differences: [.init(field: "rate", value: "2000", reference: nil)]
        ),
        .startSkew(skewMs: 240.5, limitMs: 100),
        .repeatsInterrupted(finished: 2, asked: 5),
        .repeatsPartial(finished: 3, asked: 5),
        .repeatsWithoutManifest(found: 1),
        .negativeFigure(field: "latency_ms.p99", value: -5),
        .outcomesDoNotAddUp(sent: 10, accepted: 40, rejected: 0, failed: 0),
        .reconciledButDisagrees(field: "accepted", sender: 10, sink: 9),
        .percentilesOutOfOrder,
        .zeroLatencies(schema: 6),
        .noRequests,
        .stated("an older Fanout's words"),
    ]

    @Test func everyCaseReadsBackAsItWasWritten() throws {
        let data = try JSONEncoder().encode(Self.every)
        #expect(try JSONDecoder().decode([InvalidReason].self, from: data) == Self.every)
    }

    /// The shape tools read: one key, the case's snake-case name, over its named fields.
    @Test func aCaseIsWrittenAsItsNameOverItsFields() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let lag = String(
            decoding: try encoder.encode(InvalidReason.generatorBehind(worstLagMs: 148, limitMs: 100)),
            as: UTF8.self
        )
        #expect(lag == #"{"generator_behind":{"limit_ms":100,"worst_lag_ms":148}}"#)
        let nested = String(
            decoding: try encoder.encode(InvalidReason.inFolder(directory: "s", reason: .senderAndSinkDisagree)),
            as: UTF8.self
        )
        #expect(nested == #"{"in_folder":{"directory":"s","reason":{"sender_and_sink_disagree":{}}}}"#)
        let refused = String(
            decoding: try encoder.encode(InvalidReason.credentialsRefused(refusals: [.apns(.badDeviceToken): 2])),
            as: UTF8.self
        )
        #expect(refused == #"{"credentials_refused":{"refusals":{"BadDeviceToken":2}}}"#)
    }

    /// The judgements readers make look through folders to the cause.
    @Test func judgementsSeeThroughFolders() {
        let interrupted = InvalidReason.interrupted(signal: "SIGINT", afterSeconds: 1, unsent: 0)
        #expect(
            InvalidReason.inFolder(directory: "a", reason: .inFolder(directory: "b", reason: interrupted))
                .isInterruption
        )
        #expect(!InvalidReason.stoppedBeforeTheEnd.isInterruption)
        #expect(
            InvalidReason.inFolder(directory: "a", reason: .generatorBehind(worstLagMs: 1, limitMs: 0.5))
                .isGeneratorBehind
        )
        // Words that merely mention an interruption are not one.
        #expect(!InvalidReason.stated("interrupted by SIGINT after 1.00 s").isInterruption)
        // An older folder's interruption, read back from its words, is judged as one.
        let legacy = InvalidReason(legacy: "interrupted by SIGINT after 2.00 s: 0 tokens read ahead were never sent")
        #expect(legacy.isInterruption)
    }

    /// Every case has words of its own (no two alike), and the words carry its figures.
    @Test func eachCaseIsRenderedOnce() {
        let words = Self.every.map(\.description)
        #expect(Set(words).count == words.count)
        #expect(
            InvalidReason.generatorBehind(worstLagMs: 0.4, limitMs: 100).description
                == "the generator fell 400 µs behind its schedule (limit 100 ms)"
        )
        #expect(
            InvalidReason.inFolder(directory: "shard-2", reason: .senderAndSinkDisagree).description
                == "shard-2: sender and sink disagree"
        )
    }

    /// summary.json without `invalid_causes` (an older Fanout's) is judged by its words, and
    /// `valid: false` without any reason is invalid still.
    @Test func anOlderFoldersWordsReadAsStated() throws {
        let path = GoldenFilesTests.repositoryRootFromHere + "/results/baselines/default/repeat-1/summary.json"
        var json = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as? [String: Any]
        )
        #expect(json["invalid_causes"] == nil)
        json["valid"] = false
        json["invalid_reasons"] = [
            "sender and sink disagree", "interrupted by SIGTERM after 1.25 s: 4,096 tokens read ahead were never sent",
            "an older Fanout's words",
        ]
        let folder = NSTemporaryDirectory() + "fanout-invalid-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try JSONSerialization.data(withJSONObject: json).write(to: URL(fileURLWithPath: folder + "/summary.json"))
        var read = try SummaryDocument.read(folder + "/summary.json")
        #expect(
            read.invalidity == [
                .senderAndSinkDisagree, .interrupted(signal: "SIGTERM", afterSeconds: 1.25, unsent: 4096),
                .stated("an older Fanout's words"),
            ]
        )
        read.invalidReasonWords = []
        #expect(read.invalidity == [.validWithoutReason])
    }
}
