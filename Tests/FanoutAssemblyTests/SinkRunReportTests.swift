import FanoutAPNs
import FanoutMeasure
import FanoutPush
import FanoutReport
import FanoutResults
import FanoutTestSupport
import Foundation
import Histogram
import Testing

@testable import FanoutAssembly

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

    /// A run's folder (the golden one): not a sink's.
    static let goldenRun = repositoryRoot + "/Tests/FanoutReportTests/Golden"

    /// A fleet's outcomes with a delivery curve: 70% delivered at once, 15% from storage over 60 s.
    static func delivery() -> DeliverySummary {
        var delivery = DeliverySummary()
        delivery.received = 1000
        delivery.delivered = 700
        delivery.deliveredFromStorage = 150
        delivery.storedOffline = 300
        delivery.discardedExpired = 150
        delivery.reachedMs = DeliverySummary.Times(p50: 1, p90: 24_000, p99: 57_600, max: 60_000)
        delivery.toDeviceMs = delivery.reachedMs
        delivery.deliveredPerSecond = 850.0 / 60
        delivery.reachedCurve = DeliverySummary.curvePercents.map { percent in
            let share = 0.85 * percent / 100
            return .init(ms: share <= 0.7 ? 1 : (share - 0.7) / 0.15 * 60_000, share: share)
        }
        return delivery
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
        var measurements = SinkRunReport.Measurements(
            listen: "127.0.0.1:2197",
            tls: false,
            tokenAuth: false,
            started: Date(timeIntervalSince1970: 1_800_000_000),
            mark: Date(timeIntervalSince1970: 1_800_000_001),
            markKind: "first-request",
            requests: 5,
            accepted: 4,
            rejected: [.apns(.unregistered): 1],
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
                checks: ProviderRule.allCases.filter { $0.services.contains(.apns) }.map {
                    .init(rule: $0, service: .apns, count: $0 == .churn ? violations : 0, examples: [])
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
        // Five requests, on purpose: the fixture states its minimum (`--min-measured 1`).
        measurements.minMeasured = 1
        return measurements
    }

    @Test func theFanOutIsTheLastAcceptedArrivalAndTheSecondsAreItsSlices() {
        let report = SinkRunReport(Self.measurements())
        let document = report.document
        #expect(document.kind == .sink && document.isSink)
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

    /// The sink's page tabulates the sink's own settings (its scenario's latency and errors, its
    /// streams), not a run's keys that mean nothing for it.
    @Test func theSinksPageShowsTheSinksConfiguration() throws {
        var measurements = Self.measurements()
        measurements.scenario = "latency fixed(10 ms); errors Unregistered 3%"
        let document = SinkRunReport(measurements).document
        let page = HTMLDocument(HTMLReport(summary: document, latency: measurements.deliveries).html)
        #expect(page.count("h2", text: "The sink's configuration") == 1)
        // Each table row's two cells, by the first.
        let rows = Dictionary(
            page.elements("tr").map(\.children).filter { $0.count == 2 && $0.allSatisfy { $0.name == "td" } }
                .map { ($0[0].text, $0[1].text) },
            uniquingKeysWith: { first, _ in first }
        )
        #expect(rows["scenario (latency, errors)"] == "latency fixed(10 ms); errors Unregistered 3%")
        #expect(rows["streams a connection"] == "1 until its first request is accepted, then 1000")
        #expect(rows["listened on"] == "http://127.0.0.1:2197")
        for runKey in ["max_attempts", "push_type", "topic", "stream_timeout_seconds"] {
            #expect(rows[runKey] == nil, "\(runKey)")
        }
    }

    /// A sink with devices: its page has the delivery curve and Apple's categories after the
    /// card, and the card's fleet examples name their notification by apns-id; without devices,
    /// neither.
    @Test func theSinksPageDrawsItsDevices() throws {
        var measurements = Self.measurements()
        let without = HTMLReport(summary: SinkRunReport(measurements).document, latency: measurements.deliveries).html
        #expect(HTMLDocument(without).count("h2", text: "Devices behind the sink") == 0)
        measurements.delivery = Self.delivery()
        let id = "6f4a1c2e-0b3d-4e5f-8a9b-0c1d2e3f4a5b"
        let example = SummaryDocument.Provider.Card.Example(
            token: "",
            connection: 0,
            atSeconds: 1.5,
            detail: "sent with apns-expiration 0 while its device was offline (back 42.0 s later): discarded",
            apnsID: id
        )
        measurements.card = .init(
            checks: measurements.card.checks + [
                .init(rule: .expirationZeroOffline, service: .apns, count: 1, examples: [example])
            ],
            forgotten: 0
        )
        let html = HTMLReport(summary: SinkRunReport(measurements).document, latency: measurements.deliveries).html
        let page = HTMLDocument(html)
        let headings = page.texts("h2")
        let card = try #require(headings.firstIndex(of: "Conformance card"), "\(headings)")
        let devices = try #require(headings.firstIndex(of: "Devices behind the sink"), "\(headings)")
        #expect(card < devices)
        #expect(page.chart("delivery curve") != nil && page.chart("delivery categories") != nil)
        #expect(
            page.texts("td").filter { $0.hasPrefix("apns-id ") } == [
                "apns-id \(id) at 1.500 s: sent with apns-expiration 0 while its device was offline (back 42.0 s later): "
                    + "discarded"
            ]
        )
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

    /// A provider paced under what its streams would carry at the round trip shows its pace,
    /// and the line says so: 10 requests over 1 s with a peak of 5 streams would carry 62.5/s
    /// at 80 ms, so its 10/s is what it was sent (newcomer pass 3 read such a figure as a
    /// ceiling). Capped by its streams, as above, the line has no such words.
    @Test func aPacedProvidersCapacityIsSaidToBeItsPace() {
        let paced = SummaryDocument.Provider.Capacity(
            rttMs: 80,
            connections: [StreamsFigureTests.connection(1, peak: 5, mean: 1, from: 0, busy: 1)]
        )
        #expect(abs(paced.total - 10) < 1e-9)
        #expect(paced.text.hasSuffix("; what it was sent, not a ceiling: its streams would have carried more"))
        let capped = SinkRunReport(Self.measurements()).provider.capacity
        #expect(!capped.text.split(separator: ";").contains { $0.hasPrefix(" what it was sent") })
        // Its streams full on average (947 of a peak of 1000), a connection was held by them
        // even under the bound (newcomer pass 4 read "would have carried more" under "947.2 of 1000").
        let full = SummaryDocument.Provider.Capacity(
            rttMs: 80,
            connections: [StreamsFigureTests.connection(1, peak: 1000, mean: 947, from: 0, busy: 1)]
        )
        #expect(!full.text.split(separator: ";").contains { $0.hasPrefix(" what it was sent") }, "\(full.text)")
    }

    @Test func anUnreachedExpectationMakesTheFolderInvalidAndTheGateSaysSo() throws {
        var measurements = Self.measurements(violations: 3)
        measurements.expected = .init(notifications: 10, tokens: nil, tokensSeen: nil, reached: false)
        measurements.endedBy = "idle-exit"
        let report = SinkRunReport(measurements)
        #expect(
            report.invalidReasons == [
                .expectedNotReached(unit: .notifications, reached: 4, expected: 10, endedBy: "idle-exit")
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
            try Gate(run: Self.goldenRun, baseline: nil, thresholds: ["violations == 0"], file: nil)
        }
        #expect(
            error?.description
                == "violations == 0: violations is measured by fanout sink --output; \(Self.goldenRun) is not a sink's folder",
            "\(String(describing: error))"
        )
    }
}

/// The fleet's streams in flight are its connections' stream-seconds over the span they were
/// busy, so never above the sum of their peaks; the figure (93.1 in flight over one
/// connection whose peak was 21: its held answers' stream-seconds over a fan-out that ended at
/// the last arrival) cannot come out.
@Suite struct StreamsFigureTests {
    typealias Connection = SummaryDocument.Provider.Connection

    static func connection(_ id: Int, peak: Int, mean: Double, from: Double?, busy: Double) -> Connection {
        Connection(
            id: id,
            peer: "p",
            openedSeconds: 0,
            closedSeconds: nil,
            closedBy: nil,
            requests: 10,
            accepted: 10,
            share: 1,
            peakStreams: peak,
            meanStreams: mean,
            busySeconds: busy,
            refusedStreams: 0,
            busyFromSeconds: from
        )
    }

    @Test func oneConnectionsFleetIsThatConnection() {
        let streams = SummaryDocument.Provider.Streams(
            limit: 1000,
            initial: 1,
            connections: [Self.connection(1, peak: 21, mean: 17.1, from: 0.01, busy: 2.0)],
            fanoutSeconds: 0.367
        )
        #expect(abs(streams.meanInFlight - 17.1) < 1e-9)
        #expect(streams.meanPerConnection == 17.1 && streams.peak == 21)
    }

    @Test func theFleetIsNeverAboveTheSumOfItsPeaks() {
        var state: UInt64 = 43
        func unit() -> Double {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Double(state >> 11) / Double(1 << 53)
        }
        for _ in 0..<1_000 {
            let connections = (1...Int(1 + unit() * 8)).map { id -> Connection in
                let peak = Int(1 + unit() * 1000)
                return Self.connection(
                    id,
                    peak: peak,
                    mean: unit() * Double(peak),
                    from: unit() * 5,
                    busy: unit() * 5
                )
            }
            let streams = SummaryDocument.Provider.Streams(
                limit: 1000,
                initial: 1,
                connections: connections,
                fanoutSeconds: unit() * 3
            )
            let peaks = Double(connections.map(\.peakStreams).reduce(0, +))
            #expect(streams.meanInFlight <= peaks + 1e-6, "\(streams.meanInFlight) > \(peaks)")
            #expect(streams.meanPerConnection <= Double(streams.peak) + 1e-9)
        }
    }
}
