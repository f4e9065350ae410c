import FanoutResults
import Testing

@testable import FanoutReport

/// An FCM plan's arithmetic, worked by hand: the project's quota as a bound on every machine
/// together, 100 streams a connection, FCM's request bytes.
@Suite struct FCMCapacityPlanTests {
    static func question(
        devices: UInt64,
        deadline: Duration,
        quota: CapacityPlan.Quota? = .init()
    )
        -> CapacityPlan.Question
    {
        var question = CapacityPlan.Question.fcm(
            devices: devices,
            deadline: deadline,
            roundTrip: .milliseconds(80),
            coresPerMachine: 2
        )
        question.quota = quota
        return question
    }

    /// Issue #62's case: 20M in 5 minutes needs 66,667/s, and 600,000 a minute allows 10,000/s:
    /// the quota binds and allows 20M in 2,000 s (33.3 min); the plan paces 1% under it, at
    /// 9,900/s, and the fan-out takes 20M ÷ 9,900 = 2,020.2 s (33.7 min) and a round trip. A
    /// connection of 100 streams over 85 ms carries 1,176/s, 823.5/s at 70%: 9,900 ÷ 823.5 → 13
    /// connections for the pace (81 for the deadline's rate).
    @Test func theQuotaBindsTwentyMillionInFiveMinutes() {
        let plan = CapacityPlan(Self.question(devices: 20_000_000, deadline: .seconds(300)))
        #expect(plan.quotaBinds)
        #expect(plan.binding == .quota)
        #expect(abs(plan.requiredRate - 66_666.67) < 0.01)
        #expect(abs(plan.plannedRate - 9_900) < 1e-9)
        #expect(abs(plan.bounds.streams - 100 / 0.085) < 1e-6)
        #expect(plan.connections == 13)
        #expect(abs(plan.expectedDuration.seconds - (20_000_000 / 9_900 + 0.085)) < 1e-6)
        let figures = CapacityPlanTests.figures(plan.text)
        #expect(
            figures["the project's quota"]
                == "10,000/s (600,000 a 60 s window): it binds at a steady pace; 20,000,000 take 33.3 min at it, past the 300 s deadline"
        )
        #expect(
            figures["paced at"]
                == "9,900/s, 1% under it for the windows' edges (33.7 min): fanout send --service fcm --rate 9900 "
                + "(a higher quota is Google's to grant)"
        )
        #expect(figures["binds"] == "the project's quota")
        let document = plan.document
        #expect(document.service == "fcm")
        #expect(
            document.quota
                == PlanDocument.Quota(
                    messages: 600_000,
                    windowSeconds: 60,
                    ratePerSecond: 10_000,
                    binds: true,
                    pacedRatePerSecond: 9_900
                )
        )
        #expect(document.binds == "the project's quota")
        #expect(document.streamsPerConnection == 100)
        #expect(document.bodyBytes == CapacityPlan.Flow.defaultFCMBodyBytes)
        #expect(document.headerBytes == CapacityPlan.Flow.defaultFCMHeaderBytes)
    }

    /// Where the quota does not bind, the plan is the deadline's: below the quota's rate
    /// (1M in 5 minutes, 3,333/s), or faster but within one window (300,000 in 5 s: 60,000/s,
    /// and 300,000 ≤ 600,000), or with the quota off.
    @Test(arguments: [
        (UInt64(1_000_000), 300, true, "10,000/s (600,000 a 60 s window): does not bind"),
        (UInt64(300_000), 5, true, "10,000/s (600,000 a 60 s window): does not bind, the fan-out fits one window"),
        (UInt64(20_000_000), 300, false, nil),
    ])
    func theDeadlinesPlanWhereTheQuotaDoesNotBind(devices: UInt64, seconds: Int, quota: Bool, line: String?) {
        let question = Self.question(devices: devices, deadline: .seconds(seconds), quota: quota ? .init() : nil)
        let plan = CapacityPlan(question)
        #expect(!plan.quotaBinds)
        #expect(plan.plannedRate == plan.requiredRate)
        #expect(plan.binding == .roundTrips)
        #expect(plan.connections == Int((plan.requiredRate / (100 / 0.085 * 0.7)).rounded(.up)))
        #expect(CapacityPlanTests.figures(plan.text)["the project's quota"] == line)
        #expect(plan.document.quota?.binds == (quota ? false : nil))
        #expect(plan.document.quota?.pacedRatePerSecond == nil)
    }

    /// 5M in 10 minutes needs 8,333/s, within the quota; but 11 connections sized for it at 70%
    /// carry 12,941/s flat out, past it, and the fan-out is more than a window: the plan paces
    /// at 9,900/s and takes 5M ÷ 9,900 = 505.1 s, not the 386 s the connections would.
    @Test func connectionsFlatOutPastTheQuotaArePaced() {
        let plan = CapacityPlan(Self.question(devices: 5_000_000, deadline: .seconds(600)))
        #expect(!plan.quotaBinds)
        #expect(plan.connections == 11)
        #expect(plan.pace.map { abs($0 - 9_900) < 1e-9 } == true)
        #expect(abs(plan.expectedDuration.seconds - (5_000_000 / 9_900 + 0.085)) < 1e-6)
        let figures = CapacityPlanTests.figures(plan.text)
        #expect(
            figures["the project's quota"]
                == "10,000/s (600,000 a 60 s window): the deadline is within it, the connections flat out are not"
        )
        #expect(
            figures["paced at"]
                == "9,900/s, 1% under it for the windows' edges (8.4 min): fanout send --service fcm --rate 9900"
        )
        #expect(plan.document.quota?.pacedRatePerSecond.map { abs($0 - 9_900) < 1e-9 } == true)
        #expect(plan.document.quota?.binds == false)
    }

    /// An APNs plan has no quota and writes neither field (an older reader's plan.json).
    @Test func anAPNsPlanHasNoQuota() {
        let plan = CapacityPlan(CapacityPlanTests.question(cpu: 5))
        #expect(!plan.quotaBinds)
        #expect(plan.document.service == nil && plan.document.quota == nil)
    }
}
