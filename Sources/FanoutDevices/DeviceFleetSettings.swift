import FanoutNotation
import FanoutPush
import FanoutScenarioTerms
import Foundation

/// The devices behind the sink (issue #51): what share of them is offline, in low power, has
/// notifications disabled or the app uninstalled, when offline ones come back, how long a
/// delivery takes, and how much of APNs' store-and-forward the sink keeps. Off (every share 0,
/// no delivery delay) unless an option says otherwise: the sink then answers and the story ends
/// at APNs' 200, as before.
///
/// Reachability and the app's state are drawn apart, each from the token and the seed:
///
/// ```
///   reach: online ─────────── 1 − offline − lowPower     app: enabled ── 1 − disabled − uninstalled
///          offline ────────── offline (back after `returnAfter`, from the fan-out's start)
///          low power ──────── lowPower (priority 5 waits for the device's next burst)
///                                                          disabled ───── disabled
///                                                          uninstalled ── uninstalled
/// ```
/// so each pair of shares may add up to at most 100%.
public struct DeviceFleetSettings: Sendable, Hashable {
    /// Devices offline when the fan-out starts (0...1).
    public var offline: Double = 0
    /// Devices in low power: priority-5 notifications are stored and delivered in bursts.
    public var lowPower: Double = 0
    /// Devices on which the app's notifications are disabled.
    public var disabled: Double = 0
    /// Devices from which the app was uninstalled: the token is unregistered once APNs tries it.
    public var uninstalled: Double = 0
    /// When an offline device comes back, counted from the fan-out's first request; `nil`:
    /// not within the run.
    public var returnAfter: LatencyDistribution?
    /// From APNs to the device, for a device that can take it (`nil`: at once).
    public var delay: LatencyDistribution?
    /// How many devices the store keeps something for (a stored notification, an unregistered
    /// token): the store's memory is allocated for this many up front (`DeviceStore`).
    public var storeCapacity = Self.defaultStoreCapacity
    /// A million devices (`DeviceStore.bytesPerDevice` each, reserved up front).
    public static let defaultStoreCapacity = 1_000_000
    /// How long a notification without `apns-expiration` is stored. Apple documents no such
    /// time; providers report APNs storing such notifications for days to weeks (issue #51), so
    /// the default is a week: the short end of what is reported, and longer than any run.
    public var defaultExpiry: Duration = .seconds(7 * 86_400)
    /// A low-power device takes its stored priority-5 notifications once every this long (its
    /// phase drawn from the token). Apple says such notifications "may be grouped and delivered
    /// in bursts" and gives no period; 15 minutes is our assumption (iOS's background refresh
    /// works at that grain).
    public var burstInterval: Duration = .seconds(900)
    /// At most this many background pushes per device per window are delivered at once; more
    /// wait, stored for power considerations, until the window (opened by the device's first
    /// background push) ends. `nil`: no budget. Apple asks for no more than "two or three per
    /// hour" and says the system may throttle more; `3/1h` follows it. A device counted takes a
    /// store entry for its window.
    public var backgroundBudget: Rate?
    /// An alert delivered from storage longer than this after APNs received it is stale, and on
    /// the provider card (`stale-delivery`): its `apns-expiration` let it arrive that late.
    /// Apple documents no such bound — staleness is the app's to judge; an hour is our
    /// assumption: the span of most time-bound alerts (a sale, a score, a reminder), and longer
    /// than the outages a fan-out's plan usually waits for. A campaign with its own horizon says it.
    public var staleAfter: Duration = .seconds(3600)
    /// The service in front of the devices (the FCM sink sets `.fcm`), and what follows from it:
    /// - what its store keeps for a device that cannot take a notification now: APNs one a
    ///   device, the newest, an older one replaced (Apple, "Sending notification requests to
    ///   APNs": "only the last one is kept"); FCM every message, but one a collapse key, the newer
    ///   replacing the older (Firebase, "Non-collapsible and collapsible messages"; not modelled:
    ///   its 100 non-collapsible messages a device, all discarded at the limit, and its four
    ///   collapse keys a device);
    /// - what notifications disabled stop: on iOS everything; on Android what would be shown,
    ///   not a data message, which the app still receives;
    /// - the words of the fleet's findings.
    public var service = PushService.apns
    /// Mixed with each token's hash for its draws.
    public var seed: UInt64 = 1
    /// What devices do after a delivery, and the backend it reaches (issue #63).
    public var engagement = EngagementSettings()

