import FanoutResults
import FanoutSink
import Foundation
import Testing

@testable import FanoutRun

/// The planner's second question against physics: shares of a fleet 30% offline, back uniformly
/// over 0–120 s, worked out by hand for a fan-out accepted at once and one accepted over 60 s.
@Suite struct DeviceReachTests {
    static func question(expiration: Duration? = nil) -> DeviceReach.Question {
        var question = DeviceReach.Question()
        question.offline = 0.3
        question.returnAfter = .uniform(.zero, .seconds(120))
        question.expiration = expiration
        return question
    }

    static func near(_ value: Double, _ expected: Double, within: Double = 0.005) -> Bool {
        abs(value - expected) <= within
    }

    /// Accepted at once: 70% have it when APNs has, the offline 30% come back evenly over 120 s
    /// — 85% at +60 s, 90% at 80 s, 99% at 116 s, all in the end (stored for a week).
    @Test func acceptedAtOnce() throws {
        let reach = DeviceReach(Self.question(), acceptedSeconds: 0)
        #expect(Self.near(reach.share(by: 0), 0.70))
        #expect(Self.near(reach.share(by: 60), 0.85))
        #expect(Self.near(reach.share(by: 300), 1.0))
        #expect(reach.time(toReach: 0.5) == 0)
        #expect(abs(try #require(reach.time(toReach: 0.9)) - 80) < 1)
        #expect(abs(try #require(reach.time(toReach: 0.99)) - 116) < 1)
        #expect(reach.finalShare == 1)
        let document = reach.document
        #expect(Self.near(document.atAcceptance, 0.70))
        #expect(document.after.map(\.seconds) == [60, 300, 3600])
        #expect(Self.near(document.after[0].share, 0.85))
        #expect(document.targets.map(\.share) == [0.5, 0.9, 0.99])
        #expect(reach.text.hasPrefix("devices: 70."), "\(reach.text)")
    }

    /// Accepted over 60 s at an even rate: by t ≤ 60 s the online share has (t/60) and an
    /// offline device has it once both its notification and itself are there, (t/60)(t/120):
    /// at acceptance 0.7 + 0.3 × 0.5 = 85%; at 30 s 0.7 × 0.5 + 0.3 × 0.5 × 0.25 = 38.75%.
    @Test func acceptedOverAMinute() {
        let reach = DeviceReach(Self.question(), acceptedSeconds: 60)
        #expect(Self.near(reach.share(by: 60), 0.85))
        #expect(Self.near(reach.share(by: 30), 0.3875))
        #expect(Self.near(reach.share(by: 120), 1.0))
    }

    /// `apns-expiration: 0`: an offline device has it only if it was back before its
    /// notification was sent. At once: 70% in the end. Over 60 s: P(back ≤ sent) = E[s/120] =
    /// 1/4, so 0.7 + 0.3/4 = 77.5%; 90% is never reached.
    @Test func expirationZeroLosesTheOfflineOnes() {
        let atOnce = DeviceReach(Self.question(expiration: .zero), acceptedSeconds: 0)
        #expect(Self.near(atOnce.finalShare, 0.70))
        #expect(atOnce.time(toReach: 0.9) == nil)
        #expect(atOnce.document.targets[1].seconds == nil)
        let overAMinute = DeviceReach(Self.question(expiration: .zero), acceptedSeconds: 60)
        #expect(Self.near(overAMinute.finalShare, 0.775))
        // Expiring 60 s after sending, at once: those back within 60 s, 70% + 15%.
        let aMinute = DeviceReach(Self.question(expiration: .seconds(60)), acceptedSeconds: 0)
        #expect(Self.near(aMinute.finalShare, 0.85))
        // Never back: the offline share is lost whatever the expiration.
        var never = Self.question()
        never.returnAfter = nil
        #expect(Self.near(DeviceReach(never, acceptedSeconds: 10).finalShare, 0.70))
    }
}
