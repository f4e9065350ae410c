import FanoutAPNs
import FanoutMeasure
import Foundation
import Histogram
import Testing

@testable import FanoutReport

/// The sink's folder from known figures: the fan-out, the seconds, the capacity line, the gate.
@Suite struct SinkRunReportTests {
    static func connection(
        id: Int,
        requests: Int,
        busy: Double,
        mean: Double,
        peak: Int
    ) -> SummaryDocument.Provider.Connection {
        .init(
            id: id,
            peer: "127.0.0.1:\(40000 + id)",
            openedSeconds: 0,
            closedSeconds: busy,
            closedBy: "provider",
            requests: requests,
            accepted: requests,
            share: 0.5,
            peakStreams: peak,
            meanStreams: mean,
            busySeconds: busy,
            refusedStreams: 0
        )
    }

    /// Accepted arrivals at 0.2 s, 0.7 s (twice) and 1.5 s since the mark; a rejected one at 1.9 s.
    static func measurements(violations: Int = 0) -> SinkRunReport.Measurements {
        var deliveries = makeMicrosecondHistogram()
        var arrivals = makeMicrosecondHistogram()
        for microseconds: UInt64 in [200_000, 700_000, 700_000, 1_500_000] {
            _ = deliveries.record(microseconds)
            _ = arrivals.record(microseconds)
        }
        _ = arrivals.record(1_900_000)
        return SinkRunReport.Measurements(
            listen: "127.0.0.1:2197",
            tls: false,
            tokenAuth: false,
            started: Date(timeIntervalSince1970: 1_800_000_000),
            mark: Date(timeIntervalSince1970: 1_800_000_001),
            markKind: "first-request",
            requests: 5,
            accepted: 4,
            rejected: [.unregistered: 1],
            retries: 0,
            digest: "4 notifications, digest 0-0",
            deliveries: deliveries,
            arrivals: arrivals,
            firstAccepted: 200_000_000,
            lastAccepted: 1_500_000_000,
            streamLimit: 1000,
            initialStreams: 1,
            connections: [
                connection(id: 1, requests: 20_000, busy: 2, mean: 100, peak: 200),
                connection(id: 2, requests: 100, busy: 2, mean: 1, peak: 1),
            ],
            connectionsNotListed: 0,
            card: .init(
                checks: ProviderRule.allCases.map {
                    .init(rule: $0, count: $0 == .churn ? violations : 0, examples: [])
                },
                forgotten: 0
            ),
            sinkOwn: SinkOwnDelays().figures,
            sinkCPUSeconds: 0.5,
            expected: .init(notifications: 4, tokens: nil, tokensSeen: nil, reached: true),
            endedBy: "expect",
            trigger: nil,
            planRTT: .milliseconds(80),
            scenario: "latency fixed(10 ms)"
        )
    }

    @Test func theFanOutIsTheLastAcceptedArrivalAndTheSecondsAreItsSlices() {
        let report = SinkRunReport(Self.measurements())
        let document = report.document
        #expect(document.kind == "sink" && document.isSink)
        #expect(document.elapsedSeconds == 1.5)
        #expect(document.throughputPerSecond == 4 / 1.5)
        #expect(document.intervals.map(\.completed) == [3, 1])
        let provider = report.provider
        #expect(provider.delivery.firstMs == 200 && provider.delivery.lastMs == 1500)
        #expect(provider.perSecond.map(\.received) == [3, 2])
        #expect(provider.perSecond.map(\.accepted) == [3, 1])
        #expect(provider.streams.peak == 200)
        #expect(provider.card.passed && provider.card.violations == 0)
        #expect(document.valid)
    }

    /// Little's law per connection: 10,000/s with 100 in flight (held 10 ms) carries at most
    /// 200 ÷ 80 ms = 2,500/s at 80 ms; 50/s with 1 in flight keeps its 50/s (1 ÷ 80 ms = 12.5/s caps it).
    @Test func capacityIsEachConnectionsRateCappedByItsStreamsOverTheRoundTrip() {
        let capacity = SinkRunReport(Self.measurements()).provider.capacity
        #expect(capacity.connections == 2)
        #expect(abs(capacity.total - (2500 + 12.5)) < 1e-9)
        #expect(abs(capacity.heldMs - (10 + 20) / 2) < 1e-9)
        #expect(
            capacity.text.hasPrefix("at 80.0 ms this provider carries about 1,256/s a connection, 2,513/s in all"),
            "\(capacity.text)"
        )
    }

    @Test func anUnreachedExpectationMakesTheFolderInvalidAndTheGateSaysSo() throws {
        var measurements = Self.measurements(violations: 3)
        measurements.expected = .init(notifications: 10, tokens: nil, tokensSeen: nil, reached: false)
        measurements.endedBy = "idle-exit"
        let report = SinkRunReport(measurements)
        #expect(
            report.invalidReasons == [
                "4 of the 10 notifications expected were accepted before the sink stopped (idle-exit)"
            ]
        )
        let folder = NSTemporaryDirectory() + "fanout-sink-report-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try report.write(to: folder)
        let read = try SummaryDocument.read(folder + "/summary.json")
        #expect(read == report.document)
        #expect(read.provider?.card.count(.churn) == 3)
        let gate = try Gate(run: folder, baseline: nil, thresholds: ["violations.churn == 0"], file: nil).evaluate()
        #expect(gate.status == .invalid)
        // A run's folder has no card: gating on one is an error that says so.
        let error = #expect(throws: GateError.self) {
            try Gate(run: GoldenFilesTests.golden, baseline: nil, thresholds: ["violations == 0"], file: nil)
        }
        #expect(error?.description.contains("is not a sink's folder") == true, "\(String(describing: error))")
    }
}
