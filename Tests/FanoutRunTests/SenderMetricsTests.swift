import FanoutAPNs
import FanoutMeasure
import FanoutTestSupport
import Foundation
import Testing

@testable import FanoutClient
@testable import FanoutRun

/// The sender's `/metrics` as Prometheus's own linter reads it, empty and after answers, with and
/// without a shard label: every family typed as what it is (counters, a gauge, the latency's
/// summary and its histogram).
@Suite struct SenderMetricsTests {
    static func snapshot(latencies: [UInt64]) -> LoadSnapshot {
        var latency = LoadStatistics.makeHistogram()
        for value in latencies { latency.record(value) }
        return LoadSnapshot(
            requests: latencies.count,
            accepted: latencies.count,
            rejected: latencies.isEmpty ? [:] : [.apns(.unregistered): 1],
            failed: [:],
            skipped: [:],
            retries: 0,
            answeredOK: latencies.count,
            answers: [:],
            digest: NotificationDigest(),
            connectionsOpened: 1,
            connectionFailures: 0,
            unscheduled: 0,
            latency: latency,
            lag: LoadStatistics.makeHistogram(),
            intervals: []
        )
    }

    @Test(
        .requires(.promtool),
        arguments: [[], [900, 81_000, 82_500, 120_000]] as [[UInt64]],
        [nil, "2/3"] as [String?]
    )
    func promtoolChecksTheExpositionClean(latencies: [UInt64], shard: String?) throws {
        let text = SenderMetrics.exposition(
            of: Self.snapshot(latencies: latencies),
            shard: shard,
            into: PrometheusMetrics(subsystem: "sender")
        )
        let exposition = try #require(PrometheusExposition(text), "\(text)")
        #expect(exposition.types["fanout_sender_latency_seconds"] == "summary")
        #expect(exposition.types["fanout_sender_notification_latency_seconds"] == "histogram")
        let labels = (shard.map { ["shard": $0] } ?? [:]).merging(["le": "+Inf"]) { $1 }
        #expect(
            exposition.value("fanout_sender_notification_latency_seconds_bucket", labels) == Double(latencies.count),
            "\(text)"
        )
        let remarks = try promtoolRemarks(text)
        #expect(remarks == nil, "\(remarks ?? "")")
    }
}
