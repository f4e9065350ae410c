import ArgumentParser
import FanoutDevices
import FanoutSink

/// `fanout sink`'s device-fleet options (`DeviceFleetSettings`; docs/sink.md, "Devices behind
/// the sink"), named as the scenario file's settings.
struct DeviceOptions: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp(DeviceOptionHelp.text("device-offline"), valueName: "share"),
        transform: { try DeviceFleetSettings.Setting("device-offline", $0) }
    )
    var deviceOffline: DeviceFleetSettings.Setting?

    @Option(
        name: .long,
        help: ArgumentHelp(DeviceOptionHelp.text("device-return"), valueName: "kind:values"),
        transform: { try DeviceFleetSettings.Setting("device-return", $0) }
    )
    var deviceReturn: DeviceFleetSettings.Setting?

    @Option(
        name: .long,
        help: ArgumentHelp(DeviceOptionHelp.text("device-disabled"), valueName: "share"),
        transform: { try DeviceFleetSettings.Setting("device-disabled", $0) }
    )
    var deviceDisabled: DeviceFleetSettings.Setting?

    @Option(
        name: .long,
        help: ArgumentHelp(DeviceOptionHelp.text("device-uninstalled"), valueName: "share"),
        transform: { try DeviceFleetSettings.Setting("device-uninstalled", $0) }
    )
    var deviceUninstalled: DeviceFleetSettings.Setting?

    @Option(
        name: .long,
        help: ArgumentHelp(DeviceOptionHelp.text("device-low-power"), valueName: "share"),
        transform: { try DeviceFleetSettings.Setting("device-low-power", $0) }
    )
    var deviceLowPower: DeviceFleetSettings.Setting?

    @Option(
        name: .long,
        help: ArgumentHelp(DeviceOptionHelp.text("device-delay"), valueName: "kind:values"),
        transform: { try DeviceFleetSettings.Setting("device-delay", $0) }
    )
    var deviceDelay: DeviceFleetSettings.Setting?

    @Option(
        name: .long,
        help: ArgumentHelp(DeviceOptionHelp.text("device-store-cap"), valueName: "n"),
        transform: { try DeviceFleetSettings.Setting("device-store-cap", $0) }
    )
    var deviceStoreCap: DeviceFleetSettings.Setting?

    @Option(
        name: .long,
        help: ArgumentHelp(DeviceOptionHelp.text("device-default-expiry"), valueName: "duration"),
        transform: { try DeviceFleetSettings.Setting("device-default-expiry", $0) }
    )
    var deviceDefaultExpiry: DeviceFleetSettings.Setting?

    @Option(
        name: .long,
        help: ArgumentHelp(DeviceOptionHelp.text("device-burst-interval"), valueName: "duration"),
        transform: { try DeviceFleetSettings.Setting("device-burst-interval", $0) }
    )
    var deviceBurstInterval: DeviceFleetSettings.Setting?

    @Option(
        name: .long,
        help: ArgumentHelp(DeviceOptionHelp.text("device-background-budget"), valueName: "limit/window"),
        transform: { try DeviceFleetSettings.Setting("device-background-budget", $0) }
    )
    var deviceBackgroundBudget: DeviceFleetSettings.Setting?

    @Option(
        name: .long,
        help: ArgumentHelp(DeviceOptionHelp.text("device-stale-after"), valueName: "duration"),
        transform: { try DeviceFleetSettings.Setting("device-stale-after", $0) }
    )
    var deviceStaleAfter: DeviceFleetSettings.Setting?

    @Option(
        name: .long,
        help: ArgumentHelp(DeviceOptionHelp.text("device-open"), valueName: "share"),
        transform: { try DeviceFleetSettings.Setting("device-open", $0) }
    )
    var deviceOpen: DeviceFleetSettings.Setting?

    @Option(
        name: .long,
        help: ArgumentHelp(DeviceOptionHelp.text("device-open-after"), valueName: "kind:values"),
        transform: { try DeviceFleetSettings.Setting("device-open-after", $0) }
    )
    var deviceOpenAfter: DeviceFleetSettings.Setting?

    @Option(
        name: .long,
        help: ArgumentHelp(DeviceOptionHelp.text("device-actions"), valueName: "name=share,…"),
        transform: { try DeviceFleetSettings.Setting("device-actions", $0) }
    )
    var deviceActions: DeviceFleetSettings.Setting?

    @Option(
        name: .long,
        help: ArgumentHelp(DeviceOptionHelp.text("device-categories"), valueName: "file"),
        transform: { try DeviceFleetSettings.Setting("device-categories", $0) }
    )
    var deviceCategories: DeviceFleetSettings.Setting?

    @Option(
        name: .long,
        help: ArgumentHelp(DeviceOptionHelp.text("device-requests-per-open"), valueName: "n"),
        transform: { try DeviceFleetSettings.Setting("device-requests-per-open", $0) }
    )
    var deviceRequestsPerOpen: DeviceFleetSettings.Setting?

    @Option(
        name: .long,
        help: ArgumentHelp(DeviceOptionHelp.text("device-media-budget"), valueName: "duration"),
        transform: { try DeviceFleetSettings.Setting("device-media-budget", $0) }
    )
    var deviceMediaBudget: DeviceFleetSettings.Setting?

    @Option(
        name: .long,
        help: ArgumentHelp(DeviceOptionHelp.text("return-to"), valueName: "url"),
        transform: { try DeviceFleetSettings.Setting("return-to", $0) }
    )
    var returnTo: DeviceFleetSettings.Setting?

    /// Each given option, read.
    var given: [DeviceFleetSettings.Setting] {
        [
            deviceOffline, deviceLowPower, deviceDisabled, deviceUninstalled, deviceReturn, deviceDelay,
            deviceStoreCap, deviceDefaultExpiry, deviceBurstInterval, deviceBackgroundBudget, deviceStaleAfter,
            deviceOpen, deviceOpenAfter, deviceActions, deviceCategories, deviceRequestsPerOpen, deviceMediaBudget,
            returnTo,
        ].compactMap { $0 }
    }
}

