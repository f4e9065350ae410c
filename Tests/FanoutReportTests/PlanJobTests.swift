import FanoutRun
import Foundation
import Testing

@testable import FanoutReport

/// `PlanJob`'s calibration: a run over TLS with token auth gives the CPU cost the plan uses.
@Suite struct PlanJobTests {
    @Test func aCalibrationMeasuresTheSendersCostOverTLS() throws {
        var job = PlanJob(question: CapacityPlanTests.question())
        job.cost = .calibrate(notifications: 3000)
        let plan = try job.run()
        let cost = try #require(plan.question.cpuMicroseconds)
        // Some CPU, and less than a second a notification.
        #expect(cost > 0 && cost < 1_000_000, "\(cost) µs")
        #expect(plan.question.cpuSource?.contains("over TLS with token auth") == true)
        #expect(plan.machines != nil)
    }
}
