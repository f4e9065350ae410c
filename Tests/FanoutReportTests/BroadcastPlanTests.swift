import FanoutReport
import FanoutResults
import Foundation
import Testing

/// `fanout plan --broadcast`'s arithmetic: the broadcast requests and the per-token fan-out of
/// the same audience, each through `CapacityPlan`, and plan.json's `broadcast` section.
@Suite struct BroadcastPlanTests {
    static func plan(channels: UInt64, subscribers: UInt64, every: Duration, cpu: Double? = nil) -> BroadcastPlan {
        var base = CapacityPlan.Question(
            devices: 1,
            deadline: .seconds(1),
            roundTrip: .milliseconds(80),
            coresPerMachine: 2
        )
        base.cpuMicroseconds = cpu
        return BroadcastPlan(.init(channels: channels, subscribers: subscribers, updateEvery: every, base: base))
    }

    /// 100 channels × 10,000 subscribers every 10 s: 10 requests a second on one connection
    /// (1000 streams ÷ 85 ms carry 11,765 a second), 100,000 deliveries a second asked of APNs;
    /// per token the same audience is 100,000 notifications a second, 13 connections at 70%, and
    /// 85 s an update on the broadcast's one connection: it does not fit in 10 s.
    @Test func aHundredChannelsOfTenThousand() {
        let plan = Self.plan(channels: 100, subscribers: 10_000, every: .seconds(10))
        #expect(plan.requestRate == 10)
        #expect(plan.requests.connections == 1)
        #expect(abs(plan.requests.connectionCeiling - 1000 / 0.085) < 1e-6)
        #expect(abs(plan.connectionShare - 10 / (1000 / 0.085)) < 1e-12)
        #expect(plan.deliveriesPerSecond == 100_000)
        #expect(plan.perToken.question.devices == 1_000_000)
        #expect(plan.perToken.requiredRate == 100_000)
        #expect(plan.perToken.connections == 13)
        #expect(abs(plan.perTokenSecondsOnBroadcastConnections - (1_000_000 * 0.085 / 1000 + 0.085)) < 1e-9)
        #expect(!plan.perTokenFits)
    }

    /// A small audience fits per token too; the broadcast's connections grow only when the
    /// request rate passes a connection's ceiling at the headroom.
    @Test func whenPerTokenFitsAndWhenTheBroadcastNeedsMoreConnections() {
        let small = Self.plan(channels: 10, subscribers: 100, every: .seconds(10))
        #expect(small.perToken.connections == 1)
        #expect(abs(small.perTokenSecondsOnBroadcastConnections - (1000 * 0.085 / 1000 + 0.085)) < 1e-9)
        #expect(small.perTokenFits)
        // 100,000 channels every second: 100,000 requests a second, 13 connections at 70%.
        let busy = Self.plan(channels: 100_000, subscribers: 1, every: .seconds(1))
        #expect(busy.requests.connections == 13)
        #expect(busy.perToken.connections == 13)
    }

    @Test func planJSONCarriesTheBroadcastSectionAndReadsBack() throws {
        let plan = Self.plan(channels: 100, subscribers: 10_000, every: .seconds(10), cpu: 31.0 / 6)
        let document = plan.document
        #expect(document.devices == 100)
        #expect(document.deadlineSeconds == 10)
        #expect(document.requiredRate == 10)
        let broadcast = try #require(document.broadcast)
        #expect(broadcast.requestRate == 10 && broadcast.connections == 1 && broadcast.deliveriesPerSecond == 100_000)
        #expect(broadcast.perToken.notificationsPerUpdate == 1_000_000 && broadcast.perToken.connections == 13)
        #expect(broadcast.perToken.machines == 1 && !broadcast.perToken.fits)
        let cores = try #require(broadcast.perToken.cores)
        #expect(abs(cores - 100_000 / (6e6 / 31 * 0.7)) < 1e-9)
        let data = try JSONEncoder().encode(document)
        let text = String(decoding: data, as: UTF8.self)
        #expect(text.contains(#""request_rate_per_second":10"#), "\(text)")
        #expect(try JSONDecoder().decode(PlanDocument.self, from: data) == document)
        // A per-token plan has no such section, and an older plan.json without one reads.
        #expect(plan.perToken.document.broadcast == nil)
    }

    @Test func theTextPutsBothSideBySide() {
        let text = Self.plan(channels: 100, subscribers: 10_000, every: .seconds(10)).text
        for line in [
            "100 broadcast channels × 10,000 subscribers, an update every 10 s:",
            "  requests an update     100                    1,000,000",
            "  request rate           10/s                   100,000/s",
            "  connections            1                      13",
            "  device deliveries      100,000/s asked of APNs either way",
            "so one connection carries it",
            "  per-token on the broadcast's 1 connection: 85.1 s an update, does not fit in 10 s",
        ] {
            #expect(text.contains(line), "\(line) in\n\(text)")
        }
    }
}
