import FanoutResults
import FanoutTestSupport
import Foundation
import Testing

@testable import FanoutReport

/// The report of a folder of repeats: a bar a repeat at its value, the median across, an
/// invalid repeat marked.
struct RepeatReportTests {
    static func run(_ name: String, throughput: Double, p99: Double, invalid: [InvalidReason] = []) -> RunRecord {
        RunRecord(
            directory: "results/set/" + name,
            metrics: [
                .throughput: throughput, .p50: p99 / 4, .p90: p99 / 2, .p99: p99, .p99_9: p99, .max: p99 * 2,
                .errors: 0, .sent: 1000,
            ],
            errorShare: 0,
            invalidReasons: invalid
        )
    }

    static let set = RunSet(
        directory: "results/set",
        runs: [
            run("repeat-1", throughput: 1000, p99: 10), run("repeat-2", throughput: 2000, p99: 20),
            run("repeat-3", throughput: 4000, p99: 40, invalid: [.senderAndSinkDisagree]),
        ]
    )

    /// Bars' heights, in the order drawn, for the chart whose label is `label`.
    static func bars(_ html: String, chart label: String) throws -> [Double] {
        let start = try #require(html.range(of: "aria-label=\"\(label)\""))
        let chart = html[start.lowerBound...].prefix { $0 != "\n" }
        return String(chart).matches(
            of: /<rect class="repeat" x="[0-9.]+" y="[0-9.]+" width="[0-9.]+" height="([0-9.]+)"/
        )
        .map { Double($0.output.1)! }
    }

    @Test func eachRepeatIsABarAtItsValueWithTheMedianAcross() throws {
        let html = RepeatReport(set: Self.set).html
        // Throughput to 5,000/s: bars at 1/5, 2/5 and 4/5 of the plot.
        let heights = try Self.bars(html, chart: "throughput by repeat")
        #expect(heights.map { ($0 / ChartFrame.plotHeight * 5).rounded() } == [1, 2, 4], "\(heights)")
        let page = HTMLDocument(html)
        let throughput = try #require(page.chart("throughput by repeat"))
        #expect(throughput.elements("line", class: "median").map(\.text) == ["median 2,000/s"])
        let p99 = page.chart("p99 by repeat")?.elements("rect", class: "repeat").map(\.text)
        #expect(p99?.last == "repeat-3: p99 40.0 ms", "\(p99 ?? [])")
        // The invalid repeat is red, and said.
        let bars = throughput.elements("rect", class: "repeat")
        #expect(bars.map { $0.attributes["fill"] == RepeatReport.Colour.invalid } == [false, false, true])
        #expect(bars.last?.text == "repeat-3: throughput 4,000/s")
        let reason = InvalidReason.inFolder(directory: "results/set/repeat-3", reason: .senderAndSinkDisagree)
        #expect(Self.set.invalidReasons == [reason])
        #expect(page.elements("p", class: "invalid").map(\.text) == ["INVALID: \(reason)"])
        #expect(page.elements("script").isEmpty)
    }
}
