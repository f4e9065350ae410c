import FanoutTestSupport
import Foundation
import Testing

@testable import FanoutReport

/// The search's report.html: the objectives' lines on the latency chart, where the SLO is, and
/// a log axis when the latencies span decades.
struct SearchReportTests {
    static func report(p50: [Double], p99: [Double], objectives: [String] = ["p99 < 25ms"]) throws -> SearchReport {
        var report = SearchReport(
            target: "http://127.0.0.1:2197",
            objectives: try objectives.map { try Threshold(parsing: $0) },
            bounds: RateSearch.Bounds(),
            stepDuration: .seconds(5),
            warmUp: .seconds(1)
        )
        report.steps = zip(p50, p99).enumerated().map { index, latency in
            SearchStep(
                number: index + 1,
                offered: Double(index + 1) * 1000,
                purpose: .explore,
                folder: "step-\(index + 1)",
                achieved: Double(index + 1) * 1000,
                p50: latency.0,
                p99: latency.1,
                errorShare: 0,
                outcome: latency.1 < 25 ? .passed : .failed,
                reasons: []
            )
        }
        return report
    }

    /// The generator's limit with an endpoint failure above it: the answer says the endpoint
    /// failed there, and not that every rate offered kept the objectives (newcomer pass 5).
    @Test func aGeneratorLimitAnswerSaysWhereTheEndpointFailed() throws {
        var report = try Self.report(p50: [1, 2], p99: [2, 8])
        report.steps += [
            SearchStep(
                number: 3,
                offered: 16_000,
                purpose: .explore,
                folder: "step-3",
                achieved: 15_000,
                p50: 30,
                p99: 90,
                errorShare: 0,
                outcome: .failed,
                reasons: []
            ),
            SearchStep(
                number: 4,
                offered: 8_000,
                purpose: .explore,
                folder: "step-4",
                achieved: 7_000,
                p50: 3,
                p99: 9,
                errorShare: 0,
                outcome: .generatorLimit,
                reasons: []
            ),
        ]
        report.answer = .generatorLimit(passed: 7_800, limit: 8_000)
        #expect(
            report.answerText
                == "answer: the generator's limit, not the endpoint's: p99 < 25ms kept up to 7,800/s (confirmed); at 8,000/s "
                + "the generator fell behind its schedule; the endpoint failed p99 < 25ms at 16,000/s, so its limit lies "
                + "below that. Offer more with more --threads or more machines to find the endpoint's limit"
        )
        report.steps.removeSubrange(2...2)
        #expect(
            report.answerText
                == "answer: the generator's limit, not the endpoint's: every rate it offered kept p99 < 25ms, up to 7,800/s "
                + "(confirmed); at 8,000/s the generator fell behind its schedule. Offer more with more --threads or more "
                + "machines to find the endpoint's limit"
        )
    }

    /// The y of every `<line class="slo">`.
    static func sloLines(_ html: String) -> [Double] {
        html.matches(of: /<line class="slo" x1="[0-9.]+" x2="[0-9.]+" y1="([0-9.]+)" y2="[0-9.]+"/).map {
            Double($0.output.1)!
        }
    }

    /// p99 up to 40 ms on a linear axis to 50 ms: 25 ms lies halfway up the plot.
    @Test func theSLOLineSitsAtTheObjectivesValue() throws {
        let html = try Self.report(p50: [1, 2, 5], p99: [2, 8, 40]).html
        let lines = Self.sloLines(html)
        #expect(lines == [ChartFrame.top + ChartFrame.plotHeight / 2], "\(lines)")
        let page = HTMLDocument(html)
        let chart = try #require(page.chart("p50 and p99 against offered rate"))
        #expect(chart.texts("text").count { $0 == "SLO p99 < 25ms" } == 1, "\(chart.texts("text"))")
        #expect(page.elements(class: "log-scale").isEmpty)
    }

    /// Only latency objectives with a value are drawn: an error share or a relative limit has no
    /// place on a chart of milliseconds.
    @Test func onlyLatencyObjectivesAreDrawn() throws {
        let html = try Self.report(p50: [1, 2], p99: [2, 8], objectives: ["errors < 1%", "throughput > 10/s"]).html
        #expect(Self.sloLines(html).isEmpty)
    }

    /// From 0.2 ms to 400 ms (more than three decades) the axis is logarithmic, 0.1 to 1,000 ms,
    /// and the 25 ms line sits at log10(25) on it.
    @Test func latenciesSpanningDecadesGetALogAxis() throws {
        let html = try Self.report(p50: [0.2, 0.3, 30], p99: [0.5, 0.9, 400]).html
        #expect(HTMLDocument(html).elements("text", class: "log-scale").count == 1)
        let expected = ChartFrame.top + ChartFrame.plotHeight * (1 - (log10(25) + 1) / 4)
        let lines = Self.sloLines(html)
        try #require(lines.count == 1)
        #expect(abs(lines[0] - expected) < 0.06, "\(lines[0]) against \(expected)")
    }

    @Test func theScaleIsLinearUnderTwoDecades() {
        #expect(!ChartFrame.ValueScale.fitting([1, 50, 99]).isLogarithmic)
        let scale = ChartFrame.ValueScale.fitting([0.02, 3, 150])
        #expect(scale.bottom == 0.01 && scale.top == 1000)
        // 1 ms is two decades up of the five, 0.01 to 1,000 ms.
        #expect(abs(scale.fraction(1) - 0.4) < 1e-12)
    }
}
