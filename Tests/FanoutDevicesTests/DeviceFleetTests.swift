import FanoutRandom
import FanoutScenarioTerms
import Testing

@testable import FanoutDevices

/// The device fleet behind the sink, driven with a made-up clock: nanoseconds passed in, so a
/// fan-out of minutes runs in the time its arithmetic takes (issue #51's ground truth).
@Suite struct DeviceFleetTests {
    static let second: UInt64 = 1_000_000_000
    /// The made-up clock's reading when the fan-out starts (not 0: a monotonic clock's is not).
    static let t0: UInt64 = 1_000 * second

    /// The `TokenList.hash` of the `index`th of a fleet's 64-hex-digit tokens.
    static func tokenHash(_ index: Int, into buffer: inout [UInt8]) -> UInt64 {
        var random = SeededRandom(seed: UInt64(index) &* 0x9E37_79B9_7F4A_7C15)
        let digits = Array("0123456789abcdef".utf8)
        for word in 0..<4 {
            var bits = random.next()
            for nibble in 0..<16 {
                buffer[word * 16 + nibble] = digits[Int(bits & 15)]
                bits >>= 4
            }
        }
        return buffer.withUnsafeBytes { TokenList.hash($0) }
    }

    /// Sends one notification to each of the first `total` tokens, all at `t0`; returns how many
    /// the fleet accepted.
    static func fanOut(_ total: Int, expiration: DeviceNotification.Expiration, to fleet: inout DeviceFleet) -> Int {
        var buffer = [UInt8](repeating: 0, count: 64)
        var accepted = 0
        for index in 0..<total {
            let notification = DeviceNotification(token: tokenHash(index, into: &buffer), expiration: expiration)
            if fleet.accept(notification, now: t0) == .accepted { accepted += 1 }
        }
        return accepted
    }

    /// Whether `count` is `share` of `total`, give or take `within`.
    static func isShare(_ count: Int, of total: Int, near share: Double, within: Double = 0.005) -> Bool {
        abs(Double(count) / Double(total) - share) < within
    }

    /// 30% of the devices offline at the start, back uniformly over 0–120 s.
    static let thirtyPercentOffline = settings {
        $0.offline = 0.3
        $0.returnAfter = .uniform(.zero, .seconds(120))
    }

    static func settings(_ change: (inout DeviceFleetSettings) -> Void) -> DeviceFleetSettings {
        var settings = DeviceFleetSettings()
        change(&settings)
        return settings
    }

    /// A million tokens at once, 30% offline and back uniformly over 0–120 s, each notification
    /// expiring 60 s after it was sent: 70% delivered at once, 15% from storage over 0–60 s,
    /// 15% expired (the offline devices back after 60 s).
    @Test func aMillionTokensWithThirtyPercentOffline() {
        let settings = Self.thirtyPercentOffline
        var fleet = DeviceFleet(settings: settings, capacity: 400_000)
        let total = 1_000_000
        #expect(Self.fanOut(total, expiration: .at(Self.t0 + 60 * Self.second), to: &fleet) == total)
        #expect(fleet.counts.accountedFor == total)
        fleet.advance(to: Self.t0 + 200 * Self.second)
        let counts = fleet.counts
        #expect(counts.received == total)
        #expect(counts.accountedFor == total)
        #expect(counts.stored == 0)
        #expect(Self.isShare(counts.delivered, of: total, near: 0.70))
        #expect(Self.isShare(counts.deliveredFromStorage, of: total, near: 0.15))
        #expect(Self.isShare(counts.discardedExpired, of: total, near: 0.15))
        #expect(counts.storedOffline == counts.deliveredFromStorage + counts.discardedExpired)
        // From storage: uniform over 0–60 s.
        let fromStorage = fleet.times.fromStorage
        #expect(fromStorage.totalCount == UInt64(counts.deliveredFromStorage))
        for (percent, seconds) in [(10.0, 6.0), (50, 30), (90, 54)] {
            let value = Double(fromStorage.valueAtPercentile(percent)) / 1e6
            #expect(abs(value - seconds) < 1, "p\(percent) of the from-storage delivery: \(value) s")
        }
        #expect(fromStorage.max <= 60_000_000 + 60_000)
        // The last device had it just before 60 s, when the last stored one expired.
        #expect(fleet.times.last <= 60 * Self.second && fleet.times.last > 59 * Self.second)
        #expect(fleet.times.reached(percent: 50) <= 1)
    }

