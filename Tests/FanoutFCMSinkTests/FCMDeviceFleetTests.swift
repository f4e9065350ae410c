import FanoutAPNs
import FanoutDevices
import FanoutFCM
import FanoutInstrument
import FanoutPush
import FanoutScenarioTerms
import Testing

@testable import FanoutFCMSink

/// The Android devices behind the FCM sink (`FCMSinkConfiguration.devices`), request by
/// request on a made-up clock: FCM's priorities against Doze, ttl, collapse keys, an
/// uninstalled app's token, and a validate_only send that reaches no device.
@Suite struct FCMDeviceFleetTests {
    static let second = FCMExchangeTests.second

    /// An exchange whose every device is as `configure` makes the fleet.
    static func exchange(_ configure: (inout DeviceFleetSettings) -> Void) throws -> FCMExchange {
        try FCMExchangeTests.exchange { configure(&$0.devices) }
    }

    /// Sends `message`'s members (beside the token) to `token` at `now`; the answer's status.
    @discardableResult
    static func send(
        _ exchange: inout FCMExchange,
        token: String,
        _ members: String = #""data":{"k":"v"}"#,
        validateOnly: Bool = false,
        now: UInt64
    ) -> Int {
        let body = #"{"validate_only":\#(validateOnly),"message":{"token":"\#(token)",\#(members)}}"#
        return FCMExchangeTests.ask(&exchange, body: body, now: now).0.status
    }

    static func counts(_ exchange: FCMExchange) throws -> DeliveryCounts {
        try #require(exchange.service.fleet).snapshot().counts
    }

    static let notification = #""notification":{"title":"Poll","body":"Yes or no?"}"#

    /// An exchange whose every device has the app uninstalled and is offline until `returns`
    /// (from the fan-out's first request).
    static func uninstalledAndAway(until returns: String) throws -> FCMExchange {
        let spread = try LatencyDistribution(parsing: returns)
        return try exchange {
            $0.uninstalled = 1
            $0.offline = 1
            $0.returnAfter = spread
        }
    }

    /// Every device dozing, its maintenance window every 60 s: a data message (FCM's default:
    /// normal priority) and one told `normal` wait for the window; a notification message (FCM's
    /// default: high) and a data message told `high` are delivered at once.
    @Test func normalPriorityWaitsForDozesWindowAndHighGoesAtOnce() throws {
        var exchange = try Self.exchange {
            $0.lowPower = 1
            $0.burstInterval = .seconds(60)
        }
        let start = 10 * Self.second
        for index in 0..<50 {
            let token = "doze-\(index)"
            #expect(Self.send(&exchange, token: token, now: start) == 200)
            #expect(Self.send(&exchange, token: token, Self.notification, now: start) == 200)
            #expect(Self.send(&exchange, token: token, #""android":{"priority":"normal"}"#, now: start) == 200)
            #expect(Self.send(&exchange, token: token, #""android":{"priority":"high"}"#, now: start) == 200)
        }
        var counts = try Self.counts(exchange)
        #expect(counts.received == 200)
        #expect(counts.delivered == 100)
        #expect(counts.storedPower == 100 && counts.stored == 100)
        // Two normal messages a device, neither with a collapse key: both kept, none replaced.
        #expect(counts.discardedReplaced == 0)
        try #require(exchange.service.fleet).advance(now: start + 61 * Self.second)
        counts = try Self.counts(exchange)
        #expect(counts.deliveredFromStorage == 100 && counts.stored == 0)
    }

