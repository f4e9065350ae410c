/// The push service a token line names at its start, for a campaign's set (both services in one
/// file):
///
/// ```
///   apns:3f2a…c901          an APNs device token
///   fcm:dXpL…:APA91b…       an FCM registration token
///   3f2a…c901               APNs's, as every token file before labels was
/// ```
///
/// No real token begins with a label: APNs tokens are hex (`p`, `m` and `:` are not hex digits),
/// and an FCM registration token's first part, before its colon, is an instance id of 11 or more
/// characters.
public enum TokenLabel: Sendable, Hashable {
    case apns
    case fcm

    /// What the line begins with: `apns:` or `fcm:`.
    public var prefix: String {
        switch self {
        case .apns: "apns:"
        case .fcm: "fcm:"
        }
    }

    /// The service's name in messages.
    var serviceName: String {
        switch self {
        case .apns: "APNs"
        case .fcm: "FCM"
        }
    }

    /// The label the `count` bytes at `start` begin with, if any.
    @inline(__always)
    static func starts(_ start: UnsafeRawPointer, count: Int) -> TokenLabel? {
        guard count >= 4 else { return nil }
        let first = start.load(as: UInt8.self)
        if first == UInt8(ascii: "f") {
            return start.load(fromByteOffset: 1, as: UInt8.self) == UInt8(ascii: "c")
                && start.load(fromByteOffset: 2, as: UInt8.self) == UInt8(ascii: "m")
                && start.load(fromByteOffset: 3, as: UInt8.self) == UInt8(ascii: ":") ? .fcm : nil
        }
        guard first == UInt8(ascii: "a"), count >= 5 else { return nil }
        return start.load(fromByteOffset: 1, as: UInt8.self) == UInt8(ascii: "p")
            && start.load(fromByteOffset: 2, as: UInt8.self) == UInt8(ascii: "n")
            && start.load(fromByteOffset: 3, as: UInt8.self) == UInt8(ascii: "s")
            && start.load(fromByteOffset: 4, as: UInt8.self) == UInt8(ascii: ":") ? .apns : nil
    }
}

/// Whose lines a reader takes from a text token set.
public enum TokenLines: Sendable, Hashable {
    /// One service's set: every line is a token of the reader's service (a label of its own
    /// service is allowed), and a line labelled for the other service is turned down like any
    /// invalid line, its reason naming the label.
    case oneService
    /// One half of a campaign's set, both halves reading the same file: lines labelled for the
    /// reader's service (for APNs, unlabelled lines too) are its tokens; the other service's
    /// lines are passed over and counted (`TokenStreamSummary.otherService`). Binary sets carry
    /// no labels and are refused.
    case campaignHalf
}
