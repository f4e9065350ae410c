import FanoutAPNs
import FanoutEndpoint
import FanoutHTTP2
import FanoutMeasure
import FanoutPayload
import FanoutResults
import Foundation
import Histogram
import Testing

@testable import FanoutAssembly
@testable import FanoutClient
@testable import FanoutReport

/// Every file of a run folder for one fixed run, byte for byte against Tests/FanoutReportTests/
/// Golden (set FANOUT_UPDATE_GOLDEN=1 to write them again after a deliberate change, then read
/// the diff).
struct GoldenFilesTests {
    static let golden = repositoryRootFromHere + "/Tests/FanoutReportTests/Golden"
    static var repositoryRootFromHere: String {
        var path = #filePath
        for _ in 0..<3 { path = String(path[..<path.lastIndex(of: "/")!]) }
        return path
    }

    /// The sender's one loop: lag sampled 600 times, 6,000 answers read, 750 of them timed,
    /// 31 ms of CPU.
    static func senderDelays() -> LoopDelays {
        var loop = LoopDelays()
        _ = loop.loopLag.record(60, count: 594)
        _ = loop.loopLag.record(2_500, count: 6)
        _ = loop.readDelay.record(20, count: 5_940)
        _ = loop.readDelay.record(900, count: 60)
        // 750 timed answers (one in 8): the way back, and latency less the sink's hold.
        _ = loop.returnPath.record(80, count: 740)
        _ = loop.returnPath.record(1_200, count: 10)
        _ = loop.own.record(300, count: 740)
        _ = loop.own.record(2_000, count: 10)
        // Of that share, the sender's: its send lateness and the way back.
        _ = loop.senderShare.record(110, count: 740)
        _ = loop.senderShare.record(1_300, count: 10)
        loop.cpuNanoseconds = 31_000_000
        return loop
    }

