/// `apns-priority`: the three values APNs takes (docs/apns.md, "Request headers"); any other is
/// answered 400 BadPriority.
public enum APNsPriority: Int, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// 10, APNs's default: send the notification immediately.
    case immediate = 10
    /// 5: send it based on power considerations on the device; what background pushes need.
    case powerConsidered = 5
    /// 1: prioritise the device's power over everything, and never wake it.
    case lowest = 1

    /// `value` as a priority, or an error naming the three APNs takes.
    public init(checking value: Int) throws(APNsHeaderError) {
        guard let priority = Self(rawValue: value) else {
            throw APNsHeaderError(header: "apns-priority", "is 10, 5 or 1, not \(value)")
        }
        self = priority
    }

    public var description: String { String(rawValue) }
}

/// `apns-collapse-id`: at most 64 bytes of UTF-8 (docs/apns.md); a longer one is answered 400
/// BadCollapseId.
public struct APNsCollapseID: Sendable, Hashable, CustomStringConvertible {
    public static let maxBytes = 64
    public let text: String

    /// `text` as a collapse id, or an error saying how long it is.
    public init(checking text: String) throws(APNsHeaderError) {
        guard text.utf8.count <= Self.maxBytes else {
            throw APNsHeaderError(
                header: "apns-collapse-id",
                "holds at most \(Self.maxBytes) bytes, not \(text.utf8.count)"
            )
        }
        self.text = text
    }

    public var description: String { text }
}

/// A request header APNs would refuse, named with what it must be.
public struct APNsHeaderError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The header's name, as on the wire (`apns-priority`).
    public var header: String
    /// What it must be, and what it was.
    public var rule: String

    public init(header: String, _ rule: String) {
        self.header = header
        self.rule = rule
    }

    /// "apns-priority is 10, 5 or 1, not 7".
    public var description: String { "\(header) \(rule)" }
}

extension APNsPushType {
    /// Whether `topic` is what APNs expects for this push type: printable ASCII, the bundle id
    /// then `topicSuffix`; an error naming the suffix when it is not (APNs answers 400 BadTopic or
    /// DeviceTokenNotForTopic).
    public func check(topic: String) throws(APNsHeaderError) {
        guard !topic.isEmpty, topic.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            throw APNsHeaderError(header: "apns-topic", "is a bundle id in printable ASCII, not \"\(topic)\"")
        }
        let suffix = "\(topicSuffix)"
        guard topic.utf8.count > suffix.utf8.count, topic.hasSuffix(suffix) else {
            throw APNsHeaderError(
                header: "apns-topic",
                "of a \(rawValue) push is the bundle id then \(suffix), not \(topic)"
            )
        }
    }
}