    /// Every device offline for the run: `ttl` 0 is delivered now or never (discarded at once),
    /// 30 s is kept 30 s, and a message without one is kept FCM's four weeks.
    @Test func ttlBoundsHowLongAnOfflineDevicesMessageIsKept() throws {
        var exchange = try Self.exchange { $0.offline = 1 }
        let start = 10 * Self.second
        for index in 0..<20 {
            Self.send(&exchange, token: "now-\(index)", #""android":{"ttl":"0s"}"#, now: start)
            Self.send(&exchange, token: "half-\(index)", #""android":{"ttl":"30s"}"#, now: start)
            Self.send(&exchange, token: "long-\(index)", now: start)
        }
        var counts = try Self.counts(exchange)
        #expect(counts.received == 60 && counts.discardedExpired == 20 && counts.storedOffline == 40)
        let fleet = try #require(exchange.service.fleet)
        fleet.advance(now: start + 29 * Self.second)
        #expect(try Self.counts(exchange).discardedExpired == 20)
        fleet.advance(now: start + 31 * Self.second)
        counts = try Self.counts(exchange)
        #expect(counts.discardedExpired == 40 && counts.stored == 20)
        let snapshot = fleet.snapshot()
        // The rest expire four weeks after they were sent.
        #expect(snapshot.latestExpiry == start + FCMSinkConfiguration.defaultTTL)
    }

    /// An offline device's messages are each kept, but one a collapse key: a newer one with
    /// the key replaces the older; every notification message shares the app's key, whatever
    /// its collapse_key says.
    @Test func eachMessageIsKeptButOneACollapseKey() throws {
        var exchange = try Self.exchange { $0.offline = 1 }
        let start = 10 * Self.second
        for index in 0..<10 {
            let token = "collapse-\(index)"
            Self.send(&exchange, token: token, #""android":{"collapse_key":"score"}"#, now: start)
            Self.send(&exchange, token: token, #""android":{"collapse_key":"score"}"#, now: start + Self.second)
            Self.send(&exchange, token: token, #""android":{"collapse_key":"news"}"#, now: start + Self.second)
            Self.send(&exchange, token: token, now: start)
            Self.send(&exchange, token: token, now: start + Self.second)
            let notification = Self.notification
            Self.send(&exchange, token: token, notification + #","android":{"collapse_key":"a"}"#, now: start)
            Self.send(&exchange, token: token, notification + #","android":{"collapse_key":"b"}"#, now: start)
        }
        let counts = try Self.counts(exchange)
        #expect(counts.received == 70)
        // A device: the second "score" and the second notification replaced the first.
        #expect(counts.discardedReplaced == 20 && counts.collapsed == 20)
        #expect(counts.stored == 50 && counts.storedOffline == 70)
    }

    /// The app uninstalled: FCM takes the first message (200) and learns at its delivery that
    /// the app is gone; from then on the token is answered 404 UNREGISTERED with FCM's body.
    /// The same, for a device offline until 5 s after the fan-out's start: its message is kept
    /// and answered 200 until the attempt at its return finds the app gone; 404 after.
    @Test func anUninstalledAppsTokenIsUnregisteredFromItsDeliveryAttemptOn() throws {
        var exchange = try Self.uninstalledAndAway(until: "fixed:5s")
        let start = 10 * Self.second
        #expect(Self.send(&exchange, token: "away", now: start) == 200)
        #expect(Self.send(&exchange, token: "away", now: start + 4 * Self.second) == 200)
        #expect(Self.send(&exchange, token: "away", now: start + 6 * Self.second) == 404)
        let counts = try Self.counts(exchange)
        #expect(counts.received == 2 && counts.discardedUnregisteredFromStorage == 2)
        #expect(counts.unregisteredAnswers == 1 && counts.stored == 0)
    }

    @Test func anUninstalledAppsTokenIsUnregisteredAfterItsFirstDelivery() throws {
        var exchange = try Self.exchange { $0.uninstalled = 1 }
        let start = 10 * Self.second
        #expect(Self.send(&exchange, token: "gone", now: start) == 200)
        let (answer, body) = FCMExchangeTests.ask(
            &exchange,
            body: #"{"message":{"token":"gone","data":{"k":"v"}}}"#,
            now: start + Self.second
        )
        #expect(answer.status == 404)
        #expect(body == FCMExchangeTests.text(.unregistered))
        let counts = try Self.counts(exchange)
        #expect(counts.received == 1 && counts.discardedUnregistered == 1 && counts.unregisteredAnswers == 1)
        #expect(exchange.service.statistics[.unregistered] == 1 && exchange.service.statistics[.delivered] == 1)
    }

    /// Only a delivery attempt tells FCM the app is gone: a device back at 60 s whose first
    /// message (no ttl) was replaced by a newer one that expired at 21 s never had one; its
    /// token is taken again at 61 s, where the attempt at once finds the app gone, and 404 after.
    @Test func onlyADeliveryAttemptFindsTheAppGone() throws {
        var exchange = try Self.uninstalledAndAway(until: "fixed:60s")
        let start = 10 * Self.second
        #expect(Self.send(&exchange, token: "gone-late", Self.notification, now: start) == 200)
        let expiring = Self.notification + #","android":{"ttl":"10s"}"#
        #expect(Self.send(&exchange, token: "gone-late", expiring, now: start + Self.second) == 200)
        #expect(Self.send(&exchange, token: "gone-late", now: start + 61 * Self.second) == 200)
        #expect(Self.send(&exchange, token: "gone-late", now: start + 62 * Self.second) == 404)
        let counts = try Self.counts(exchange)
        #expect(counts.discardedReplaced == 1 && counts.discardedExpired == 1)
        #expect(counts.discardedUnregistered == 1 && counts.unregisteredAnswers == 1)
    }

    /// A token the fleet found gone is 404 for a validate_only send too, as a token held
    /// unregistered is, and before its device's rates are spent.
    @Test func aGoneAppsTokenIsUnregisteredForValidateOnlyAndSpendsNoRate() throws {
        var exchange = try Self.exchange { $0.uninstalled = 1 }
        let start = 10 * Self.second
        #expect(Self.send(&exchange, token: "gone", now: start) == 200)
        #expect(Self.send(&exchange, token: "gone", validateOnly: true, now: start + Self.second) == 404)
        // 240 a minute to one device: 300 more sends, each 404, none 429.
        for second in 0..<300 {
            let now = start + 2 * Self.second + UInt64(second) * Self.second / 10
            #expect(Self.send(&exchange, token: "gone", now: now) == 404)
        }
        #expect(exchange.service.statistics[.quotaExceeded] == 0)
    }

    /// Android: notifications disabled stop what would be shown, not a data message, which the
    /// app still receives.
    @Test func disabledNotificationsStopNotificationMessagesOnly() throws {
        var exchange = try Self.exchange { $0.disabled = 1 }
        for index in 0..<10 {
            Self.send(&exchange, token: "muted-\(index)", now: 10 * Self.second)
            Self.send(&exchange, token: "muted-\(index)", Self.notification, now: 10 * Self.second)
        }
        let counts = try Self.counts(exchange)
        #expect(counts.delivered == 10 && counts.discardedDisabled == 10)
    }

    /// A notification message is collapsible for the device's rates too: past the burst of 20
    /// it is held (delayed), as a data message with a collapse key is, and a plain data message
    /// is not.
    @Test func notificationMessagesSpendTheCollapsibleBurst() throws {
        var exchange = try FCMExchangeTests.exchange()
        for index in 0..<21 {
            Self.send(&exchange, token: "rated", Self.notification, now: 10 * Self.second + UInt64(index))
        }
        for index in 0..<21 {
            Self.send(&exchange, token: "plain", now: 10 * Self.second + UInt64(index))
        }
        #expect(exchange.service.statistics[.held] == 1)
        #expect(exchange.service.statistics[.delivered] == 41)
    }

    /// validate_only is answered as a send and reaches no device.
    @Test func aValidateOnlySendReachesNoDevice() throws {
        var exchange = try Self.exchange { $0.offline = 1 }
        #expect(Self.send(&exchange, token: "checked", validateOnly: true, now: 10 * Self.second) == 200)
        #expect(try Self.counts(exchange).received == 0)
    }
}

/// The FCM card's fleet rows, with devices: ttl 0 to an offline device, and a notification
/// message delivered after being kept past `--device-stale-after`, each counted once; the
/// background budget's row is APNs's alone.
@Suite struct FCMFleetCardTests {
    @Test func theCardCountsTTLZeroOfflineAndStaleNotificationMessages() throws {
        var configuration = FCMSinkConfiguration()
        configuration.project = "fanout-test"
        configuration.authentication = .anyBearer
        configuration.devices.offline = 1
        configuration.devices.returnAfter = try LatencyDistribution(parsing: "fixed:10s")
        configuration.devices.staleAfter = .seconds(5)
        let service = FCMService(configuration: configuration, account: nil, instrument: ProviderInstrument())
        var exchange = FCMExchange(service: service, transport: .http2, peer: "test", seed: 1)
        let start = 10 * FCMDeviceFleetTests.second
        let ttlZero = FCMDeviceFleetTests.notification + #","android":{"ttl":"0s"}"#
        #expect(FCMDeviceFleetTests.send(&exchange, token: "away-now", ttlZero, now: start) == 200)
        #expect(
            FCMDeviceFleetTests.send(&exchange, token: "away-late", FCMDeviceFleetTests.notification, now: start) == 200
        )
        try #require(service.fleet).advance(now: start + 11 * FCMDeviceFleetTests.second)
        let checks = try #require(service.cardChecks)
        let counts = Dictionary(uniqueKeysWithValues: checks.map { ($0.rule, $0.count) })
        #expect(counts[.expirationZeroOffline] == 1)
        #expect(counts[.staleDelivery] == 1)
        #expect(counts[.backgroundOverBudget] == nil)
        #expect(
            ProviderRule.expirationZeroOffline.title(for: .fcm)
                == "ttl 0 only for what may be lost: none reached an offline device"
        )
    }
}
