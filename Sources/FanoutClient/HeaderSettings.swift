import FanoutAPNs
import FanoutSettings
import Foundation

/// The request headers a scenario file gives `fanout send` (options on the command line win):
///
/// ```
///   # the morning poll
///   topic = com.example.app
///   push-type = alert
///   priority = 5
///   expiration = 0
///   collapse-id = poll-42
///   apns-id = random
/// ```
public struct HeaderSettings: Sendable, Hashable {
    public var topic: String?
    public var pushType: APNsPushType?
    public var priority: Int?
    public var expiration: Int?
    public var collapseID: String?
    public var generatesAPNsID: Bool?
    /// `apns-id = timed`: each try's id carries its send time (`TimedAPNsID`).
    public var timesAPNsID: Bool?

    public static let names = ["topic", "push-type", "priority", "expiration", "collapse-id", "apns-id"]

    public init() {}

    /// Reads a scenario file; problems are said as `FILE:LINE: what`.
    public init(contentsOfFile path: String) throws(SettingsFileError) {
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw SettingsFileError("cannot read the scenario file \(path): \(error.reason)")
        }
        try self.init(text: text, source: path)
    }

    public init(text: String, source: String) throws(SettingsFileError) {
        self.init()
        for setting in try SettingsFile.settings(in: text, source: source, known: Self.names) {
            try set(setting.name, setting.value, place: setting.place)
        }
    }

    private mutating func set(_ name: String, _ value: String, place: String) throws(SettingsFileError) {
        func fail(_ what: String) -> SettingsFileError { SettingsFileError("\(place): \(name) \(what), not \(value)") }
        switch name {
        case "topic":
            topic = value
        case "push-type":
            guard let type = APNsPushType(rawValue: value) else {
                throw fail("is one of \(APNsPushType.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            pushType = type
        case "priority":
            guard let number = Int(value), [10, 5, 1].contains(number) else { throw fail("is 10, 5 or 1") }
            priority = number
        case "expiration":
            guard let number = Int(value), number >= 0 else { throw fail("is UNIX seconds (0: deliver once)") }
            expiration = number
        case "collapse-id":
            guard value.utf8.count <= 64 else { throw fail("holds at most 64 bytes") }
            collapseID = value
        default:  // apns-id
            guard ["random", "none", "timed"].contains(value) else { throw fail("is random, timed or none") }
            generatesAPNsID = value == "random"
            timesAPNsID = value == "timed"
        }
    }
}
