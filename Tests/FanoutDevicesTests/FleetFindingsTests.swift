import FanoutAPNs
import FanoutInstrument
import FanoutPush
import FanoutScenarioTerms
import Foundation
import Testing

@testable import FanoutDevices

/// What the device fleet tells the provider card (issue #51): each rule with a faulty provider
/// that must be counted, with its examples, and a correct one that must not.
@Suite struct FleetFindingsTests {
    static let second = DeviceFleetTests.second
    static let t0 = DeviceFleetTests.t0

    /// The apns-id text of the `index`th notification.
    static func id(_ index: Int) -> [UInt8] { Array(String(format: "%08x-0b3d-4e5f-8a9b-0c1d2e3f4a5b", index).utf8) }

    /// Accepts `notification` with the `index`th apns-id.
    static func accept(
        _ fleet: inout DeviceFleet,
        _ notification: DeviceNotification,
        id index: Int,
        at now: UInt64
    ) -> DeviceFleet.Answer {
        let id = Self.id(index)
        return id.withUnsafeBytes { bytes in
            var notification = notification
            notification.id = bytes
            return fleet.accept(notification, now: now)
        }
    }

    /// A fan-out with `apns-expiration: 0` to a fleet 30% offline: every offline device's
    /// notification is on the card (the fleet's Discarded – Expired, all of them), with the
    /// first five apns-ids; the same fan-out with an expiration date loses none by design.
    @Test func expirationZeroToOfflineDevicesIsCounted() throws {
        let settings = DeviceFleetTests.settings {
            $0.offline = 0.3
            $0.returnAfter = .uniform(.zero, .seconds(120))
        }
        var fleet = DeviceFleet(settings: settings, capacity: 8_000)
        var correct = DeviceFleet(settings: settings, capacity: 8_000)
        var buffer = [UInt8](repeating: 0, count: 64)
        let total = 10_000
        for index in 0..<total {
            let token = DeviceFleetTests.tokenHash(index, into: &buffer)
            _ = Self.accept(&fleet, DeviceNotification(token: token, expiration: .immediately), id: index, at: Self.t0)
            let dated = DeviceNotification(token: token, expiration: .at(Self.t0 + 600 * Self.second))
            _ = Self.accept(&correct, dated, id: index, at: Self.t0)
        }
        let lost = fleet.findings.count(.expirationZeroOffline)
        #expect(lost == fleet.counts.discardedExpired)
        #expect(abs(Double(lost) / Double(total) - 0.3) < 0.02, "\(lost) of \(total)")
        let examples = fleet.findings.examples
        #expect(examples.count == ProviderCard.examplesPerRule)
        #expect(fleet.findings.exampleRules.allSatisfy { $0 == .expirationZeroOffline })
        for example in examples {
            let id = try #require(example.apnsID)
            #expect(id.hasSuffix("-0b3d-4e5f-8a9b-0c1d2e3f4a5b") && example.token.isEmpty && example.connection == 0)
            #expect(example.detail.hasPrefix("sent with apns-expiration 0 while its device was offline (back "))
        }
        #expect(ProviderRule.allCases.filter(\.isFleet).allSatisfy { correct.findings.count($0) == 0 })
        // Low power is no offline device: priority 5 with expiration 0 to one is not this rule.
        var lowPower = DeviceFleet(settings: DeviceFleetTests.settings { $0.lowPower = 1 }, capacity: 8)
        _ = lowPower.accept(DeviceNotification(token: 5, priority: 5, expiration: .immediately), now: Self.t0)
        #expect(lowPower.counts.discardedExpired == 1 && lowPower.findings.count(.expirationZeroOffline) == 0)
    }

