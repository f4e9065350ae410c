import FanoutTestSupport
import Foundation
import NIOCore
import Testing

@testable import FanoutDevices
@testable import FanoutScenarioTerms
@testable import FanoutSink

/// The device fleet behind a sink connection's answers: what a request's fields tell it, and
/// what it makes the sink answer.
@Suite struct SinkDeviceFleetTests {
    /// A sink connection's configuration with the fleet `change` makes, and its shared state.
    static func sink(_ change: (inout DeviceFleetSettings) -> Void) -> (SinkConfiguration, SinkState) {
        var configuration = SinkConfiguration()
        change(&configuration.scenario.devices)
        configuration.idleTimeout = nil
        configuration.requestTimeout = nil
        return (configuration, SinkState(scenario: configuration.scenario))
    }

    @Test func theFleetIsOffUnlessAsked() {
        #expect(SinkState(scenario: SinkScenario()).fleet == nil)
        var scenario = SinkScenario()
        scenario.devices.offline = 0.3
        #expect(SinkState(scenario: scenario).fleet != nil)
    }

    /// The first request for an uninstalled device's token is accepted; APNs' attempt finds the
    /// app gone, and the next request is answered 410 with that attempt's time.
    @Test func anUninstalledDevicesNextRequestIs410WithItsTime() throws {
        let (configuration, state) = Self.sink { $0.uninstalled = 1 }
        var harness = SinkHarness(configuration, state: state)
        let fleet = try #require(state.fleet)
        let before = Int64(Date().timeIntervalSince1970 * 1000)
        #expect(harness.send(SinkHarness.fields())?.status == 200)
        let answer = harness.send(SinkHarness.fields())
        let gone = try #require(answer)
        let after = Int64(Date().timeIntervalSince1970 * 1000)
        #expect(gone.status == 410 && gone.reason == "Unregistered")
        let timestamp = try #require(gone.timestamp)
        // The attempt's time, on the wall clock (the conversion may round by a millisecond).
        #expect(timestamp >= before - 1 && timestamp <= after + 1)
        let counts = fleet.snapshot().counts
        #expect(counts.received == 1 && counts.discardedUnregistered == 1 && counts.unregisteredAnswers == 1)
    }