    /// The same fan-out with `apns-expiration: 0`: nothing is stored, the offline 30% is lost.
    @Test func expirationZeroLosesEveryOfflineDevice() {
        let settings = Self.thirtyPercentOffline
        var fleet = DeviceFleet(settings: settings, capacity: 16)
        let total = 1_000_000
        #expect(Self.fanOut(total, expiration: .immediately, to: &fleet) == total)
        fleet.advance(to: Self.t0 + 200 * Self.second)
        let counts = fleet.counts
        #expect(Self.isShare(counts.delivered, of: total, near: 0.70))
        #expect(Self.isShare(counts.discardedExpired, of: total, near: 0.30))
        #expect(counts.delivered + counts.discardedExpired == total)
        #expect(counts.storedOffline == 0 && counts.forgotten == 0 && fleet.devicesKept == 0)
    }

    /// APNs keeps one notification per device: the second discards the first, once.
    @Test func aNewerNotificationDiscardsTheStoredOneOnce() {
        var fleet = DeviceFleet(settings: Self.settings { $0.offline = 1 }, capacity: 8)
        #expect(fleet.accept(DeviceNotification(token: 42), now: Self.t0) == .accepted)
        #expect(fleet.counts.stored == 1 && fleet.counts.discardedReplaced == 0)
        _ = fleet.accept(DeviceNotification(token: 42), now: Self.t0 + Self.second)
        #expect(fleet.counts.discardedReplaced == 1)
        #expect(fleet.counts.stored == 1 && fleet.devicesKept == 1)
        fleet.advance(to: Self.t0 + 100 * Self.second)
        #expect(fleet.counts.discardedReplaced == 1)
        #expect(fleet.counts.storedOffline == 2)
        #expect(fleet.counts.accountedFor == fleet.counts.received)
        // Never back: it expires after the default storage time, once.
        fleet.advance(to: Self.t0 + Self.second + settingsExpiry)
        #expect(fleet.counts.discardedExpired == 1 && fleet.counts.stored == 0 && fleet.devicesKept == 0)
    }

    private var settingsExpiry: UInt64 { DeviceFleetSettings().defaultExpiry.wholeNanoseconds }

    /// A newer notification with the stored one's collapse id is counted as collapsed.
    @Test func collapseIDsAreCounted() {
        var fleet = DeviceFleet(settings: Self.settings { $0.offline = 1 }, capacity: 8)
        _ = fleet.accept(DeviceNotification(token: 7, collapse: 99), now: Self.t0)
        _ = fleet.accept(DeviceNotification(token: 7, collapse: 99), now: Self.t0 + 1)
        _ = fleet.accept(DeviceNotification(token: 7, collapse: 5), now: Self.t0 + 2)
        _ = fleet.accept(DeviceNotification(token: 7), now: Self.t0 + 3)
        #expect(fleet.counts.collapsed == 1)
        #expect(fleet.counts.discardedReplaced == 3)
        #expect(fleet.counts.accountedFor == 4)
    }

    /// An uninstalled device: the first notification is accepted and discarded as Token
    /// Unregistered; a later request is answered 410 with the time APNs learnt it.
    @Test func anUninstalledDevicesLaterRequestIsAnswered410() {
        var fleet = DeviceFleet(settings: Self.settings { $0.uninstalled = 1 }, capacity: 8)
        #expect(fleet.accept(DeviceNotification(token: 3), now: Self.t0) == .accepted)
        #expect(fleet.counts.discardedUnregistered == 1)
        let later = fleet.accept(DeviceNotification(token: 3), now: Self.t0 + 5 * Self.second)
        #expect(later == .unregistered(since: Self.t0))
        #expect(fleet.counts.received == 1 && fleet.counts.unregisteredAnswers == 1)
        // Another device's first request is still accepted.
        #expect(fleet.accept(DeviceNotification(token: 4), now: Self.t0 + 6 * Self.second) == .accepted)
    }

    /// Stored for an offline uninstalled device: the attempt when it is back is Discarded –
    /// Token Unregistered (From Storage), and later requests are answered 410 from then on.
    @Test func anUninstalledDeviceBackFromOffline() {
        let settings = Self.settings {
            $0.offline = 1
            $0.uninstalled = 1
            $0.returnAfter = .fixed(.seconds(10))
        }
        var fleet = DeviceFleet(settings: settings, capacity: 8)
        #expect(fleet.accept(DeviceNotification(token: 11), now: Self.t0) == .accepted)
        #expect(fleet.accept(DeviceNotification(token: 11), now: Self.t0 + 9 * Self.second) == .accepted)
        #expect(fleet.counts.discardedReplaced == 1)
        let answer = fleet.accept(DeviceNotification(token: 11), now: Self.t0 + 11 * Self.second)
        #expect(answer == .unregistered(since: Self.t0 + 10 * Self.second))
        #expect(fleet.counts.discardedUnregisteredFromStorage == 1)
        #expect(fleet.counts.accountedFor == fleet.counts.received)
    }