    /// Devices back two hours after the fan-out: an alert without apns-expiration reaches its
    /// device from storage past the hour's bound (stale); one whose expiration was within the
    /// bound expires instead (the provider chose), and a background push is no alert.
    @Test func alertsDeliveredFromStoragePastTheBoundAreStale() throws {
        let settings = DeviceFleetTests.settings {
            $0.offline = 1
            $0.returnAfter = .fixed(.seconds(7200))
        }
        #expect(settings.staleAfter == .seconds(3600))
        var fleet = DeviceFleet(settings: settings, capacity: 16)
        _ = Self.accept(&fleet, DeviceNotification(token: 1), id: 1, at: Self.t0)
        let withinTheBound = DeviceNotification(token: 2, expiration: .at(Self.t0 + 3600 * Self.second))
        _ = Self.accept(&fleet, withinTheBound, id: 2, at: Self.t0)
        _ = Self.accept(&fleet, DeviceNotification(token: 3, isBackground: true, isAlert: false), id: 3, at: Self.t0)
        fleet.advance(to: Self.t0 + 3 * 3600 * Self.second)
        #expect(fleet.counts.deliveredFromStorage == 2 && fleet.counts.discardedExpired == 1)
        #expect(fleet.findings.count(.staleDelivery) == 1)
        let example = try #require(fleet.findings.examples.first)
        #expect(example.apnsID == String(decoding: Self.id(1), as: UTF8.self))
        #expect(example.at == Self.t0 + 7200 * Self.second)
        #expect(example.detail == "an alert delivered from storage 7200.0 s after APNs received it (stale after 1h)")
        // A bound of three hours: the same delivery is not stale.
        var patient = DeviceFleet(
            settings: DeviceFleetTests.settings {
                $0.offline = 1
                $0.returnAfter = .fixed(.seconds(7200))
                $0.staleAfter = .seconds(3 * 3600)
            },
            capacity: 16
        )
        _ = Self.accept(&patient, DeviceNotification(token: 1), id: 1, at: Self.t0)
        patient.advance(to: Self.t0 + 3 * 3600 * Self.second)
        #expect(patient.counts.deliveredFromStorage == 1 && patient.findings.count(.staleDelivery) == 0)
    }

    /// A budget of 2 background pushes an hour: a third within the device's window is over it
    /// (stored for power considerations, on the card); two in each of two windows are not.
    @Test func backgroundPushesOverTheBudgetAreCounted() throws {
        let settings = DeviceFleetTests.settings { $0.backgroundBudget = Rate(limit: 2, window: .seconds(3600)) }
        var fleet = DeviceFleet(settings: settings, capacity: 16)
        for step in 0..<3 {
            let push = DeviceNotification(token: 9, isBackground: true)
            _ = Self.accept(&fleet, push, id: step, at: Self.t0 + UInt64(step) * Self.second)
        }
        #expect(fleet.counts.delivered == 2 && fleet.counts.storedPower == 1)
        #expect(fleet.findings.count(.backgroundOverBudget) == 1)
        let example = try #require(fleet.findings.examples.first)
        #expect(example.apnsID == String(decoding: Self.id(2), as: UTF8.self))
        #expect(
            example.detail
                == "a background push past its device's budget of 2 per 1h: stored for power considerations for 3598.0 s"
        )
        var correct = DeviceFleet(settings: settings, capacity: 16)
        for time in [0, 1, 3601, 3602] as [UInt64] {
            _ = correct.accept(DeviceNotification(token: 9, isBackground: true), now: Self.t0 + time * Self.second)
        }
        #expect(correct.counts.delivered == 4 && correct.findings.count(.backgroundOverBudget) == 0)
    }

    /// The sink's shards: the counts add up, and the examples are the earliest five of all.
    @Test func theShardsFindingsAddUp() throws {
        let shards = DeviceFleetShards(settings: DeviceFleetTests.settings { $0.offline = 1 })
        var buffer = [UInt8](repeating: 0, count: 64)
        for index in 0..<200 {
            let token = DeviceFleetTests.tokenHash(index, into: &buffer)
            let id = Self.id(index)
            id.withUnsafeBytes { bytes in
                var notification = DeviceNotification(token: token, expiration: .immediately)
                notification.id = bytes
                _ = shards.accept(notification, now: Self.t0 + UInt64(index))
            }
        }
        let findings = shards.findings()
        #expect(findings.counts[.expirationZeroOffline] == 200)
        #expect(findings.counts[.staleDelivery] == 0 && findings.counts[.backgroundOverBudget] == 0)
        let examples = try #require(findings.examples[.expirationZeroOffline])
        #expect(examples.map(\.at) == (0..<5).map { Self.t0 + UInt64($0) })
        #expect(examples.map(\.apnsID) == (0..<5).map { String(decoding: Self.id($0), as: UTF8.self) })
    }
}
