import FanoutResults
import FanoutTestSupport
import Foundation
import Testing

@testable import FanoutReport

/// `fanout gate` on the device fleet's delivery (`summary.json`'s `delivery`): shares of the
/// notifications received by APNs, and times from the fan-out's first request.
@Suite struct DeliveryGateTests {
    /// The golden run folder's summary with a delivery section: 1,000 received, 850 delivered
    /// (700 at once, 150 from storage), 150 expired; 99% reached by 59 s, the last at 60 s.
    static func folder() throws -> String {
        var summary = try SummaryDocument.read(GoldenFilesTests.golden + "/summary.json")
        summary.delivery = HTMLReportTests.delivery(
            times: .init(p50: 0.001, p90: 41_000, p99: 59_000, max: 60_000),
            curve: false
        )
        let folder = NSTemporaryDirectory() + "fanout-delivery-gate-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try JSONDocument.data(summary).write(to: URL(fileURLWithPath: folder + "/summary.json"))
        return folder
    }

    @Test(
        arguments: [
            ("delivered > 80%", true), ("delivered > 90%", false), ("delivered >= 850", true),
            ("delivered.p99 < 2m", true), ("delivered.p99 < 0.5m", false), ("delivered.p99 < 60s", true),
            ("delivered.p99 < 58s", false),
            ("delivered.p50 < 1ms", true), ("delivered.last <= 60s", true), ("delivered.last < 59s", false),
            ("discarded.expired < 1%", false), ("discarded.expired < 16%", true), ("discarded.expired == 150", true),
            ("forgotten == 0", true), ("discarded.unregistered > 0", false),
        ] as [(String, Bool)]
    )
    func thresholdsPassAndFailAsTheySay(threshold: String, passes: Bool) throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let outcome = try Gate(run: folder, baseline: nil, thresholds: [threshold], file: nil).evaluate()
        #expect(outcome.verdicts.map(\.passed) == [passes], "\(threshold): \(outcome.verdicts.map(\.measured))")
    }

    /// A folder without the fleet cannot be gated on its metrics: the gate says which and why.
    @Test func aFolderWithoutTheFleetIsRefusedByName() throws {
        let error = #expect(throws: GateError.self) {
            try Gate(run: GoldenFilesTests.golden, baseline: nil, thresholds: ["delivered > 90%"], file: nil)
        }
        #expect(
            error?.description
                == "delivered > 90%: delivered is measured with the sink's device fleet (--device-… or --sink-device-…); "
                + "\(GoldenFilesTests.golden) has no delivery section",
            "\(String(describing: error))"
        )
        #expect(error?.kind == .needsDelivery)
    }

    /// What a caller of `Gate` matches on, beside the words: the folder, the threshold, or what
    /// the thresholds need.
    @Test func aGateThatCannotJudgeSaysWhyAsAKind() {
        let golden = GoldenFilesTests.golden
        let cases: [(String, [String], GateError.Kind)] = [
            ("/nonexistent/run", ["p99 < 5ms"], .results(.notADocument)),
            (golden, ["p98 < 5ms"], .threshold(.metric)),
            (golden, [], .noThreshold),
            (golden, ["p99 < baseline + 5%"], .needsBaseline),
            (golden, ["violations == 0"], .needsSinkFolder),
        ]
        for (run, thresholds, kind) in cases {
            let error = #expect(throws: GateError.self) {
                try Gate(run: run, baseline: nil, thresholds: thresholds, file: nil)
            }
            #expect(error?.kind == kind, "\(run) \(thresholds): \(String(describing: error))")
        }
    }

    @Test func theDeliveryRoundTripsThroughSummaryJSON() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let read = try SummaryDocument.read(folder + "/summary.json")
        #expect(read.delivery?.allDelivered == 850 && read.delivery?.reachedMs?.p99 == 59_000)
        let record = try RunRecord.load(folder)
        #expect(record.share(.delivered) == 0.85 && record.metrics[.deliveredP99] == 59_000)
        #expect(
            lines(of: MarkdownSummary(summary: read).text, keyed: "| Discarded – Expired |")
                == ["| Discarded – Expired | 150 | 15.00% |"]
        )
    }
}
