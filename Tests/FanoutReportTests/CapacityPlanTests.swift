import Foundation
import Testing

@testable import FanoutReport

/// The plan's arithmetic, worked by hand for each case.
@Suite struct CapacityPlanTests {
    static func question(cpu: Double? = nil) -> CapacityPlan.Question {
        var question = CapacityPlan.Question(
            devices: 50_000_000,
            deadline: .seconds(300),
            roundTrip: .milliseconds(80),
            coresPerMachine: 2
        )
        question.cpuMicroseconds = cpu
        return question
    }

    /// 50M in 5 minutes over an 80 ms round trip: 166,667/s; a connection carries
    /// 1000 ÷ 0.085 s = 11,765/s, 8,235/s at 70%, so 21 connections; at 5 µs a notification a
    /// core sends 200,000/s, so 166,667 ÷ 140,000 = 1.19 cores: one 2-core machine.
    @Test func roundTripsBindWhenACoreOutrunsAConnection() {
        let plan = CapacityPlan(Self.question(cpu: 5))
        #expect(abs(plan.requiredRate - 166_666.67) < 0.01)
        #expect(abs(plan.connectionCeiling - 11_764.71) < 0.01)
        #expect(plan.coreCeiling == 200_000)
        #expect(plan.connections == 21)
        #expect(abs(plan.cores! - 1.190_476) < 1e-6)
        #expect(plan.machines == 1)
        #expect(plan.binding == .roundTrips)
        // 21 × 11,765/s = 247,059/s: 50M in 202.4 s, plus one round trip.
        #expect(abs(CapacityPlan.seconds(plan.expectedDuration) - (50e6 / (21 * 1000 / 0.085) + 0.085)) < 1e-6)
    }

    /// At 200 µs a notification a core sends 5,000/s, less than a connection's 11,765/s: the
    /// CPU binds each connection. 166,667 ÷ (5,000 × 0.7) = 47.6 → 48 connections and cores,
    /// 24 machines of 2 cores.
    @Test func theCPUBindsWhenAConnectionOutrunsACore() {
        let plan = CapacityPlan(Self.question(cpu: 200))
        #expect(plan.binding == .cpu)
        #expect(plan.connections == 48)
        #expect(abs(plan.cores! - 47.619) < 0.001)
        #expect(plan.machines == 24)
        // 48 connections at 5,000/s, capped by 48 cores: 240,000/s.
        #expect(abs(CapacityPlan.seconds(plan.expectedDuration) - (50e6 / 240_000 + 0.085)) < 1e-6)
        #expect(plan.text.contains("binds                  CPU"))
    }

    /// Without a CPU cost the plan gives connections only, and says what is missing.
    @Test func anUnknownCostLeavesMachinesOpen() throws {
        let plan = CapacityPlan(Self.question())
        #expect(plan.connections == 21 && plan.cores == nil && plan.machines == nil)
        #expect(plan.assumptions.last?.contains("--cost RUN_DIR or --calibrate") == true)
        let written = try JSONSerialization.jsonObject(with: JSONDocument.data(plan.document)) as? [String: Any]
        #expect(written?["machines"] is NSNull && written?["cores"] is NSNull)
        #expect(plan.text.contains("50,000,000 devices in 300 s:"))
        #expect(plan.text.contains("(1000 streams ÷ 85 ms)"))
    }
}
