import FanoutAPNs
import FanoutResults
import FanoutTestSupport
import Foundation
import Testing

@testable import FanoutReport

/// `MarkdownSummary` alone, on a committed baseline's summary and on changed copies of it: the
/// verdict line, the headline table, latency or its absence, and the outcomes.
@Suite struct MarkdownSummaryTests {
    static func baseline() throws -> SummaryDocument {
        try SummaryDocument.read(
            GoldenFilesTests.repositoryRootFromHere + "/results/baselines/default/repeat-1/summary.json"
        )
    }

    @Test func aValidRunHasItsFiguresInTables() throws {
        let summary = try Self.baseline()
        let lines = MarkdownSummary(summary: summary).text.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.first == "## Fanout run")
        #expect(lines[2] == "✅ valid · sender and sink agree · \(summary.configuration.model) model")
        let headline = try #require(
            lines.firstIndex(of: "| notifications | throughput | connections × streams | elapsed |")
        )
        let throughput = try #require(summary.throughputPerSecond)
        #expect(
            lines[headline + 2]
                == "| \(grouped(summary.sent)) | \(grouped(Int(throughput.rounded())))/s | \(summary.connections) × \(summary.streamsPerConnection) | \(String(format: "%.2f", summary.elapsedSeconds)) s |"
        )
        let latency = try #require(summary.latency)
        let row = try #require(lines.first { $0.hasPrefix("| ms | ") })
        #expect(
            row.hasPrefix("| ms | \(String(format: "%.2f", latency.p50)) | \(String(format: "%.2f", latency.p90)) |")
        )
        #expect(row.hasSuffix(" | \(String(format: "%.2f", latency.max)) |"))
        let document = MarkdownDocument(MarkdownSummary(summary: summary).text)
        #expect(document.table("outcome")?.pairs["accepted"] == grouped(summary.accepted))
        // A schema-2 baseline has no CPU figures.
        #expect(document.lines.count { $0 == "CPU per notification: not measured" } == 1, "\(document.lines)")
        #expect(lines.last == "")
    }

    @Test func anInvalidRunWithoutAnswersSaysSoInsteadOfFigures() throws {
        var summary = try Self.baseline()
        summary.valid = false
        summary.invalidReasonWords = ["the sink was not reached"]
        summary.invalidCauses = nil
        summary.accepted = 0
        summary.rejected = [:]
        summary.latency = nil
        summary.throughputPerSecond = nil
        summary.failed = [.unreachable(.connectionRefused): 7, .timeout: 2]
        let document = MarkdownDocument(MarkdownSummary(summary: summary).text)
        #expect(
            document.lines.first == "❌ **invalid** · sender and sink agree · \(summary.configuration.model) model",
            "\(document.lines)"
        )
        #expect(document.items == ["the sink was not reached"])
        #expect(
            document.table("notifications")?.rows.first.map { $0.count > 1 ? $0[1] : "" } == "no answers",
            "\(document.tables)"
        )
        // When and what ran, then the figures it has: none.
        #expect(document.lines.dropFirst().first?.hasPrefix("Ran 2026-") == true, "\(document.lines)")
        #expect(
            Array(document.lines.dropFirst(2).prefix(3)) == [
                "Closed model: 1,000,000 notifications in \(String(format: "%.2f", summary.elapsedSeconds)) s to \(summary.configuration.endpoint) over 4 connections × 1000 streams",
                "CPU per notification: none (no answers)", "Latency: no answers.",
            ],
            "\(document.lines)"
        )
        #expect(document.table("latency") == nil)
        // Outcomes by reason, in the order of their names.
        #expect(
            document.table("outcome")?.rows == [
                ["accepted", "0"], ["failed ConnectionRefused", "7"], ["failed Timeout", "2"],
            ]
        )
    }

    /// `valid: false` with no reason is invalid still, and says why it is.
    @Test func invalidWithoutAReasonIsSaid() throws {
        var summary = try Self.baseline()
        summary.valid = false
        summary.invalidReasonWords = []
        summary.invalidCauses = []
        #expect(summary.invalidity == [.validWithoutReason])
        let document = MarkdownDocument(MarkdownSummary(summary: summary).text)
        #expect(document.items == ["\(InvalidReason.validWithoutReason)"])
    }
}