    /// The fleet off: every share 0, no delay, no budget.
    public init() {}

    /// Whether the fleet is on: a share, a delivery delay or a background budget was set.
    public var isEnabled: Bool {
        offline > 0 || lowPower > 0 || disabled > 0 || uninstalled > 0 || delay != nil || backgroundBudget != nil
            || engagement.isEnabled
    }

    /// The problems with the settings, each naming the option it comes from.
    public func validate() throws(SinkScenarioError) {
        for (name, share) in [
            ("--device-offline", offline), ("--device-low-power", lowPower), ("--device-disabled", disabled),
            ("--device-uninstalled", uninstalled),
        ] where !(0...1).contains(share) {
            throw SinkScenarioError("\(name) must be a share from 0% to 100%, not \(share)")
        }
        if offline + lowPower > 1 + 1e-12 {
            throw SinkScenarioError(
                "--device-offline (\(Self.percent(offline))) and --device-low-power (\(Self.percent(lowPower))) add up to \(Self.percent(offline + lowPower)), over 100%"
            )
        }
        if disabled + uninstalled > 1 + 1e-12 {
            throw SinkScenarioError(
                "--device-disabled (\(Self.percent(disabled))) and --device-uninstalled (\(Self.percent(uninstalled))) add up to \(Self.percent(disabled + uninstalled)), over 100%"
            )
        }
        guard storeCapacity >= 1 && storeCapacity <= Self.largestStoreCapacity else {
            throw SinkScenarioError(
                "--device-store-cap must be from 1 to \(Self.largestStoreCapacity) devices, not \(storeCapacity)"
            )
        }
        guard defaultExpiry > .zero else { throw SinkScenarioError("--device-default-expiry must be above 0") }
        guard burstInterval > .zero else { throw SinkScenarioError("--device-burst-interval must be above 0") }
        guard staleAfter > .zero else { throw SinkScenarioError("--device-stale-after must be above 0") }
        try engagement.validate()
    }

    /// The fleet in a scaled rehearsal's time (`CampaignSample`): the delays the model draws —
    /// to deliver, to come back online, to open — compressed; the media budget, the store's
    /// expiry and staleness, the bursts and the background budget kept (a backend's latency
    /// is real, and what is stored outlives any rehearsal).
    public func compressed(by sample: CampaignSample) -> DeviceFleetSettings {
        var settings = self
        settings.delay = delay.map(sample.compressed)
        settings.returnAfter = returnAfter.map(sample.compressed)
        settings.engagement.openAfter = sample.compressed(engagement.openAfter)
        return settings
    }

    /// The store's slots are indexed by 32-bit numbers, at most twice the capacity.
    public static let largestStoreCapacity = 1 << 29

    private static func percent(_ share: Double) -> String {
        let value = (share * 10_000).rounded() / 100
        return value == value.rounded() ? "\(Int(value))%" : "\(value)%"
    }
}

extension DeviceFleetSettings {
    /// The fleet's settings by name: `fanout sink --NAME`, `fanout run --sink-NAME`, and
    /// `NAME = VALUE` in a scenario file (`SinkScenario.set`).
    public static let settingNames = [
        "device-offline", "device-low-power", "device-disabled", "device-uninstalled", "device-return",
        "device-delay", "device-store-cap", "device-default-expiry", "device-burst-interval",
        "device-background-budget", "device-stale-after", "device-open", "device-open-after", "device-actions",
        "device-requests-per-open", "device-media-budget", "device-categories", "return-to",
    ]

    /// One of the fleet's settings, read: what a file's `NAME = VALUE` line and the option of
    /// that name both become, typed from the parser to the fleet.
    public enum Setting: Sendable, Hashable {
        case offline(Double)
        case lowPower(Double)
        case disabled(Double)
        case uninstalled(Double)
        /// `nil`: never.
        case returnAfter(LatencyDistribution?)
        case delay(LatencyDistribution)
        case storeCapacity(Int)
        case defaultExpiry(Duration)
        case burstInterval(Duration)
        case backgroundBudget(Rate)
        case staleAfter(Duration)
        case open(Double)
        case openAfter(LatencyDistribution)
        case actions([EngagementSettings.ActionShare])
        case requestsPerOpen(Int)
        case mediaBudget(Duration)
        case categories(ActionCategories)
        case returnTo(ReturnURL)