/// `fanout run`'s device-fleet options for its embedded sink: `fanout sink`'s, named `--sink-device-…`.
struct SinkDeviceOptions: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp(DeviceOptionHelp.embedded("device-offline"), valueName: "share"),
        transform: { try DeviceFleetSettings.Setting("device-offline", $0) }
    )
    var sinkDeviceOffline: DeviceFleetSettings.Setting?

    @Option(
        name: .long,
        help: ArgumentHelp(DeviceOptionHelp.embedded("device-return"), valueName: "kind:values"),
        transform: { try DeviceFleetSettings.Setting("device-return", $0) }
    )
    var sinkDeviceReturn: DeviceFleetSettings.Setting?

    @Option(
        name: .long,
        help: ArgumentHelp(DeviceOptionHelp.embedded("device-disabled"), valueName: "share"),
        transform: { try DeviceFleetSettings.Setting("device-disabled", $0) }
    )
    var sinkDeviceDisabled: DeviceFleetSettings.Setting?

    @Option(
        name: .long,
        help: ArgumentHelp(DeviceOptionHelp.embedded("device-uninstalled"), valueName: "share"),
        transform: { try DeviceFleetSettings.Setting("device-uninstalled", $0) }
    )
    var sinkDeviceUninstalled: DeviceFleetSettings.Setting?

    @Option(
        name: .long,
        help: ArgumentHelp(DeviceOptionHelp.embedded("device-low-power"), valueName: "share"),
        transform: { try DeviceFleetSettings.Setting("device-low-power", $0) }
    )
    var sinkDeviceLowPower: DeviceFleetSettings.Setting?

    @Option(
        name: .long,
        help: ArgumentHelp(DeviceOptionHelp.embedded("device-delay"), valueName: "kind:values"),
        transform: { try DeviceFleetSettings.Setting("device-delay", $0) }
    )
    var sinkDeviceDelay: DeviceFleetSettings.Setting?

    @Option(
        name: .long,
        help: ArgumentHelp(DeviceOptionHelp.embedded("device-store-cap"), valueName: "n"),
        transform: { try DeviceFleetSettings.Setting("device-store-cap", $0) }
    )
    var sinkDeviceStoreCap: DeviceFleetSettings.Setting?

    @Option(
        name: .long,
        help: ArgumentHelp(DeviceOptionHelp.embedded("device-default-expiry"), valueName: "duration"),
        transform: { try DeviceFleetSettings.Setting("device-default-expiry", $0) }
    )
    var sinkDeviceDefaultExpiry: DeviceFleetSettings.Setting?

    @Option(
        name: .long,
        help: ArgumentHelp(DeviceOptionHelp.embedded("device-burst-interval"), valueName: "duration"),
        transform: { try DeviceFleetSettings.Setting("device-burst-interval", $0) }
    )
    var sinkDeviceBurstInterval: DeviceFleetSettings.Setting?

    @Option(
        name: .long,
        help: ArgumentHelp(DeviceOptionHelp.embedded("device-background-budget"), valueName: "limit/window"),
        transform: { try DeviceFleetSettings.Setting("device-background-budget", $0) }
    )
    var sinkDeviceBackgroundBudget: DeviceFleetSettings.Setting?

    @Option(
        name: .long,
        help: ArgumentHelp(DeviceOptionHelp.embedded("device-stale-after"), valueName: "duration"),
        transform: { try DeviceFleetSettings.Setting("device-stale-after", $0) }
    )
    var sinkDeviceStaleAfter: DeviceFleetSettings.Setting?

    @Option(
        name: .long,
        help: ArgumentHelp(DeviceOptionHelp.embedded("device-open"), valueName: "share"),
        transform: { try DeviceFleetSettings.Setting("device-open", $0) }
    )
    var sinkDeviceOpen: DeviceFleetSettings.Setting?

    @Option(
        name: .long,
        help: ArgumentHelp(DeviceOptionHelp.embedded("device-open-after"), valueName: "kind:values"),
        transform: { try DeviceFleetSettings.Setting("device-open-after", $0) }
    )
    var sinkDeviceOpenAfter: DeviceFleetSettings.Setting?

    @Option(
        name: .long,
        help: ArgumentHelp(DeviceOptionHelp.embedded("device-actions"), valueName: "name=share,…"),
        transform: { try DeviceFleetSettings.Setting("device-actions", $0) }
    )
    var sinkDeviceActions: DeviceFleetSettings.Setting?

    @Option(
        name: .long,
        help: ArgumentHelp(DeviceOptionHelp.embedded("device-categories"), valueName: "file"),
        transform: { try DeviceFleetSettings.Setting("device-categories", $0) }
    )
    var sinkDeviceCategories: DeviceFleetSettings.Setting?

    @Option(
        name: .long,
        help: ArgumentHelp(DeviceOptionHelp.embedded("device-requests-per-open"), valueName: "n"),
        transform: { try DeviceFleetSettings.Setting("device-requests-per-open", $0) }
    )
    var sinkDeviceRequestsPerOpen: DeviceFleetSettings.Setting?

    @Option(
        name: .long,
        help: ArgumentHelp(DeviceOptionHelp.embedded("device-media-budget"), valueName: "duration"),
        transform: { try DeviceFleetSettings.Setting("device-media-budget", $0) }
    )
    var sinkDeviceMediaBudget: DeviceFleetSettings.Setting?

    @Option(
        name: .long,
        help: ArgumentHelp(DeviceOptionHelp.embedded("return-to"), valueName: "url"),
        transform: { try DeviceFleetSettings.Setting("return-to", $0) }
    )
    var sinkReturnTo: DeviceFleetSettings.Setting?

    /// Each given option, read.
    var given: [DeviceFleetSettings.Setting] {
        [
            sinkDeviceOffline, sinkDeviceLowPower, sinkDeviceDisabled, sinkDeviceUninstalled, sinkDeviceReturn,
            sinkDeviceDelay, sinkDeviceStoreCap, sinkDeviceDefaultExpiry, sinkDeviceBurstInterval,
            sinkDeviceBackgroundBudget, sinkDeviceStaleAfter, sinkDeviceOpen, sinkDeviceOpenAfter, sinkDeviceActions,
            sinkDeviceCategories, sinkDeviceRequestsPerOpen, sinkDeviceMediaBudget, sinkReturnTo,
        ].compactMap { $0 }
    }
}

