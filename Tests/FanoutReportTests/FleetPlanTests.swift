import FanoutPush
import Testing

@testable import FanoutReport

/// A campaign across both services planned as its halves, worked by hand.
@Suite struct FleetPlanTests {
    /// 20M in 5 minutes over 80 ms, 55% APNs: the APNs half, 11M, needs 36,667/s, and a
    /// connection of 1000 streams over 85 ms carries 11,765/s, 8,235/s at 70%: 5 connections,
    /// which carry 58,824/s, so 187.1 s. The FCM half, 9M, needs 30,000/s: the quota (10,000/s)
    /// binds and the plan paces at 9,900/s, 909.1 s. The campaign ends with FCM's half.
    @Test func theQuotaMakesTheFCMHalfTheSlower() {
        let halves = FleetPlan.halves(of: 20_000_000, apnsShare: 0.55)
        #expect(halves == (11_000_000, 9_000_000))
        let apns = CapacityPlan(
            CapacityPlan.Question(
                devices: halves.apns,
                deadline: .seconds(300),
                roundTrip: .milliseconds(80),
                coresPerMachine: 2
            )
        )
        let fcm = CapacityPlan(
            .fcm(devices: halves.fcm, deadline: .seconds(300), roundTrip: .milliseconds(80), coresPerMachine: 2)
        )
        let plan = FleetPlan(apnsShare: 0.55, fcmShare: 0.45, apns: apns, fcm: fcm)
        #expect(apns.connections == 5)
        #expect(abs(apns.expectedDuration.seconds - (11_000_000 / (5 * 1000 / 0.085) + 0.085)) < 1e-6)
        #expect(fcm.quotaBinds)
        #expect(abs(fcm.expectedDuration.seconds - (9_000_000 / 9_900 + 0.085)) < 1e-6)
        #expect(plan.slowerHalf == .fcm)
        #expect(plan.expectedDuration == fcm.expectedDuration)
        let figures = CapacityPlanTests.figures(plan.text)
        #expect(figures["binds"] == "round trips × streams", "the APNs half's line comes first")
        let campaign = plan.text.split(separator: "\n").drop { !$0.hasPrefix("campaign: ") }.map(String.init)
        #expect(
            campaign == [
                "campaign: 20,000,000 devices in 300 s:",
                "  connections            5 to APNs, 13 to FCM",
                "  expected duration      909.2 s, the FCM half's",
                "  binds                  the FCM half: the project's quota",
            ]
        )
        let document = plan.document
        #expect(document.slowerHalf == "fcm" && document.fleet == ["apns": 0.55, "fcm": 0.45])
        #expect(document.apns.devices == 11_000_000 && document.fcm.devices == 9_000_000)
        #expect(document.fcm.quota?.binds == true)
    }

    /// A share that leaves a half no devices plans it as nothing to send: a connection, no
    /// time past the round trip.
    @Test func roundingGivesEveryDeviceToOneHalf() {
        #expect(FleetPlan.halves(of: 3, apnsShare: 0.5) == (2, 1))
        #expect(FleetPlan.halves(of: 10, apnsShare: 1) == (10, 0))
        #expect(FleetPlan.halves(of: 10, apnsShare: 0) == (0, 10))
    }
}
