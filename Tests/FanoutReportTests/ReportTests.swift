import FanoutClient
import FanoutRun
import FanoutSink
import FanoutTestSupport
import Foundation
import Testing

@testable import FanoutReport

/// `report.html` and `summary.md`: self-contained, and drawn by a real browser (Debian's
/// headless Chromium) into a page that is not blank.
@Suite(.serialized) struct ReportTests {
    /// A short open-model run with some rejections, written to a temporary folder.
    static func writtenRun() throws -> String {
        var job = RunJob()
        job.count = 8000
        job.shape.model.schedule = try ArrivalSchedule(rate: 3000, duration: .milliseconds(2500))
        // The pages, not the generator's lag, are these tests' subject: beside the other suites
        // on 2 shared cores the run once fell behind and its summary said invalid.
        job.shape.model.maxLag = .seconds(1)
        job.sink.scenario.errors = [(.unregistered, 0.05), (.badDeviceToken, 0.02)]
        let folder = NSTemporaryDirectory() + "fanout-report-\(UUID().uuidString)"
        try job.run().write(to: folder)
        return folder
    }

    /// Renders `page` with headless Chromium into `screenshot`.
    static func render(_ page: String, to screenshot: String) throws {
        let profile = NSTemporaryDirectory() + "fanout-chromium-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: profile) }
        let result = try PeerProcess.run(
            "chromium",
            [
                "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--user-data-dir=" + profile,
                "--screenshot=" + screenshot, "--window-size=1200,1900", "file://" + page,
            ],
            timeout: .seconds(90)
        )
        try #require(result.status == 0, "\(result.errors)")
    }

    static func check(_ screenshot: String, colours: [String]) throws -> PeerProcess.Result {
        try PeerProcess.run(
            "python3",
            [repositoryRoot + "/Tests/FanoutReportTests/Peers/check_render.py", screenshot] + colours,
            // It reads every pixel of a 1200×1900 screenshot in Python: past 60 s beside a full
            // suite and two busy loops.
            timeout: .seconds(300)
        )
    }

    @Test func theReportIsSelfContained() throws {
        let folder = try Self.writtenRun()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let html = try String(contentsOfFile: folder + "/report.html", encoding: .utf8)
        // Nothing is fetched: no script, no stylesheet or image by address, no CSS import.
        for pattern in ["<script", "<link", "src=", "href=", "@import", "url("] {
            #expect(!html.contains(pattern), "report.html contains \(pattern)")
        }
        let page = HTMLDocument(html)
        let headings = page.texts("h2")
        for heading in ["Latency by percentile", "Latency percentiles per second"] {
            #expect(headings.count { $0 == heading } == 1, "\(heading) in \(headings)")
        }
        // Whole seconds, or 100 ms bins for a short run.
        let rates = ["Offered and achieved per second", "Offered and achieved per second, in 100 ms bins"]
        #expect(headings.count { rates.firstIndex(of: $0) != nil } == 1, "\(headings)")
        #expect(page.elements("polyline", class: "offered").count == 1)
        let outcomes = page.chart("outcomes")?.texts("text") ?? []
        for row in ["rejected Unregistered", "rejected BadDeviceToken"] {
            #expect(outcomes.count { $0 == row } == 1, "\(row) in \(outcomes)")
        }
        #expect(page.elements("svg").count >= 5)
    }

    @Test(.requires(.chromium, .pillow)) func chromiumDrawsTheReportsCharts() throws {
        let folder = try Self.writtenRun()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try Self.render(folder + "/report.html", to: folder + "/report.png")
        let colours = [
            HTMLReport.Colour.spectrum, HTMLReport.Colour.throughput, HTMLReport.Colour.p50, HTMLReport.Colour.p90,
            HTMLReport.Colour.p99, HTMLReport.Colour.max, HTMLReport.Colour.rejected,
        ]
        let seen = try Self.check(folder + "/report.png", colours: colours)
        #expect(seen.status == 0, "\(seen.output)\(seen.errors)")
    }

    @Test(.requires(.chromium, .pillow)) func aBlankPageFailsTheRenderCheck() throws {
        let folder = NSTemporaryDirectory() + "fanout-blank-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try "<!DOCTYPE html><html><body><p>nothing</p></body></html>"
            .write(toFile: folder + "/blank.html", atomically: true, encoding: .utf8)
        try Self.render(folder + "/blank.html", to: folder + "/blank.png")
        let seen = try Self.check(folder + "/blank.png", colours: [HTMLReport.Colour.spectrum])
        #expect(seen.status == 1, "\(seen.output)")
    }

    @Test func theMarkdownSummaryHasTheVerdictAndTables() throws {
        let folder = try Self.writtenRun()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let markdown = try String(contentsOfFile: folder + "/summary.md", encoding: .utf8)
        #expect(markdown.hasPrefix("## Fanout run\n\n✅ valid · sender and sink agree · open model\n"), "\(markdown)")
        // The run's row, whole: what was sent and the shape, with the rate and seconds as numbers.
        let row = lines(of: markdown, keyed: "| 7,500 |")
        let figures =
            row.count == 1 ? row[0].wholeMatch(of: #/\| 7,500 \| ([0-9,]+)\/s \| 4 × 1000 \| ([0-9.]+) s \|/#) : nil
        #expect(
            figures.map { Int($0.1.replacing(",", with: "")) ?? 0 > 0 && Double($0.2) ?? 0 > 0 } == true,
            "\(markdown)"
        )
        #expect(
            lines(of: markdown, keyed: "| latency |") == ["| latency | p50 | p90 | p99 | p99.9 | p99.99 | max |"],
            "\(markdown)"
        )
        #expect(markdown.contains(/\| ms \| [\d.]+ \| [\d.]+ \| [\d.]+ \| [\d.]+ \| [\d.]+ \| [\d.]+ \|/))
        #expect(markdown.contains(/\| rejected Unregistered \| [\d,]+ \|/))
    }
}