        /// Reads one of `settingNames` from its text: shares like `30%`, spreads in the sink's
        /// latency grammar (`uniform:0s-120s`, `lognormal:300ms,0.5`; `device-return` also
        /// takes `never`), a count, durations. The caller names the option or the file's line.
        public init(_ name: String, _ value: String) throws(SinkScenarioError) {
            let text = value.trimmingCharacters(in: .whitespaces)
            switch name {
            case "device-offline": self = .offline(try ScenarioNotation.share(text))
            case "device-low-power": self = .lowPower(try ScenarioNotation.share(text))
            case "device-disabled": self = .disabled(try ScenarioNotation.share(text))
            case "device-uninstalled": self = .uninstalled(try ScenarioNotation.share(text))
            case "device-return": self = .returnAfter(text == "never" ? nil : try LatencyDistribution(parsing: text))
            case "device-delay": self = .delay(try LatencyDistribution(parsing: text))
            case "device-store-cap":
                guard let count = Int(text), count >= 1, count <= DeviceFleetSettings.largestStoreCapacity else {
                    throw SinkScenarioError(
                        "device-store-cap takes a whole number of devices from 1 to \(DeviceFleetSettings.largestStoreCapacity), not \(text)"
                    )
                }
                self = .storeCapacity(count)
            case "device-default-expiry": self = .defaultExpiry(try ScenarioNotation.duration(text))
            case "device-burst-interval": self = .burstInterval(try ScenarioNotation.duration(text))
            case "device-stale-after": self = .staleAfter(try ScenarioNotation.duration(text))
            case "device-background-budget":
                let rate = try ScenarioNotation.rate(text)
                guard rate.limit <= Int(UInt16.max) else {
                    throw SinkScenarioError(
                        "device-background-budget allows at most \(UInt16.max) per window; got \(text)"
                    )
                }
                self = .backgroundBudget(rate)
            case "device-open": self = .open(try ScenarioNotation.share(text))
            case "device-open-after": self = .openAfter(try LatencyDistribution(parsing: text))
            case "device-actions": self = .actions(try EngagementSettings.actions(parsing: text))
            case "device-requests-per-open":
                guard let count = Int(text), (1...EngagementSettings.largestRequestsPerOpen).contains(count) else {
                    throw SinkScenarioError(
                        "device-requests-per-open takes a whole number from 1 to \(EngagementSettings.largestRequestsPerOpen), not \(text)"
                    )
                }
                self = .requestsPerOpen(count)
            case "device-media-budget": self = .mediaBudget(try ScenarioNotation.duration(text))
            case "device-categories": self = .categories(try ActionCategories(contentsOfFile: text))
            case "return-to": self = .returnTo(try ReturnURL(parsing: text))
            default: throw SinkScenarioError("\(name) is not a device setting")
            }
        }
    }

    /// Sets one setting.
    public mutating func apply(_ setting: Setting) {
        switch setting {
        case .offline(let share): offline = share
        case .lowPower(let share): lowPower = share
        case .disabled(let share): disabled = share
        case .uninstalled(let share): uninstalled = share
        case .returnAfter(let spread): returnAfter = spread
        case .delay(let spread): delay = spread
        case .storeCapacity(let count): storeCapacity = count
        case .defaultExpiry(let duration): defaultExpiry = duration
        case .burstInterval(let duration): burstInterval = duration
        case .backgroundBudget(let rate): backgroundBudget = rate
        case .staleAfter(let duration): staleAfter = duration
        case .open(let share): engagement.open = share
        case .openAfter(let spread): engagement.openAfter = spread
        case .actions(let actions): engagement.actions = actions
        case .requestsPerOpen(let count): engagement.requestsPerOpen = count
        case .mediaBudget(let duration): engagement.mediaBudget = duration
        case .categories(let categories): engagement.categories = categories
        case .returnTo(let url): engagement.returnTo = url
        }
    }

    /// Sets one of `settingNames` from its text (`Setting.init(_:_:)`).
    public mutating func set(_ name: String, _ value: String) throws(SinkScenarioError) {
        apply(try Setting(name, value))
    }
}
