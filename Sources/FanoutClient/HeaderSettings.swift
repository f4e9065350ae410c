import FanoutAPNs
import FanoutEndpoint
import FanoutFiles
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
    public var apnsID: APNsIDPolicy?
    /// The file these settings were read from, `nil` when none was.
    public var file: FileUse?

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
        file = FileUse(path: path, text: text)
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
            guard let number = Int(value), APNsPriority(rawValue: number) != nil else { throw fail("is 10, 5 or 1") }
            priority = number
        case "expiration":
            guard let number = Int(value), number >= 0 else { throw fail("is UNIX seconds (0: deliver once)") }
            expiration = number
        case "collapse-id":
            guard value.utf8.count <= APNsCollapseID.maxBytes else {
                throw fail("holds at most \(APNsCollapseID.maxBytes) bytes")
            }
            collapseID = value
        default:  // apns-id
            guard let policy = APNsIDPolicy(rawValue: value) else { throw fail("is \(APNsIDPolicy.spoken)") }
            apnsID = policy
        }
    }
}

/// Which `apns-id` each request carries: `--apns-id` and a scenario file's `apns-id` line.
public enum APNsIDPolicy: String, Sendable, Hashable, CaseIterable {
    /// A UUID v4 per notification, kept on its retries.
    case random
    /// A UUID v8 per try carrying its send time (`TimedAPNsID`).
    case timed
    /// None: APNs makes one.
    case none

    /// "random, timed or none".
    public static let spoken = "random, timed or none"

    /// `headers` asking for this policy's ids.
    public func apply(to headers: inout NotificationHeaders) {
        headers.generatesAPNsID = self == .random
        headers.timedAPNsIDs = self == .timed ? 1 : 0
    }
}
