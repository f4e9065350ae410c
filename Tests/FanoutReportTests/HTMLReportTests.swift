import FanoutAPNs
import FanoutResults
import FanoutTestSupport
import Foundation
import Histogram
import Testing

@testable import FanoutClient
@testable import FanoutReport

/// report.html's charts of seconds, read from the SVG it writes: what is shaded, where the lines
/// break, the offered rate, and the exact figures on hover.
struct HTMLReportTests {
    /// The golden run's summary (3 seconds of an open model at 2,000/s), to change one field at a time.
    static func summary() throws -> SummaryDocument {
        try SummaryDocument.read(GoldenFilesTests.golden + "/summary.json")
    }

    static func html(_ summary: SummaryDocument) -> String {
        var latency = LoadStatistics.makeHistogram()
        _ = latency.record(1_000, count: 100)
        return HTMLReport(summary: summary, latency: latency).html
    }

    static func page(_ summary: SummaryDocument) -> HTMLDocument {
        HTMLDocument(html(summary))
    }

    /// The tooltips (`<title>`s) of the chart labelled `label`, in the order drawn; none when
    /// the page has no such chart.
    static func tips(_ page: HTMLDocument, _ label: String) -> [String] {
        page.chart(label)?.texts("title") ?? []
    }

    /// The `x` and `width` of every rect of `class`.
    static func rects(_ html: String, class name: String) -> [(x: Double, width: Double)] {
        html.matches(of: try! Regex("<rect class=\"\(name)\" x=\"([0-9.]+)\" y=\"[0-9.]+\" width=\"([0-9.]+)\"")).map {
            (Double($0.output[1].substring!)!, Double($0.output[2].substring!)!)
        }
    }