    /// `apns-expiration` as APNs reads it: 0 or a past date to an offline device is Discarded –
    /// Expired, a future date is stored until then, and an unreadable one is 400 before the fleet.
    @Test func expirationReachesTheFleet() throws {
        let (configuration, state) = Self.sink { $0.offline = 1 }
        var harness = SinkHarness(configuration, state: state)
        let fleet = try #require(state.fleet)
        let token = { (index: Int) in String(repeating: String(format: "%02x", index), count: 32) }
        #expect(harness.send(SinkHarness.fields(token: token(1), [("apns-expiration", "0")]))?.status == 200)
        #expect(harness.send(SinkHarness.fields(token: token(2), [("apns-expiration", "1")]))?.status == 200)
        let inAnHour = Int(Date().timeIntervalSince1970) + 3600
        let stored = SinkHarness.fields(token: token(3), [("apns-expiration", "\(inAnHour)")])
        #expect(harness.send(stored)?.status == 200)
        let answer = harness.send(SinkHarness.fields(token: token(4), [("apns-expiration", "soon")]))
        let bad = try #require(answer)
        #expect(bad.status == 400 && bad.reason == "BadExpirationDate")
        let snapshot = fleet.snapshot()
        #expect(snapshot.counts.received == 3)
        #expect(snapshot.counts.discardedExpired == 2 && snapshot.counts.stored == 1)
        // Stored until the date it gave, on the uptime clock: about an hour from now.
        // On /metrics, by Apple's category.
        let text = SinkMetrics().exposition(of: harness.statistics, fleet: fleet)
        let exposition = try #require(PrometheusExposition(text), "\(text)")
        #expect(
            exposition.value("fanout_sink_device_notifications_total", ["category": "Discarded – Expired"]) == 2,
            "\(text)"
        )
        #expect(exposition.value("fanout_sink_device_stored") == 1, "\(text)")
        let expiry = try #require(snapshot.latestExpiry)
        let now = DispatchTime.now().uptimeNanoseconds
        #expect(expiry > now + 3_590_000_000_000 && expiry < now + 3_610_000_000_000)
    }

    /// A collapse id and a priority reach the fleet: a second stored notification with the same
    /// collapse id is counted collapsed; a priority-5 one waits for a low-power device's burst.
    @Test func collapseIDAndPriorityReachTheFleet() throws {
        let (configuration, state) = Self.sink { $0.offline = 1 }
        var harness = SinkHarness(configuration, state: state)
        let fleet = try #require(state.fleet)
        for _ in 0..<2 { _ = harness.send(SinkHarness.fields([("apns-collapse-id", "score")])) }
        #expect(fleet.snapshot().counts.collapsed == 1)
        let (lowPowerConfiguration, lowPowerState) = Self.sink { $0.lowPower = 1 }
        var lowPower = SinkHarness(lowPowerConfiguration, state: lowPowerState)
        let lowPowerFleet = try #require(lowPowerState.fleet)
        _ = lowPower.send(SinkHarness.fields([("apns-priority", "5")]))
        _ = lowPower.send(SinkHarness.fields(token: String(repeating: "cd", count: 32), [("apns-priority", "10")]))
        let counts = lowPowerFleet.snapshot().counts
        #expect(counts.storedPower == 1 && counts.delivered == 1)
        // apns-push-type background counts against the device's budget.
        let (budgetConfiguration, budgetState) = Self.sink {
            $0.backgroundBudget = Rate(limit: 1, window: .seconds(3600))
        }
        var budget = SinkHarness(budgetConfiguration, state: budgetState)
        let budgetFleet = try #require(budgetState.fleet)
        for _ in 0..<2 {
            let answer = budget.send(SinkHarness.fields([("apns-push-type", "background"), ("apns-priority", "5")]))
            #expect(answer?.status == 200, "\(String(describing: answer))")
        }
        let budgetCounts = budgetFleet.snapshot().counts
        #expect(budgetCounts.delivered == 1 && budgetCounts.storedPower == 1)
    }

    /// With the fleet every accepted answer carries an apns-unique-id, as APNs's development
    /// environment's do: the apns-id with each hex digit's high bit flipped, by which
    /// `/deliveries/` finds the notification too. Without the fleet (and for a rejection) none.
    @Test func everyAcceptedAnswerHasAUniqueIDThatFindsItsHistory() throws {
        let (configuration, state) = Self.sink { $0.offline = 1 }
        var harness = SinkHarness(configuration, state: state)
        let fleet = try #require(state.fleet)
        let id = "6F4A1C2E-0B3D-4E5F-8A9B-0C1D2E3F4A5B"
        let sent = harness.send(SinkHarness.fields([("apns-id", id)]))
        let answer = try #require(sent)
        #expect(answer.status == 200 && answer.uniqueID == "EF4A1C2E-0B3D-4E5F-8A9B-0C1D2E3F4A5B")
        let unique = try #require(answer.uniqueID)
        let page = DeliveryHistoryPage.answer("/deliveries/" + unique, fleet: fleet)
        #expect(page.found, "\(page.body)")
        let document = try JSONDecoder().decode(DeliveryHistoryPage.Document.self, from: Data(page.body.utf8))
        #expect(document.apnsID == id.lowercased())
        // A made apns-id gets one too, and a rejection none.
        let madeAnswer = harness.send(SinkHarness.fields())
        let made = try #require(madeAnswer)
        let madeID = try #require(made.apnsID)
        let flipped = String(madeID.first!.hexDigitValue! ^ 8, radix: 16)
        let uppercase = madeID.first { $0.isLetter }?.isUppercase ?? false
        #expect(made.uniqueID == (uppercase ? flipped.uppercased() : flipped) + madeID.dropFirst())
        // Every digit both ways, in both cases: one to one and its own inverse.
        for text in ["0123abcd-0000-0000-0000-000000000000", "89ABCDEF-0000-0000-0000-000000000000"] {
            for digit in "0123456789abcdef" {
                let id = Array((String(digit) + text.dropFirst()).utf8)
                var unique = [UInt8](repeating: 0, count: 36)
                var back = [UInt8](repeating: 0, count: 36)
                id.withUnsafeBytes { source in
                    unique.withUnsafeMutableBytes { AnswerWriter.uniqueID(of: source, into: $0) }
                }
                unique.withUnsafeBytes { source in
                    back.withUnsafeMutableBytes { AnswerWriter.uniqueID(of: source, into: $0) }
                }
                #expect(unique != id && unique[1...] == id[1...])
                #expect(
                    String(decoding: back, as: UTF8.self).lowercased()
                        == String(decoding: id, as: UTF8.self).lowercased()
                )
            }
        }
        let refusedAnswer = harness.send(SinkHarness.fields([("apns-priority", "7")]))
        let refused = try #require(refusedAnswer)
        #expect(refused.status == 400 && refused.uniqueID == nil)
        var plain = SinkHarness()
        let plainAnswer = plain.send(SinkHarness.fields())
        let withoutFleet = try #require(plainAnswer)
        #expect(withoutFleet.status == 200 && withoutFleet.uniqueID == nil)
    }

    /// `GET /deliveries/ID`: a notification to an offline device, stored, then delivered from
    /// storage when the device is back (the fleet advanced past its return by hand).
    @Test func aStoredThenDeliveredHistoryByApnsID() throws {
        let (configuration, state) = Self.sink {
            $0.offline = 1
            $0.returnAfter = .fixed(.seconds(30))
        }
        var harness = SinkHarness(configuration, state: state)
        let fleet = try #require(state.fleet)
        let id = "6F4A1C2E-0B3D-4E5F-8A9B-0C1D2E3F4A5B"
        #expect(harness.send(SinkHarness.fields([("apns-id", id)]))?.status == 200)
        let stored = DeliveryHistoryPage.answer("/deliveries/" + id, fleet: fleet)
        #expect(stored.found)
        let storedHistory = try JSONDecoder().decode(DeliveryHistoryPage.Document.self, from: Data(stored.body.utf8))
        #expect(storedHistory.events.map(\.state) == ["Received by APNs", "Stored – Device Offline"])
        fleet.advance(now: NIODeadline.now().uptimeNanoseconds + 31_000_000_000)
        let delivered = DeliveryHistoryPage.answer("/deliveries/" + id.lowercased(), fleet: fleet)
        let document = try JSONDecoder().decode(DeliveryHistoryPage.Document.self, from: Data(delivered.body.utf8))
        let events = document.events
        #expect(
            events.map(\.state) == [
                "Received by APNs", "Stored – Device Offline", "Delivered to Device (From Storage)",
            ]
        )
        // The times run forward, the delivery about 30 s after the arrival.
        let times = events.compactMap { ISO8601DateFormatter.withFractions.date(from: $0.at) }
        #expect(times.count == 3 && times[0] <= times[1])
        #expect(abs(times[2].timeIntervalSince(times[0]) - 30) < 1)
        #expect(document.apnsID == id.lowercased())
        let other = id.replacingOccurrences(of: "6F", with: "7F")
        let unknown = DeliveryHistoryPage.answer("/deliveries/" + other, fleet: fleet)
        #expect(!unknown.found)
        #expect(
            unknown.body == "not found: \(other) is not among the last 65536 notifications the sink accepted\n",
            "\(unknown.body)"
        )
        #expect(
            DeliveryHistoryPage.answer("/deliveries/nope", fleet: fleet).body
                == "not found: nope is not an apns-id (8-4-4-4-12 hex digits)\n"
        )
        #expect(
            DeliveryHistoryPage.answer("/deliveries/" + id, fleet: nil).body
                == "not found: the sink has no device fleet (fanout sink --device-offline and the like)\n"
        )
    }
}

extension ISO8601DateFormatter {
    static var withFractions: ISO8601DateFormatter {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter
    }
}
