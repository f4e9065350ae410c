import FanoutDevices
import FanoutFiles
import FanoutScenarioTerms
import FanoutSink
import Foundation

/// `fanout sink --service fcm --scenario FILE`: the APNs sink's scenario file (`name = value`
/// a line, names the long options without `--`, paths relative to the file's folder) with the
/// names the FCM sink takes, so that a file says exactly what its command line can:
///
///     # 5% of tokens gone, answers in about 20 ms, a third of the devices dozing
///     fcm-unregistered = 5%
///     latency = lognormal:20ms,0.5
///     device-low-power = 33%
///     fcm-quota = 300000/1m
///
/// The settings both sinks share are read as the APNs sink reads them, into a `SinkScenario`
/// (`shared`); FCM's own (`unregistered-tokens`, a list of FCM tokens here, `project` and the
/// `fcm-…` options) are kept as written, for the command's options to read with their own
/// grammar (`fcm`). An APNs setting is refused by name, at its line.
public struct FCMSinkScenarioFile: Sendable {
    /// The settings both sinks take, read as the APNs sink reads them.
    public static let sharedNames =
        [
            "latency", "seed", "goaway-after-requests", "max-connections", "rtt", "bandwidth", "sink-bandwidth",
        ] + DeviceFleetSettings.settingNames.filter { !apnsOnlyDevices.contains($0) }
    /// The FCM sink's own.
    public static let fcmNames = [
        "unregistered-tokens", "project", "fcm-quota", "fcm-device-limits", "fcm-unregistered", "fcm-other-sender",
        "fcm-internal", "fcm-unavailable",
    ]
    /// The device settings of APNs alone (Android has no background budget; FCM's ttl is its
    /// own default).
    static let apnsOnlyDevices: Set = ["device-default-expiry", "device-background-budget"]

    public let path: String
    /// The file as results record it (its path and its text's SHA-256).
    public let file: FileUse
    /// The shared settings, applied to a scenario of their own.
    public private(set) var shared = SinkScenario()
    /// The names the file set.
    public private(set) var names: Set<String> = []
    /// FCM's own settings as written, by name; a path made relative to the file's folder.
    public private(set) var fcm: [String: SettingsFile.Setting] = [:]

    public init(contentsOfFile path: String) throws(SinkScenarioError) {
        self.path = path
        let text: String
        do { text = try String(contentsOfFile: path, encoding: .utf8) } catch {
            throw SinkScenarioError("cannot read the scenario file \(path): \(error.reason)")
        }
        file = FileUse(path: path, text: text)
        let directory = (path as NSString).deletingLastPathComponent
        let settings: [SettingsFile.Setting]
        do {
            settings = try SettingsFile.settings(
                in: text,
                source: path,
                known: Self.sharedNames + Self.fcmNames + SinkScenario.settingNames,
                repeatable: []
            )
        } catch {
            throw SinkScenarioError(error.description)
        }
        for var setting in settings {
            names.insert(setting.name)
            if Self.fcmNames.contains(setting.name) {
                if setting.name == "unregistered-tokens", !setting.value.hasPrefix("/"), !directory.isEmpty {
                    setting.value = directory + "/" + setting.value
                }
                fcm[setting.name] = setting
                continue
            }
            guard Self.sharedNames.contains(setting.name) else {
                throw SinkScenarioError(
                    "\(setting.place): \(setting.name) is the APNs sink's alone; an FCM scenario takes \((Self.sharedNames + Self.fcmNames).joined(separator: ", "))"
                )
            }
            do {
                try shared.set(setting.name, setting.value, relativeTo: directory)
            } catch {
                throw SinkScenarioError("\(setting.place): \(error.description)")
            }
            if setting.name == "goaway-after-requests", try SinkScenario.goAway(setting.value).reason != nil {
                throw SinkScenarioError(
                    "\(setting.place): goaway-after-requests \(setting.value): FCM's GOAWAY carries no APNs reason: give N alone"
                )
            }
        }
        do { try shared.validate() } catch { throw SinkScenarioError("\(path): \(error.description)") }
    }
}