    @Test func theWarmUpIsShadedOverExactlyItsSeconds() throws {
        var summary = try Self.summary()
        summary.warmUpSeconds = 2
        // What a warm-up of 2 s leaves: no latency in its seconds.
        for index in 0..<2 { summary.intervals[index].latencyCount = 0 }
        let html = Self.html(summary)
        let slot = ChartFrame.plotWidth / Double(summary.intervals.count)
        // One band on every chart of time (achieved, percentiles, outcomes, in flight, CPU),
        // each over the same 2 seconds of the one time axis.
        let bands = Self.rects(html, class: "warm-up")
        let charts = HTMLDocument(html).elements("svg").filter {
            $0.texts("text").last == "seconds from the run's start"
        }
        try #require(charts.count >= 4 && bands.count == charts.count, "\(bands) on \(charts.count) charts of time")
        for band in bands {
            #expect(band.x == ChartFrame.left)
            #expect(abs(band.width - 2 * slot) < 0.05, "\(band.width) for 2 seconds of \(slot)")
        }
        let tips = Self.tips(HTMLDocument(html), "latency percentiles per second")
        #expect(
            Array(tips.suffix(3).prefix(2)) == [
                "second 0: no latency measured (warm-up)", "second 1: no latency measured (warm-up)",
            ],
            "\(tips)"
        )
    }

    @Test func aRunWithoutWarmUpHasNoShade() throws {
        let html = Self.html(try Self.summary())
        #expect(Self.rects(html, class: "warm-up").isEmpty)
        let legend = HTMLDocument(html).chart("latency percentiles per second")?.texts("text")
        #expect(legend?.count { $0 == "warm-up (not measured)" } == 0, "\(legend ?? [])")
    }

    /// A second without latencies breaks the lines: it is not drawn as 0 ms.
    @Test func aSecondWithoutLatenciesBreaksTheLines() throws {
        var summary = try Self.summary()
        summary.intervals[1].latencyCount = 0
        summary.intervals[1].p50 = 0
        let html = Self.html(summary)
        let p50Lines = html.matches(of: /<polyline class="p50"[^>]* points="([^"]*)"/).map { String($0.output.1) }
        // Seconds 0 and 2 alone: two dots, and no point at the bottom of the plot.
        #expect(p50Lines.count == 2, "\(p50Lines)")
        let heights = p50Lines.flatMap { $0.split(separator: " ") }.compactMap { point in
            point.split(separator: ",").last.flatMap { Double($0) }
        }
        #expect(heights.count == 4 && !heights.contains(ChartFrame.top + ChartFrame.plotHeight), "\(p50Lines)")
    }

    @Test func eachSecondShowsItsExactPercentilesOnHover() throws {
        let summary = try Self.summary()
        let page = Self.page(summary)
        let expected = summary.intervals.map { interval in
            "second \(interval.second): p50 \(millisecondsWithUnit(interval.p50)), p90 \(millisecondsWithUnit(interval.p90)), p99 \(millisecondsWithUnit(interval.p99)), max \(millisecondsWithUnit(interval.max)) (\(grouped(interval.latencyCount)) measured)"
        }
        let tips = Self.tips(page, "latency percentiles per second")
        #expect(Array(tips.suffix(expected.count)) == expected, "\(tips)")
        let finished = Self.tips(page, "finished per second")
        #expect(finished.count { $0 == "second 1: 2,000 finished (2,000/s); offered 2,000/s" } == 1, "\(finished)")
    }

    /// A ramp from 0 to 2,000/s over 2 s offers 500 in the first second and 1,500 in the second.
    @Test func theOfferedRateIsTheSchedulesArrivalsInEachSecond() throws {
        var summary = try Self.summary()
        summary.schedule = SummaryDocument.Schedule(
            description: "0/s to 2000/s over 2s, then 1000/s for 1s",
            startRatePerSecond: 0,
            stages: [
                .init(durationSeconds: 2, targetPerSecond: 2000), .init(durationSeconds: 0, targetPerSecond: 1000),
                .init(durationSeconds: 1, targetPerSecond: 1000),
            ],
            planned: 3000
        )
        summary.elapsedSeconds = 3
        let offered = try #require(
            HTMLReport(summary: summary, latency: LoadStatistics.makeHistogram()).offeredPerSecond()
        )
        #expect(offered == [500, 1500, 1000])
        #expect(Self.page(summary).elements("polyline", class: "offered").count == 1)
    }

    /// An endless rate over a token set (`--rate 2000 --count 3000`) offers no more than the
    /// set: past its last notification the run only drains (it drew 2,000/s on to the end).
    @Test func anEndlessRateOffersNoMoreThanItsTokens() throws {
        var summary = try Self.summary()
        summary.schedule = SummaryDocument.Schedule(
            description: "2000/s",
            startRatePerSecond: 2000,
            stages: [],
            planned: nil
        )
        summary.sent = 3000
        summary.elapsedSeconds = 3
        let offered = try #require(
            HTMLReport(summary: summary, latency: LoadStatistics.makeHistogram()).offeredPerSecond()
        )
        #expect(offered == [2000, 1000, 0], "\(offered)")
    }

    /// A last second 2 ms long with 10 answers (5,000/s) does not set the rate axis: the other
    /// seconds' bars would be flattened under it.
    @Test func aLastSecondOfAFewMillisecondsDoesNotSetTheRateAxis() throws {
        var summary = try Self.summary()
        summary.schedule = nil
        let last = summary.intervals.count - 1
        summary.elapsedSeconds = Double(summary.intervals[last].second) + 0.002
        summary.intervals[last].completed = 10
        let widest = summary.intervals[..<last].map(\.completed).max() ?? 0
        let html = Self.html(summary)
        let labels = html.matches(of: />([0-9,]+)\/s<\/text>/).compactMap { Int($0.output.1.filter(\.isNumber)) }
        let top = try #require(labels.max())
        #expect(top >= widest && top < 5000, "axis top \(top) for seconds of up to \(widest)/s")
    }

    @Test func aShardOffersItsShareAndTheClosedModelNone() throws {
        var summary = try Self.summary()
        summary.shard = "2/4"
        #expect(
            HTMLReport(summary: summary, latency: LoadStatistics.makeHistogram()).offeredPerSecond() == [500, 500, 500]
        )
        summary.schedule = nil
        #expect(HTMLReport(summary: summary, latency: LoadStatistics.makeHistogram()).offeredPerSecond() == nil)
        let page = Self.page(summary)
        #expect(page.elements(class: "offered").isEmpty && page.count("h2", text: "Achieved per second") == 1)
    }

    /// The last second of a 2.5 s run lasted half a second: drawn half as wide, at its rate.
    @Test func thePartialLastSecondIsDrawnAtItsRateAndLength() throws {
        var summary = try Self.summary()
        summary.elapsedSeconds = 2.5
        summary.intervals[2].completed = 600
        let html = Self.html(summary)
        let bars = Self.rects(html, class: "achieved")
        try #require(bars.count == 3)
        #expect(abs(bars[2].width - bars[0].width / 2) < 0.1, "\(bars)")
        let tips = Self.tips(HTMLDocument(html), "finished per second")
        #expect(
            tips.count { $0 == "second 2 (the last 0.500 s): 600 finished (1,200/s); offered 2,000/s" } == 1,
            "\(tips)"
        )
        #expect(
            HTMLDocument(html).elements("p", class: "note").map(\.text).first
                == "The run lasted 2.50 s: Fanout records whole seconds (summary.json's intervals, latency.hlog), so the "
                + "charts below have 3 points; finer bins are not recorded."
        )
    }

    @Test func theSendersCPUIsACardWhenMeasured() throws {
        var summary = try Self.summary()
        #expect(Self.cards(Self.page(summary))["sender CPU"] == "5.17 µs/notification")
        summary.cpu = nil
        #expect(Self.cards(Self.page(summary))["sender CPU"] == nil)
    }

    /// The page's cards: each label with its value.
    static func cards(_ page: HTMLDocument) -> [String: String] {
        Dictionary(
            page.elements("div", class: "card").compactMap { card in
                guard let label = card.elements("div", class: "label").first,
                    let value = card.elements("div", class: "value").first
                else { return nil }
                return (label.text, value.text)
            },
            uniquingKeysWith: { first, _ in first }
        )
    }

    /// A fleet's delivery as `DeliveryReading` writes it: 1,000 received, 850 delivered (700 at
    /// once, 150 from storage over 0–60 s), 150 expired; `times` both the reach and the
    /// to-device figures (DeliveryGateTests gives its own, on the thresholds' edges).
    static func delivery(
        times: DeliverySummary.Times = .init(p50: 1, p90: 24_000, p99: 57_600, max: 60_000),
        curve: Bool = true
    ) -> DeliverySummary {
        var delivery = DeliverySummary()
        delivery.received = 1000
        delivery.delivered = 700
        delivery.deliveredFromStorage = 150
        delivery.storedOffline = 300
        delivery.discardedExpired = 150
        delivery.reachedMs = times
        delivery.toDeviceMs = times
        delivery.deliveredPerSecond = 850.0 / 60
        if curve {
            // 70% at once (82.4% of the delivered), then from storage, uniformly over 60 s.
            delivery.reachedCurve = DeliverySummary.curvePercents.map { percent in
                let share = 0.85 * percent / 100
                let ms = share <= 0.7 ? 1 : (share - 0.7) / 0.15 * 60_000
                return .init(ms: ms, share: share)
            }
        }
        return delivery
    }

    /// The devices' section of a run's page and of a sink's: the curve from (0, 0) through each
    /// point, its final share dashed across, each point's figures on hover, and Apple's
    /// categories with their counts and shares; none without a fleet.
    @Test func theDeliveryCurveAndTheCategoriesAreDrawn() throws {
        var summary = try Self.summary()
        #expect(Self.page(summary).count("h2", text: "Devices behind the sink") == 0)
        summary.delivery = Self.delivery()
        let html = Self.html(summary)
        let page = HTMLDocument(html)
        #expect(page.count("h2", text: "Devices behind the sink") == 1)
        let curve = try #require(page.chart("delivery curve"))
        #expect(curve.elements("polyline").count { $0.attributes["stroke"] == HTMLReport.DeliveryColour.curve } == 1)
        let points = HTMLReport.curvePoints(Self.delivery())
        #expect(points.count == DeliverySummary.curvePercents.count)
        // The x axis reaches past the last delivery (60 s), the y axis 100% of received.
        let (x, y) = ChartFrame.position(60_000, 0.85, xTop: ChartFrame.niceCeiling(60_000), yTop: 1)
        let last = try #require(curve.elements("circle").last)
        #expect(
            last.attributes["cx"] == String(format: "%.1f", x) && last.attributes["cy"] == String(format: "%.1f", y)
        )
        #expect(last.texts("title") == ["85.00% of received reached by 60.0 s"])
        #expect(HTMLReport.deliveryTime(250) == millisecondsWithUnit(250) && HTMLReport.deliveryTime(0) == "0 s")
        #expect(HTMLReport.deliveryTime(720_000) == "12.0 min" && HTMLReport.deliveryTime(3 * 86_400_000) == "3.0 d")
        #expect(curve.elements("line", class: "delivered").map(\.text) == ["delivered in the end: 85.00% of received"])
        // Each category's name, then its count and share.
        let labels = page.chart("delivery categories")?.texts("text") ?? []
        let categories = Dictionary(
            stride(from: 0, to: labels.count - 1, by: 2).map { (labels[$0], labels[$0 + 1]) },
            uniquingKeysWith: { first, _ in first }
        )
        #expect(categories["Discarded – Expired"] == "150 (15.00%)", "\(labels)")
        #expect(categories["Delivered to Device"] == "700 (70.00%)", "\(labels)")
        // A folder from before the curve: its four figures.
        let older = HTMLReport.curvePoints(Self.delivery(curve: false))
        #expect(older.map(\.ms) == [1, 24_000, 57_600, 60_000])
        #expect(older.map(\.share) == [0.425, 0.765, 0.8415, 0.85])
        // Nothing delivered: said, no curve.
        var none = DeliverySummary()
        none.received = 10
        none.discardedExpired = 10
        summary.delivery = none
        let nothing = Self.page(summary)
        #expect(nothing.chart("delivery curve") == nil)
        #expect(nothing.count("p", text: "Nothing was delivered to a device.") == 1)
    }

    /// Each second's rejections and failures are stacked by reason, each segment as tall as its
    /// count on the chart's axis, with the counts on hover.
    @Test func rejectionsAndFailuresPerSecondAreStackedByReason() throws {
        var summary = try Self.summary()
        summary.intervals[0].rejected = [.apns(.unregistered): 3]
        summary.intervals[0].failed = [:]
        summary.intervals[1].rejected = [.apns(.unregistered): 14, .apns(.badDeviceToken): 2]
        summary.intervals[1].failed = [.timeout: 10]
        summary.intervals[2].rejected = [:]
        summary.intervals[2].failed = [:]
        let html = Self.html(summary)
        let page = HTMLDocument(html)
        #expect(page.count("h2", text: "Rejected and failed per second, by reason") == 1)
        let segment =
            #"<rect class="outcome" x="[0-9.]+" y="[0-9.]+" width="[0-9.]+" height="([0-9.]+)" fill="[^"]+">"#
            + #"<title>([^<]*)</title>"#
        let segments = html.matches(of: try Regex(segment)).map {
            (height: Double($0.output[1].substring!)!, title: String($0.output[2].substring!))
        }
        #expect(
            segments.map(\.title) == [
                "second 0: rejected Unregistered 3", "second 1: rejected BadDeviceToken 2",
                "second 1: rejected Unregistered 14", "second 1: failed Timeout 10",
            ]
        )
        // Second 1's 26 set the axis at 50: a count of 10 is a fifth of the plot.
        for segment in segments {
            let count = Double(segment.title.split(separator: " ").last!)!
            #expect(abs(segment.height - ChartFrame.plotHeight * count / 50) < 0.05, "\(segment)")
        }
        let tips = Self.tips(page, "rejected and failed per second")
        #expect(
            tips.count {
                $0
                    == "second 1: 26 rejected or failed (rejected BadDeviceToken 2, rejected Unregistered 14, failed Timeout 10)"
            } == 1,
            "\(tips)"
        )
        #expect(tips.count { $0 == "second 2: none rejected or failed" } == 1, "\(tips)")
    }

    /// A summary that keeps no reasons per second (before schema 8) says so instead of a chart;
    /// one that does, with nothing rejected or failed, says that.
    @Test func withoutReasonsPerSecondThereIsANoteNotAChart() throws {
        var summary = try Self.summary()
        for index in summary.intervals.indices {
            summary.intervals[index].rejected = nil
            summary.intervals[index].failed = nil
        }
        var page = Self.page(summary)
        #expect(page.elements(class: "outcome").isEmpty && page.chart("rejected and failed per second") == nil)
        #expect(page.count("h2", text: "Rejected and failed per second, by reason") == 0)
        let notes = page.elements("p", class: "note").map(\.text)
        #expect(
            notes.count {
                $0
                    == "Outcomes are counted over the whole run: this summary.json (schema \(summary.schemaVersion)) keeps no count by reason per second, so there is no chart of errors over time."
            } == 1,
            "\(notes)"
        )
        for index in summary.intervals.indices {
            summary.intervals[index].rejected = [:]
            summary.intervals[index].failed = [:]
        }
        page = Self.page(summary)
        #expect(page.elements(class: "outcome").isEmpty && page.chart("rejected and failed per second") == nil)
        #expect(page.count("p", text: "No notification was rejected or failed in any second.") == 1)
    }

    /// What was in flight at each second's end: a point at the end of the second, on its own axis
    /// for each line, with the figures on hover; the run's last second, not marked, breaks them.
    @Test func connectionsAndNotificationsInFlightAreDrawnAtEachSecondsEnd() throws {
        var summary = try Self.summary()
        summary.intervals[0].inFlight = 400
        summary.intervals[0].connections = 4
        summary.intervals[1].inFlight = 1000
        summary.intervals[1].connections = 3
        summary.intervals[2].inFlight = nil
        summary.intervals[2].connections = nil
        let html = Self.html(summary)
        let page = HTMLDocument(html)
        #expect(page.count("h2", text: "Connections and notifications in flight") == 1)
        let slot = ChartFrame.plotWidth / 3
        func points(_ name: String) -> [String] {
            html.matches(of: try! Regex("<polyline class=\"\(name)\"[^>]* points=\"([^\"]*)\"")).map {
                String($0.output[1].substring!)
            }
        }
        // In flight on an axis to 1,000; connections on one to 5.
        func expected(_ shares: [(Int, Double)]) -> [String] {
            let coordinates = shares.map { index, share in
                let y = ChartFrame.top + ChartFrame.plotHeight * (1 - share)
                return String(format: "%.1f,%.1f", ChartFrame.left + slot * Double(index), y)
            }
            return [coordinates.joined(separator: " ")]
        }
        #expect(points("in-flight") == expected([(1, 400.0 / 1000), (2, 1.0)]))
        #expect(points("connections") == expected([(1, 4.0 / 5), (2, 3.0 / 5)]))
        let tips = Self.tips(page, "connections and notifications in flight")
        #expect(
            Array(tips.suffix(2)) == [
                "end of second 1: 1,000 in flight on 3 connections",
                "end of second 2: not recorded (the run's last second)",
            ],
            "\(tips)"
        )
    }

    /// The sender's CPU a second, as cores busy, with the CPU a notification on hover; a second
    /// not measured has no bar.
    @Test func theSendersCPUIsDrawnASecond() throws {
        var summary = try Self.summary()
        summary.elapsedSeconds = 3
        summary.intervals[0].cpu = 500
        summary.intervals[1].cpu = 1500
        summary.intervals[2].cpu = nil
        let html = Self.html(summary)
        let page = HTMLDocument(html)
        #expect(page.count("h2", text: "Sender CPU per second") == 1)
        let bar = /<rect class="cpu" x="[0-9.]+" y="[0-9.]+" width="[0-9.]+" height="([0-9.]+)"/
        let bars = html.matches(of: bar).map { Double($0.output.1)! }
        // 0.5 and 1.5 cores on an axis to 2.
        try #require(bars.count == 2, "\(bars)")
        #expect(abs(bars[0] - ChartFrame.plotHeight * 0.25) < 0.051, "\(bars)")
        #expect(abs(bars[1] - ChartFrame.plotHeight * 0.75) < 0.051, "\(bars)")
        let second1 = "second 1: 1500.0 ms of CPU (1.50 cores), 750.00 µs a notification finished"
        let tips = Self.tips(page, "sender CPU per second")
        #expect(Array(tips.suffix(2)) == [second1, "second 2: CPU not measured"], "\(tips)")
    }
}