    /// Disabled devices discard at once, or from storage when they were offline.
    @Test func disabledDevicesDiscard() {
        let settings = Self.settings {
            $0.offline = 1
            $0.disabled = 1
            $0.returnAfter = .fixed(.seconds(1))
        }
        var fleet = DeviceFleet(settings: settings, capacity: 8)
        _ = fleet.accept(DeviceNotification(token: 1), now: Self.t0)
        _ = fleet.accept(DeviceNotification(token: 2), now: Self.t0 + 2 * Self.second)
        #expect(fleet.counts.discardedDisabledFromStorage == 1)
        #expect(fleet.counts.discardedDisabled == 1)
        #expect(fleet.counts.allDelivered == 0)
    }

    /// A low-power device takes priority 5 at its next burst, priority 10 at once.
    @Test func lowPowerDevicesTakePriorityFiveInBursts() throws {
        let settings = Self.settings {
            $0.lowPower = 1
            $0.burstInterval = .seconds(60)
        }
        var fleet = DeviceFleet(settings: settings, capacity: 8)
        _ = fleet.accept(DeviceNotification(token: 5, priority: 10), now: Self.t0)
        #expect(fleet.counts.delivered == 1)
        _ = fleet.accept(DeviceNotification(token: 5, priority: 5), now: Self.t0 + 1)
        #expect(fleet.counts.storedPower == 1 && fleet.counts.stored == 1)
        let next = fleet.nextEvent
        let due = try #require(next)
        #expect(due >= Self.t0 && due < Self.t0 + 60 * Self.second + 1)
        fleet.advance(to: due)
        #expect(fleet.counts.deliveredFromStorage == 1 && fleet.counts.stored == 0)
    }