extension DeviceOptions {
    /// The options of this group that model APNs alone, which `fanout sink --service fcm`
    /// refuses: FCM documents its own default ttl (four weeks), and Android has no budget of
    /// background pushes. The return wave's are both sinks' (an FCM send's image and
    /// click_action are read as Android shows them).
    static let apnsOnly: Set = ["--device-default-expiry", "--device-background-budget"]

    /// The options of this group given on the command line (those not at their default), by
    /// name.
    var givenOptions: [String] {
        let given: [(String, Bool)] = [
            ("--device-offline", deviceOffline != nil),
            ("--device-return", deviceReturn != nil),
            ("--device-disabled", deviceDisabled != nil),
            ("--device-uninstalled", deviceUninstalled != nil),
            ("--device-low-power", deviceLowPower != nil),
            ("--device-delay", deviceDelay != nil),
            ("--device-store-cap", deviceStoreCap != nil),
            ("--device-default-expiry", deviceDefaultExpiry != nil),
            ("--device-burst-interval", deviceBurstInterval != nil),
            ("--device-background-budget", deviceBackgroundBudget != nil),
            ("--device-stale-after", deviceStaleAfter != nil),
            ("--device-open", deviceOpen != nil),
            ("--device-open-after", deviceOpenAfter != nil),
            ("--device-actions", deviceActions != nil),
            ("--device-categories", deviceCategories != nil),
            ("--device-requests-per-open", deviceRequestsPerOpen != nil),
            ("--device-media-budget", deviceMediaBudget != nil),
            ("--return-to", returnTo != nil),
        ]
        return given.filter(\.1).map(\.0)
    }
}