    /// An open-model run of 3 seconds: 6,000 sent, some rejected and failed, a stall in second 1.
    static func summary() throws -> RunSummary {
        var seconds: [Histogram<UInt64>] = []
        var total = LoadStatistics.makeHistogram()
        for second in 0..<3 {
            var histogram = LoadStatistics.makeHistogram()
            for index in 0..<1990 {
                let value = UInt64(800 + (index * 37) % 4000) + (second == 1 && index % 4 == 0 ? 400_000 : 0)
                _ = histogram.record(value)
            }
            total.add(histogram)
            seconds.append(histogram)
        }
        var lag = LoadStatistics.makeHistogram()
        _ = lag.record(900, count: 5970)
        _ = lag.record(12_000)
        let intervals = seconds.enumerated().map { second, histogram in
            LoadInterval(
                second: second,
                completed: 2000,
                latencies: PackedHistogram(histogram),
                p50: histogram.valueAtPercentile(50),
                p90: histogram.valueAtPercentile(90),
                p99: histogram.valueAtPercentile(99),
                max: histogram.max,
                maxLag: second == 1 ? 12_000 : 900,
                maxLoopLag: second == 1 ? 2_500 : 60,
                readDelayP99: second == 1 ? 900 : 20,
                rejected: [.apns(.unregistered): second == 1 ? 14 : 3],
                failed: second == 1 ? [.timeout: 10] : [:],
                connections: second < 2 ? 4 : nil,
                inFlight: second < 2 ? [60, 900][second] : nil
            )
        }
        var digest = NotificationDigest()
        for index in 0..<5970 { digest.add(hash: UInt64(index) &* 0x9E37_79B9_7F4A_7C15) }
        let snapshot = LoadSnapshot(
            requests: 6012,
            accepted: 5970,
            rejected: [.apns(.unregistered): 20],
            failed: [.timeout: 10],
            skipped: [:],
            retries: 12,
            answeredOK: 5970,
            answers: [.apns(.unregistered): 20, .apns(.internalServerError): 12],
            digest: digest,
            connectionsOpened: 4,
            connectionFailures: 0,
            unscheduled: 0,
            latency: total,
            lag: lag,
            intervals: intervals
        )
        let schedule = try ArrivalSchedule(rate: 2000, duration: .seconds(3))
        let report = LoadEngine.Report(
            snapshot: snapshot,
            elapsed: .milliseconds(3012),
            tokens: nil,
            cancelled: false,
            gaveUp: nil,
            started: Date(timeIntervalSince1970: 1_795_330_800),
            schedule: schedule,
            warmUp: .zero,
            maxLag: .milliseconds(100),
            senderCPU: .milliseconds(31),
            loopDelays: [Self.senderDelays()]
        )
        var configuration = LoadConfiguration(
            host: "127.0.0.1",
            port: 2197,
            headers: try NotificationHeaders(topic: "com.example.app"),
            encoder: PayloadEncoder(template: try PayloadTemplate(json: Array(#"{"aps":{"alert":"hi"}}"#.utf8)))
        )
        configuration.shape.model.schedule = schedule
        var summary = RunSummary(
            report: report,
            endpoint: "http://127.0.0.1:2197",
            configuration: configuration,
            tokenSource: "generated: 6000, seed 1"
        )
        summary.sinkCPU = .milliseconds(18)
        summary.sinkDelays = SinkOwnDelays(
            lateness: DelayPercentiles(count: 6000, p50: 45, p99: 380, max: 2_900),
            fromSend: DelayPercentiles(count: 6000, p50: 110, p99: 640, max: 3_300),
            injected: DelayPercentiles(count: 6000, p50: 10_000, p99: 10_000, max: 10_010),
            loopLag: DelayPercentiles(count: 600, p50: 35, p99: 310, max: 2_700),
            loopUtilisation: [0.006]
        )
        summary.environment = RunEnvironment(
            build: "release",
            allocator: "jemalloc",
            cpu: "Example CPU @ 2.80GHz",
            cores: 2,
            operatingSystem: "Debian GNU/Linux 12 (bookworm)",
            hostname: "golden"
        )
        return summary
    }

    @Test(arguments: RunSummary.files)
    func eachFileIsTheGoldenOne(name: String) throws {
        let folder = NSTemporaryDirectory() + "fanout-golden-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try Self.summary().write(to: folder)
        let written = try String(contentsOfFile: folder + "/" + name, encoding: .utf8)
        let goldenPath = Self.golden + "/" + name
        if ProcessInfo.processInfo.environment["FANOUT_UPDATE_GOLDEN"] == "1" {
            try FileManager.default.createDirectory(atPath: Self.golden, withIntermediateDirectories: true)
            try written.write(toFile: goldenPath, atomically: true, encoding: .utf8)
        }
        let expected = try String(contentsOfFile: goldenPath, encoding: .utf8)
        let writtenLines = written.split(separator: "\n", omittingEmptySubsequences: false)
        let expectedLines = expected.split(separator: "\n", omittingEmptySubsequences: false)
        let firstDifference = zip(writtenLines, expectedLines).enumerated().first { $0.element.0 != $0.element.1 }
        #expect(
            written == expected,
            "\(name) differs from its golden file at line \((firstDifference?.offset ?? min(writtenLines.count, expectedLines.count)) + 1): \(firstDifference.map { "\($0.element.0)" } ?? "(length)")"
        )
    }

    /// The devices' section of report.html (issue #51) for a fixed delivery, byte for byte
    /// against Golden/delivery-section.html.
    @Test func theDeliverySectionIsTheGoldenOne() throws {
        var summary = try Self.summary()
        summary.delivery = HTMLReportTests.delivery()
        let document = summary.document
        let written = HTMLReport(summary: document, latency: LoadStatistics.makeHistogram())
            .deliverySection(try #require(document.delivery))
        let goldenPath = Self.golden + "/delivery-section.html"
        if ProcessInfo.processInfo.environment["FANOUT_UPDATE_GOLDEN"] == "1" {
            try written.write(toFile: goldenPath, atomically: true, encoding: .utf8)
        }
        let expected = try String(contentsOfFile: goldenPath, encoding: .utf8)
        #expect(written == expected)
    }
}
