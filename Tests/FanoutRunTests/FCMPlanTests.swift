import FanoutReport
import FanoutRun
import FanoutTestSupport
import Foundation
import Testing

/// `fanout plan --service fcm`'s figures that come from files, and its rehearsal against the FCM
/// sink: a plan the quota binds, paced at the quota's share, takes what the plan says.
@Suite struct FCMPlanTests {
    /// The default body is fixtures/fcm-poll.json's for a 163-character token, and the poll a
    /// rehearsal sends is that fixture.
    @Test func theDefaultBodyIsTheFixtures() throws {
        let fixture = repositoryRoot + "/fixtures/fcm-poll.json"
        #expect(try PlanJob.bodyBytes(template: fixture, service: .fcm) == CapacityPlan.Flow.defaultFCMBodyBytes)
        let text = try String(contentsOfFile: fixture, encoding: .utf8)
        #expect(PlanJob.fcmPoll == text.trimmingCharacters(in: .newlines))
    }

    /// An FCM plan for `devices` by `deadline` over a 20 ms round trip, to be verified.
    static func planned(
        devices: UInt64,
        deadline: Duration,
        quota: CapacityPlan.Quota? = CapacityPlan.Quota()
    ) throws -> (PlanJob, CapacityPlan) {
        var question = CapacityPlan.Question.fcm(
            devices: devices,
            deadline: deadline,
            roundTrip: .milliseconds(20),
            coresPerMachine: 2
        )
        question.quota = quota
        var job = PlanJob(question: question)
        job.verify = true
        return (job, try job.run())
    }

    /// 15,000 devices by 1 s against a quota of 10,000 a 10 s window: the quota binds, the plan
    /// paces at 990/s and predicts 15.15 s and a round trip; the rehearsal (one connection of
    /// 100 streams behind 20 ms) takes that within 10%, every send accepted and counted by the
    /// sink. The pace is a quarter of what the connection carries; the window is 10 s because the
    /// 1% margin is a share of it: against 4,000 a 2 s window (20 ms of margin) the suite's load
    /// put 84 of 8,000 sends early at an edge, each 429 held the sends a second, and the share
    /// took 5.36 s against 4.07.
    @Test func aPlanTheQuotaBindsIsRehearsedAtItsPace() throws {
        let (job, plan) = try Self.planned(
            devices: 15_000,
            deadline: .seconds(1),
            quota: .init(messages: 10_000, window: .seconds(10))
        )
        #expect(plan.quotaBinds && abs(plan.plannedRate - 990) < 1e-9)
        let verification = try job.rehearse(plan)
        #expect(verification.complete)
        #expect(verification.passed, "\(verification.text)")
        #expect(abs(verification.predictedDuration.seconds - (15_000 / 990 + 0.025)) < 1e-6)
        let quota = try #require(verification.quota)
        #expect(quota.pace == plan.plannedRate && quota.messages == 10_000)
    }

    /// 15,000 devices by 60 s against 10,000 a 10 s window: the deadline (250/s) is within the
    /// quota, but the one connection sized for it carries 4,000/s flat out: the plan paces at
    /// 990/s (15.15 s), and so does the rehearsal, within 10% and with every send accepted.
    @Test func aPlanWhoseConnectionsWouldPassTheQuotaIsRehearsedAtItsPace() throws {
        let (job, plan) = try Self.planned(
            devices: 15_000,
            deadline: .seconds(60),
            quota: .init(messages: 10_000, window: .seconds(10))
        )
        #expect(!plan.quotaBinds && plan.connections == 1)
        #expect(plan.pace.map { abs($0 - 990) < 1e-9 } == true)
        let verification = try job.rehearse(plan)
        #expect(verification.passed, "\(verification.text)")
        #expect(verification.quota?.pace == plan.pace)
    }

    /// Where the quota does not bind, the rehearsal sends as fast as the connections go (the
    /// closed model, as the plan assumes) and the sink refuses nothing.
    @Test func aPlanTheQuotaDoesNotBindIsRehearsedFlatOut() throws {
        let (job, plan) = try Self.planned(devices: 3_000, deadline: .seconds(2))
        #expect(!plan.quotaBinds)
        let verification = try job.rehearse(plan)
        #expect(verification.complete, "\(verification.text)")
        #expect(verification.quota?.pace == nil)
        #expect(verification.quota?.answered429 == 0)
        // 3,000 over one connection of 100 streams behind 25 ms: at least 0.75 s (physics).
        #expect(verification.measuredDuration.seconds >= 0.75)
    }
}
