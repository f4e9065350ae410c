import FanoutClient
import FanoutReport
import FanoutResults
import FanoutTestSupport
import Foundation
import Testing

/// `fine_intervals`: when a run writes them, how shards' merge, how they read back, and the
/// throughput chart they draw in report.html.
@Suite(.serialized) struct FineIntervalsTests {
    typealias FineIntervals = SummaryDocument.FineIntervals

    static func counts(_ leading: [Int]) -> [Int] {
        leading + [Int](repeating: 0, count: FineBins.count - leading.count)
    }

    /// A run of 10 s or less keeps its bins up to the one it ended in; a longer run, or one
    /// whose completions did not all fall in the bins, writes none.
    @Test func onlyARunTheBinsHoldWholeWritesThem() throws {
        let counts = Self.counts([5, 7, 0, 3])
        let short = try #require(
            FineIntervals(counts: counts, binMilliseconds: 100, elapsedSeconds: 0.55, completed: 15)
        )
        #expect(short.completed == [5, 7, 0, 3, 0, 0])
        // A completion filed after the run's end (its last answer read late) is kept.
        let late = try #require(
            FineIntervals(counts: counts, binMilliseconds: 100, elapsedSeconds: 0.25, completed: 15)
        )
        #expect(late.completed == [5, 7, 0, 3])
        #expect(FineIntervals(counts: counts, binMilliseconds: 100, elapsedSeconds: 10.2, completed: 15) == nil)
        #expect(FineIntervals(counts: counts, binMilliseconds: 100, elapsedSeconds: 0.55, completed: 16) == nil)
        #expect(FineIntervals(counts: [], binMilliseconds: 100, elapsedSeconds: 0.55, completed: 0) == nil)
    }

    /// Shards' bins add up bin by bin; a shard without them leaves the merge without them.
    @Test func shardsBinsAddUpAndAShardWithoutThemLeavesNone() {
        let one = FineIntervals(binMilliseconds: 100, completed: [1, 2, 3])
        let two = FineIntervals(binMilliseconds: 100, completed: [10, 20, 30, 40])
        #expect(FineIntervals.merged([one, two]) == FineIntervals(binMilliseconds: 100, completed: [11, 22, 33, 40]))
        #expect(FineIntervals.merged([one, nil]) == nil)
        #expect(FineIntervals.merged([one, FineIntervals(binMilliseconds: 50, completed: [1])]) == nil)
    }

    /// Written as `{"bin_ms": 100, "completed": [...]}` and read back equal; a summary without
    /// the key (an older folder) reads with none.
    @Test(.requires(.jsonschema)) func theFieldReadsBackAndAnOlderSummaryReadsWithout() throws {
        var summary = try HTMLReportTests.summary()
        #expect(summary.fineIntervals == nil, "the golden run has none")
        summary.fineIntervals = FineIntervals(binMilliseconds: 100, completed: [3, 0, 9])
        let data = try summary.data()
        let text = String(decoding: data, as: UTF8.self)
        #expect(
            try JSONValue(data)["fine_intervals"]
                == .object(["bin_ms": .number(100), "completed": .array([.number(3), .number(0), .number(9)])]),
            "\(text.prefix(200))"
        )
        let file = NSTemporaryDirectory() + "fanout-fine-\(UUID().uuidString).json"
        defer { try? FileManager.default.removeItem(atPath: file) }
        try data.write(to: URL(fileURLWithPath: file))
        let read = try SummaryDocument.read(file)
        #expect(read.fineIntervals == summary.fineIntervals)
        #expect(read == summary)
        let result = try SummarySchemaTests.validate([file])
        #expect(result.status == 0, "\(result.output)\(result.errors)")
    }

    /// Two shards run in-process: each writes bins adding up to what it completed, and the
    /// merge's bins are theirs added up, matching the schema.
    @Test(.requires(.jsonschema)) func aMergeAddsTheShardsBins() throws {
        let folder = NSTemporaryDirectory() + "fanout-fine-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try SummarySchemaTests.runTwoShards(of: 3000, into: folder)
        let shards = try (1...2).map { try SummaryDocument.read(folder + "/shard-\($0)/summary.json") }
        for shard in shards {
            let fine = try #require(shard.fineIntervals, "a run of \(shard.elapsedSeconds) s")
            #expect(fine.completed.reduce(0, +) == shard.intervals.map(\.completed).reduce(0, +))
            #expect(fine.completed.reduce(0, +) == shard.sent)
        }
        let merge = try RunMerge(directories: [folder + "/shard-1", folder + "/shard-2"])
        let merged = try #require(merge.document.fineIntervals)
        #expect(merged == FineIntervals.merged(shards.map(\.fineIntervals)))
        #expect(merged.completed.reduce(0, +) == 3000)
        try merge.write(to: folder + "/merged")
        let result = try SummarySchemaTests.validate([folder + "/merged/summary.json"])
        #expect(result.status == 0, "\(result.output)\(result.errors)")
    }

    /// A 1.05 s run's throughput chart: eleven bars, the last as long as its 50 ms, at its
    /// rate per second, each bin's figures on hover, "100 ms bins" in its caption.
    @Test func aShortRunsThroughputIsDrawnInHundredMillisecondBins() throws {
        var summary = try HTMLReportTests.summary()
        summary.elapsedSeconds = 1.05
        summary.fineIntervals = FineIntervals(binMilliseconds: 100, completed: Array(repeating: 200, count: 10) + [50])
        let html = HTMLReportTests.html(summary)
        let bars = HTMLReportTests.rects(html, class: "achieved fine")
        try #require(bars.count == 11, "\(bars)")
        #expect(abs(bars[10].width - bars[0].width / 2) < 0.1, "\(bars)")
        let page = HTMLDocument(html)
        #expect(page.count("h2", text: "Offered and achieved per second, in 100 ms bins") == 1)
        let tips = HTMLReportTests.tips(page, "finished per second, in 100 ms bins")
        #expect(tips.count == 11, "\(tips)")
        #expect(tips.dropFirst().first == "0.1–0.2 s: 200 finished (2,000/s); offered 2,000/s", "\(tips)")
        #expect(tips.last == "1.0–1.050 s (the last bin): 50 finished (1,000/s); offered 2,000/s")
        #expect(HTMLReportTests.rects(html, class: "achieved").isEmpty, "no bar a second")
        // A run longer than the bins hold draws its seconds, whatever its summary says.
        summary.elapsedSeconds = 12
        let long = HTMLReportTests.html(summary)
        #expect(HTMLReportTests.rects(long, class: "achieved fine").isEmpty)
        #expect(!HTMLReportTests.rects(long, class: "achieved").isEmpty)
    }
}
