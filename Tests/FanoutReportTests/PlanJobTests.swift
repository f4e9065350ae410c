import FanoutSink
import FanoutTestSupport
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
        #expect(
            plan.question.cpuSource
                == "calibrated here over TLS with token auth, 3000 notifications over 21 × 1000 streams, an 80 ms wire, "
                + "processing log-normal of mean 5 ms (σ 0.25); the whole run (too short to leave its first seconds out)"
        )
        #expect(plan.machines != nil)
    }

    /// The calibration runs in the plan's regime: its streams, the connections it needs before
    /// the CPU is known (at most 64), its round trips with APNs-like jitter, about twenty seconds'
    /// worth at the connections' ceilings (at least 20,000, at most what was asked).
    @Test func aCalibrationRunsInThePlansRegime() throws {
        var question = CapacityPlan.Question(
            devices: 600_000,
            deadline: .seconds(60),
            roundTrip: .milliseconds(50),
            coresPerMachine: 2
        )
        question.streams = 100
        let job = try PlanJob.calibration(for: question, notifications: PlanJob.calibrationNotifications)
        // 10,000/s ÷ (100 ÷ 55 ms × 70%) = 7.9: 8 connections, 1,818 a second each.
        #expect(job.shape.connections == 8)
        #expect(job.shape.streamsPerConnection == 100)
        #expect(job.sink.maxConcurrentStreams == 100)
        #expect(job.count == 290_909)
        // The rehearsal's regime: the round trip on the wire, APNs' processing held.
        #expect(job.sink.scenario.wire?.roundTrip == .fixed(.milliseconds(50)))
        #expect(job.sink.scenario.latency == PlanJob.processing(question))
        question.devices = 50_000_000  // 834 connections: capped
        #expect(try PlanJob.calibration(for: question, notifications: 300_000).shape.connections == 64)
        #expect(try PlanJob.calibration(for: question, notifications: 300_000).count == 300_000)
        question.devices = 1000  // one connection's 20 s: 1,818/s × 20
        #expect(try PlanJob.calibration(for: question, notifications: 300_000).count == 36_363)
        question.streams = 1  // 18/s a connection: the fewest
        #expect(try PlanJob.calibration(for: question, notifications: 300_000).count == 20_000)
    }

    /// APNs' processing is held log-normal with the planned mean (Little's law takes the mean),
    /// σ 0.25; none is no hold.
    @Test func processingHasThePlannedMean() throws {
        var question = CapacityPlan.Question(
            devices: 1,
            deadline: .seconds(1),
            roundTrip: .milliseconds(75),
            coresPerMachine: 1
        )
        guard case .logNormal(let median, let sigma) = PlanJob.processing(question) else {
            Issue.record("not log-normal: \(String(describing: PlanJob.processing(question)))")
            return
        }
        #expect(sigma == 0.25)
        let mean = Double(median.components.attoseconds) / 1e18 * exp(sigma * sigma / 2)
        #expect(abs(mean - 0.005) < 1e-9, "\(mean)")
        question.processing = .zero
        #expect(PlanJob.processing(question) == nil)
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
            predictedCores: 0.5,
            measuredCores: 0.54,
            complete: true
        )
        #expect(verification.passed)
        #expect(RehearsalRow.rows(verification.text)["sender cores"]?.measured == "0.540")
        verification.measuredCores = 0.56
        #expect(!verification.passed)
        verification.predictedCores = nil  // no cost: nothing to compare
        #expect(verification.passed)
        #expect(
            lines(of: verification.text, keyed: "sender cores") == [
                "sender cores: 0.560 measured (no CPU cost to predict them)"
            ],
            "\(verification.text)"
        )
        verification.measuredPerConnection = 890
        #expect(!verification.passed)
        #expect(RehearsalRow.rows(verification.text)["a connection averages"]?.remarks == ["over 10%"])
        verification.measuredPerConnection = 1000
        verification.measuredDuration = .milliseconds(11_100)
        #expect(!verification.passed)
        verification.measuredDuration = .seconds(10)
        verification.complete = false
        #expect(!verification.passed)
    }
}