/// What each device-fleet option means, written once: `fanout sink --device-X` says it, and
/// `fanout run --sink-device-X` says it of the embedded sink (issue 64: the run's said only
/// "The embedded sink's --device-X.").
enum DeviceOptionHelp {
    /// The text of `--NAME` (`device-offline`).
    static func text(_ name: String) -> String { texts[name] ?? name }

    /// `fanout run`'s `--sink-NAME`: the same text, said of the embedded sink.
    static func embedded(_ name: String) -> String { "The embedded sink's --\(name): " + lowercasedFirst(text(name)) }

    private static func lowercasedFirst(_ text: String) -> String {
        guard let first = text.first, text.dropFirst().first?.isUppercase != true else { return text }
        return first.lowercased() + text.dropFirst()
    }

    private static let texts: [String: String] = [
        "device-offline": "Devices offline when the fan-out starts.",
        "device-return":
            "When offline devices come back, from the fan-out's first request: a spread like uniform:0s-120s, or never.",
        "device-disabled": "Devices with the app's notifications disabled.",
        "device-uninstalled": "Devices the app was uninstalled from.",
        "device-low-power":
            "Devices in low power: priority 5 is stored and delivered in bursts (FCM: in Doze, normal priority waits for the maintenance window).",
        "device-delay": "From APNs to a device that can take it, like lognormal:300ms,0.5.",
        "device-store-cap":
            "Devices the store keeps something for at once (FCM: messages kept); more are counted forgotten (default: \(DeviceFleetSettings.defaultStoreCapacity)).",
        "device-default-expiry":
            "How long a notification without apns-expiration is stored; Apple documents none (default: 7d).",
        "device-burst-interval":
            "How often a low-power device takes its stored priority-5 notifications (default: 15m).",
        "device-background-budget":
            "Background pushes a device takes per window, like 3/1h; more are stored for power considerations until the window ends.",
        "device-stale-after":
            "An alert delivered from storage later than this after it was sent is stale, on the provider card (default: 1h).",
        "device-open":
            "Devices that open the notification after its delivery (the return wave's opens; needs the backend's URL: sink --return-to, run --sink-return-to).",
        "device-open-after":
            "From the delivery to the open, like uniform:0s-10s or lognormal:7m,1.2 (default: lognormal:48m,1.2).",
        "device-actions":
            "The actions chosen by those who open, like poll_ok=60%,poll_nok=30%; the rest take the default action.",
        "device-categories":
            "The app's categories, a line an action: CATEGORY ACTION foreground|background [METHOD PATH]; a payload without category-actions offers its aps.category's actions from here, and --device-actions must name actions it holds.",
        "device-requests-per-open":
            "Every request a foreground open makes: its action's own first, then the app's launch fetches (default: 1).",
        "device-media-budget":
            "How long the service extension may download a mutable-content notification's media; slower is fallback content (default: 30s).",
        "return-to": "The provider's backend the return wave goes to: an http:// or https:// URL.",
    ]
}