    /// Each notification's history: received, stored, what became of it; a replaced one says so.
    @Test func historiesFollowEachNotification() {
        let settings = Self.settings {
            $0.offline = 1
            $0.returnAfter = .fixed(.seconds(10))
        }
        var fleet = DeviceFleet(settings: settings, capacity: 8, historyCapacity: 4)
        func id(_ index: Int) -> [UInt8] { Array(String(format: "%08x-0b3d-4e5f-8a9b-0c1d2e3f4a5b", index).utf8) }
        func accept(_ index: Int, at time: UInt64) {
            id(index).withUnsafeBytes { bytes in
                _ = fleet.accept(DeviceNotification(token: 9, id: bytes), now: time)
            }
        }
        func events(_ index: Int, uppercase: Bool = false) -> [DeliveryEvent]? {
            let text = uppercase ? Array(String(decoding: id(index), as: UTF8.self).uppercased().utf8) : id(index)
            return text.withUnsafeBytes { fleet.events(of: $0) }
        }
        accept(1, at: Self.t0)
        accept(2, at: Self.t0 + Self.second)
        fleet.advance(to: Self.t0 + 20 * Self.second)
        #expect(
            events(1) == [
                .init(kind: .received, time: Self.t0), .init(kind: .storedOffline, time: Self.t0),
                .init(kind: .discardedReplaced, time: Self.t0 + Self.second),
            ]
        )
        #expect(events(2, uppercase: true)?.map(\.kind) == [.received, .storedOffline, .deliveredFromStorage])
        #expect(events(2)?.last?.time == Self.t0 + 10 * Self.second)
        // The ring keeps the newest 4.
        for index in 3...6 { accept(index, at: Self.t0 + 30 * Self.second) }
        #expect(events(1) == nil && events(6)?.first?.kind == .received)
        #expect(MemoryLayout<DeliveryHistory.Record>.stride == 80)
    }

    @Test func burstsFollowThePhase() {
        let second = Self.second
        #expect(DeviceFleet.nextBurst(after: 5, start: 0, phase: 10, interval: .nanoseconds(100)) == 10)
        #expect(DeviceFleet.nextBurst(after: 10, start: 0, phase: 10, interval: .nanoseconds(100)) == 10)
        #expect(DeviceFleet.nextBurst(after: 11, start: 0, phase: 10, interval: .nanoseconds(100)) == 110)
        #expect(DeviceFleet.nextBurst(after: 3 * second, start: second, phase: 0, interval: .seconds(1)) == 3 * second)
    }

    /// With no room, a notification is counted forgotten: nothing is lost silently.
    @Test func aFullStoreCountsWhatItForgets() {
        var fleet = DeviceFleet(settings: Self.settings { $0.offline = 1 }, capacity: 10)
        for token in 1...25 { _ = fleet.accept(DeviceNotification(token: UInt64(token)), now: Self.t0) }
        #expect(fleet.counts.stored == 10 && fleet.counts.forgotten == 15)
        #expect(fleet.counts.accountedFor == 25)
        let stored = fleet.storedExpiries
        #expect(stored?.count == 10)
        #expect(stored?.earliest == Self.t0 + DeviceFleetSettings().defaultExpiry.wholeNanoseconds)
    }

    /// A delivery delay is drawn per notification and shows in the to-device histogram.
    @Test func onlineDevicesTakeTheDrawnDelay() {
        var fleet = DeviceFleet(settings: Self.settings { $0.delay = .fixed(.milliseconds(300)) }, capacity: 8)
        for token in 1...100 { _ = fleet.accept(DeviceNotification(token: UInt64(token)), now: Self.t0) }
        #expect(fleet.counts.delivered == 100 && fleet.devicesKept == 0)
        #expect(abs(Double(fleet.times.toDevice.valueAtPercentile(50)) - 300_000) < 300)
        #expect(fleet.times.last == 300_000_000)
    }

    /// Shares that add up to more than 100% and spreads that cannot be read name their option.
    @Test func badSettingsNameTheirOption() {
        var settings = DeviceFleetSettings()
        settings.offline = 0.8
        settings.lowPower = 0.3
        #expect(throws: SinkScenarioError.self) { try settings.validate() }
        do {
            try settings.validate()
        } catch {
            #expect(
                error.description == "--device-offline (80%) and --device-low-power (30%) add up to 110%, over 100%"
            )
        }
        settings = DeviceFleetSettings()
        settings.disabled = 0.6
        settings.uninstalled = 0.6
        #expect(throws: SinkScenarioError.self) { try settings.validate() }
        do {
            try settings.set("device-return", "uniform:0s")
            Issue.record("an unreadable spread was taken")
        } catch {
            #expect(error.description == "uniform latency is uniform:LOW-HIGH; got uniform:0s")
        }
        do {
            try settings.set("device-offline", "120%")
            Issue.record("a share over 100% was taken")
        } catch {
            #expect(error.description == "a share is from 0% to 100% (or 0 to 1), like 0.5%; got 120%")
        }
        settings = DeviceFleetSettings()
        settings.offline = 0.3
        settings.lowPower = 0.7
        settings.disabled = 0.02
        #expect(throws: Never.self) { try settings.validate() }
        #expect(settings.isEnabled && !DeviceFleetSettings().isEnabled)
    }

    /// A device's profile follows from its token and the seed alone, in the shares asked for.
    @Test func profilesFollowTheTokenAndTheSeed() {
        let settings = Self.settings {
            $0.offline = 0.2
            $0.lowPower = 0.1
            $0.disabled = 0.05
            $0.uninstalled = 0.01
        }
        var buffer = [UInt8](repeating: 0, count: 64)
        var offline = 0
        var lowPower = 0
        var disabled = 0
        var uninstalled = 0
        let total = 100_000
        for index in 0..<total {
            let token = Self.tokenHash(index, into: &buffer)
            let profile = DeviceProfile(token: token, settings: settings)
            #expect(profile == DeviceProfile(token: token, settings: settings))
            if case .offline = profile.reach { offline += 1 }
            if case .lowPower = profile.reach { lowPower += 1 }
            if profile.app == .disabled { disabled += 1 }
            if profile.app == .uninstalled { uninstalled += 1 }
        }
        #expect(Self.isShare(offline, of: total, near: 0.2))
        #expect(Self.isShare(lowPower, of: total, near: 0.1))
        #expect(Self.isShare(disabled, of: total, near: 0.05, within: 0.003))
        #expect(Self.isShare(uninstalled, of: total, near: 0.01, within: 0.002))
        var reseeded = settings
        reseeded.seed = 2
        let moved = (0..<1000).filter { index in
            let token = Self.tokenHash(index, into: &buffer)
            return DeviceProfile(token: token, settings: settings) != DeviceProfile(token: token, settings: reseeded)
        }
        #expect(moved.count > 100)
    }
}
