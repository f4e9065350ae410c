import FanoutResults
import FanoutTestSupport
import Foundation
import Testing

@testable import FanoutReport

/// `fanout compare --report`'s page: each change a dot with its interval, against the
/// --min-effect band, and an invalid side said.
struct ComparisonReportTests {
    @Test func theComparisonPageDrawsEachChangeWithItsVerdict() throws {
        let current = RunSet(
            directory: "results/new",
            runs: [
                RepeatReportTests.run("repeat-1", throughput: 1500, p99: 10),
                RepeatReportTests.run("repeat-2", throughput: 3000, p99: 20),
                RepeatReportTests.run("repeat-3", throughput: 6000, p99: 40),
            ]
        )
        let comparison = RunComparison(
            baseline: RepeatReportTests.set,
            current: current,
            metrics: [.throughput, .p99],
            minimumEffect: 0.05
        )
        let html = ComparisonReport(comparison: comparison).html
        let changes = html.matches(of: /<circle class="change"[^>]*><title>([^<]*)<\/title>/).map {
            String($0.output.1)
        }
        #expect(changes.count == 2, "\(changes)")
        #expect(changes.first?.hasPrefix("throughput: 2,000/s → 3,000/s, +50.0%") == true, "\(changes)")
        #expect(changes.last?.hasPrefix("p99: 20.0 ms → 20.0 ms, +0.0%; same") == true, "\(changes)")
        let page = HTMLDocument(html)
        #expect(page.elements("rect", class: "min-effect").count == 1)
        let reason = InvalidReason.inFolder(directory: "results/set/repeat-3", reason: .senderAndSinkDisagree)
        #expect(comparison.baseline.invalidReasons == [reason])
        #expect(
            page.elements("p", class: "invalid").map(\.text) == ["INVALID baseline: \(reason) (no verdict stands)"]
        )
    }
}
