import FanoutTestSupport
import Foundation
import Testing

@testable import FanoutSink

/// The sink's `/metrics` histograms (its own delays, and with a device fleet its delivery and
/// fan-out times): classic Prometheus histograms whose `+Inf` bucket is the count, read clean by
/// Prometheus's own linter, without a fleet and with one that delivered.
@Suite struct SinkMetricsHistogramTests {
    static let families = [
        "fanout_sink_answer_lateness_seconds", "fanout_sink_answer_lateness_from_send_seconds",
        "fanout_sink_answer_injected_delay_seconds",
    ]
    static let fleetFamilies = [
        "fanout_sink_device_delivery_latency_seconds", "fanout_sink_device_fanout_time_seconds",
    ]

    /// The value of the sample line `series` (name and labels as written) in `text`.
    static func sample(_ series: String, in text: String) -> Double? {
        text.split(separator: "\n").first { $0.hasPrefix(series + " ") }
            .flatMap { Double($0.dropFirst(series.count + 1)) }
    }

    static func promtool(_ text: String) throws {
        let remarks = try promtoolRemarks(text)
        #expect(remarks == nil, "\(remarks ?? "")")
    }

    /// The exposition of a sink whose low-power fleet delivered `delivered` priority-10
    /// notifications at once, and that of a sink without a fleet.
    static func expositions(delivered: Int) throws -> (fleet: String, bare: String) {
        // A low-power fleet delivers priority-10 notifications at once.
        var configuration = SinkConfiguration()
        configuration.scenario.devices.lowPower = 1
        configuration.idleTimeout = nil
        configuration.requestTimeout = nil
        let state = SinkState(scenario: configuration.scenario)
        var harness = SinkHarness(configuration, state: state)
        let fleet = try #require(state.fleet)
        for index in 0..<delivered {
            let token = String(repeating: String(format: "%02x", index + 1), count: 32)
            let answer = harness.send(SinkHarness.fields(token: token, [("apns-priority", "10")]))
            #expect(answer?.status == 200)
        }
        #expect(fleet.snapshot().counts.delivered == delivered)
        return (
            SinkMetrics().exposition(of: harness.statistics, fleet: fleet),
            SinkMetrics().exposition(of: SinkStatistics())
        )
    }

    @Test(arguments: [0, 5])
    func histogramsAddUp(delivered: Int) throws {
        let (text, bare) = try Self.expositions(delivered: delivered)
        for family in Self.families + Self.fleetFamilies {
            #expect(lines(of: text, keyed: "# TYPE \(family) ") == ["# TYPE \(family) histogram"], "\(text)")
            let count = try #require(Self.sample(family + "_count", in: text), "\(family) in \(text)")
            #expect(Self.sample(family + "_bucket{le=\"+Inf\"}", in: text) == count)
        }
        for family in Self.fleetFamilies {
            #expect(Self.sample(family + "_count", in: text) == Double(delivered))
        }
        // Without a fleet, no delivery histograms.
        for family in Self.fleetFamilies { #expect(!bare.contains(family)) }
        for family in Self.families {
            #expect(lines(of: bare, keyed: "# TYPE \(family) ") == ["# TYPE \(family) histogram"], "\(bare)")
        }
    }

    @Test(.requires(.promtool), arguments: [0, 5])
    func promtoolReadsTheHistogramsClean(delivered: Int) throws {
        let (text, bare) = try Self.expositions(delivered: delivered)
        try Self.promtool(text)
        try Self.promtool(bare)
    }
}
