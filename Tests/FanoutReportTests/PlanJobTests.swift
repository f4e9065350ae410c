import Foundation
import Testing

@testable import FanoutReport
@testable import FanoutRun

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

    /// A rehearsal passes when it completed and each measurement is within 10% of its prediction.
    @Test func aVerificationPassesWithin10Percent() {
        var verification = Verification(
            devices: 1000,
            connections: 2,
            predictedPerConnection: 1000,
            measuredPerConnection: 905,
            predictedDuration: .seconds(10),
            measuredDuration: .milliseconds(10_950),
            complete: true
        )
        #expect(verification.passed)
        verification.measuredPerConnection = 890
        #expect(!verification.passed)
        #expect(verification.text.contains("over 10%"))
        verification.measuredPerConnection = 1000
        verification.measuredDuration = .milliseconds(11_100)
        #expect(!verification.passed)
        verification.measuredDuration = .seconds(10)
        verification.complete = false
        #expect(!verification.passed)
    }
}
