import ArgumentParser
import FanoutDevices
import FanoutSink

/// `fanout sink`'s device-fleet options (`DeviceFleetSettings`; docs/sink.md, "Devices behind
/// the sink"), named as the scenario file's settings.
struct DeviceOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("Devices offline when the fan-out starts.", valueName: "share"))
    var deviceOffline: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "When offline devices come back, from the fan-out's first request: a spread like uniform:0s-120s, or never.",
            valueName: "kind:values"
        )
    )
    var deviceReturn: String?

    @Option(name: .long, help: ArgumentHelp("Devices with the app's notifications disabled.", valueName: "share"))
    var deviceDisabled: String?

    @Option(name: .long, help: ArgumentHelp("Devices the app was uninstalled from.", valueName: "share"))
    var deviceUninstalled: String?

    @Option(
        name: .long,
        help: ArgumentHelp("Devices in low power: priority 5 is stored and delivered in bursts.", valueName: "share")
    )
    var deviceLowPower: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "From APNs to a device that can take it, like lognormal:300ms,0.5.",
            valueName: "kind:values"
        )
    )
    var deviceDelay: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Devices the store keeps something for at once; more are counted forgotten (default: \(DeviceFleetSettings.defaultStoreCapacity)).",
            valueName: "n"
        )
    )
    var deviceStoreCap: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "How long a notification without apns-expiration is stored; Apple documents none (default: 7d).",
            valueName: "duration"
        )
    )
    var deviceDefaultExpiry: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "How often a low-power device takes its stored priority-5 notifications (default: 15m).",
            valueName: "duration"
        )
    )
    var deviceBurstInterval: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Background pushes a device takes per window, like 3/1h; more are stored for power considerations until the window ends.",
            valueName: "limit/window"
        )
    )
    var deviceBackgroundBudget: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "An alert delivered from storage later than this after it was sent is stale, on the provider card (default: 1h).",
            valueName: "duration"
        )
    )
    var deviceStaleAfter: String?

    /// Each given option with its setting's name.
    var given: [(name: String, value: String)] {
        let all: [(String, String?)] = [
            ("device-offline", deviceOffline), ("device-low-power", deviceLowPower),
            ("device-disabled", deviceDisabled), ("device-uninstalled", deviceUninstalled),
            ("device-return", deviceReturn), ("device-delay", deviceDelay), ("device-store-cap", deviceStoreCap),
            ("device-default-expiry", deviceDefaultExpiry), ("device-burst-interval", deviceBurstInterval),
            ("device-background-budget", deviceBackgroundBudget), ("device-stale-after", deviceStaleAfter),
        ]
        return all.compactMap { name, value in value.map { (name, $0) } }
    }
}

/// `fanout run`'s device-fleet options for its embedded sink: `fanout sink`'s, named `--sink-device-…`.
struct SinkDeviceOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("The embedded sink's --device-offline.", valueName: "share"))
    var sinkDeviceOffline: String?

    @Option(name: .long, help: ArgumentHelp("The embedded sink's --device-return.", valueName: "kind:values"))
    var sinkDeviceReturn: String?

    @Option(name: .long, help: ArgumentHelp("The embedded sink's --device-disabled.", valueName: "share"))
    var sinkDeviceDisabled: String?

    @Option(name: .long, help: ArgumentHelp("The embedded sink's --device-uninstalled.", valueName: "share"))
    var sinkDeviceUninstalled: String?

    @Option(name: .long, help: ArgumentHelp("The embedded sink's --device-low-power.", valueName: "share"))
    var sinkDeviceLowPower: String?

    @Option(name: .long, help: ArgumentHelp("The embedded sink's --device-delay.", valueName: "kind:values"))
    var sinkDeviceDelay: String?

    @Option(name: .long, help: ArgumentHelp("The embedded sink's --device-store-cap.", valueName: "n"))
    var sinkDeviceStoreCap: String?

    @Option(name: .long, help: ArgumentHelp("The embedded sink's --device-default-expiry.", valueName: "duration"))
    var sinkDeviceDefaultExpiry: String?

    @Option(name: .long, help: ArgumentHelp("The embedded sink's --device-burst-interval.", valueName: "duration"))
    var sinkDeviceBurstInterval: String?

    @Option(
        name: .long,
        help: ArgumentHelp("The embedded sink's --device-background-budget.", valueName: "limit/window")
    )
    var sinkDeviceBackgroundBudget: String?

    @Option(name: .long, help: ArgumentHelp("The embedded sink's --device-stale-after.", valueName: "duration"))
    var sinkDeviceStaleAfter: String?

    /// Each given option with its setting's name (without `sink-`).
    var given: [(name: String, value: String)] {
        let all: [(String, String?)] = [
            ("device-offline", sinkDeviceOffline), ("device-low-power", sinkDeviceLowPower),
            ("device-disabled", sinkDeviceDisabled), ("device-uninstalled", sinkDeviceUninstalled),
            ("device-return", sinkDeviceReturn), ("device-delay", sinkDeviceDelay),
            ("device-store-cap", sinkDeviceStoreCap), ("device-default-expiry", sinkDeviceDefaultExpiry),
            ("device-burst-interval", sinkDeviceBurstInterval),
            ("device-background-budget", sinkDeviceBackgroundBudget),
            ("device-stale-after", sinkDeviceStaleAfter),
        ]
        return all.compactMap { name, value in value.map { (name, $0) } }
    }
}
