import FanoutAPNs
import FanoutFCM

/// Why a push service refused a notification, in its own words: APNs' `reason` or FCM's
/// `errorCode`. What the load engine counts rejections by, and what a run's documents key them
/// with.
///
/// The two vocabularies cannot collide as text: APNs writes its reasons in UpperCamelCase
/// (`BadDeviceToken`), FCM its codes in UPPER_SNAKE_CASE (`UNREGISTERED`), so `rawValue` is
/// the service's own word and reads back to the same case. A summary of an APNs run keys its
/// rejections exactly as before FCM existed.
///
/// ```
///   index   0 … 37                38 … 45
///           APNsReason.all        FCMErrorCode.allCases
/// ```
public enum PushReason: RawRepresentable, Sendable, Hashable, Comparable, Codable, CodingKeyRepresentable,
    CustomStringConvertible
{
    case apns(APNsReason)
    case fcm(FCMErrorCode)

    /// Every reason, APNs' first, in `index` order.
    public static let all: [PushReason] = APNsReason.all.map(PushReason.apns) + fcmCodes.map(PushReason.fcm)
    private static let fcmCodes = FCMErrorCode.allCases
    /// How many reasons there are: the length of an array of counts kept by reason.
    public static let count = APNsReason.all.count + FCMErrorCode.allCases.count

    /// This reason's position in `all`, the subscript of its count: neither hashes nor
    /// allocates.
    public var index: Int {
        switch self {
        case .apns(let reason): reason.index
        case .fcm(let code): APNsReason.all.count + code.index
        }
    }

    /// The service's own word for it: `BadDeviceToken`, `UNREGISTERED`.
    public var rawValue: String {
        switch self {
        case .apns(let reason): reason.rawValue
        case .fcm(let code): code.rawValue
        }
    }

    /// The reason `text` names in either service's words.
    public init?(rawValue text: String) {
        if let reason = APNsReason(rawValue: text) {
            self = .apns(reason)
        } else if let code = FCMErrorCode(rawValue: text) {
            self = .fcm(code)
        } else {
            return nil
        }
    }

    /// The HTTP status the service answers this reason with (`nil`: FCM's UNSPECIFIED_ERROR,
    /// which has none of its own).
    public var status: Int? {
        switch self {
        case .apns(let reason): reason.status
        case .fcm(let code): code.status?.httpStatus
        }
    }

    /// Whether the service says the same notification may be sent again (APNs: 429 and 5xx;
    /// FCM: QUOTA_EXCEEDED, UNAVAILABLE, INTERNAL).
    public var isRetryable: Bool {
        switch self {
        case .apns(let reason): reason.isRetryable
        case .fcm(let code): code.isRetryable
        }
    }

    /// The least wait before a retry when the answer gives no `Retry-After`, in nanoseconds: FCM
    /// asks for "a minimum initial delay of 1 minute" after QUOTA_EXCEEDED and a back-off from
    /// 1 s after UNAVAILABLE and INTERNAL (docs/fcm.md, "What FCM asks of senders"); APNs asks
    /// for none of its own (0: the sender's backoff alone).
    public var minimumRetryWait: UInt64 {
        switch self {
        case .apns: 0
        case .fcm(.quotaExceeded): 60_000_000_000
        case .fcm(.unavailable), .fcm(.internal): 1_000_000_000
        case .fcm: 0
        }
    }

    /// Whether the token is gone for good, so a provider stops sending to it (`--gone-tokens`):
    /// APNs' 410 (`Unregistered`, `ExpiredToken`), FCM's `UNREGISTERED`.
    public var isGoneToken: Bool {
        switch self {
        case .apns(let reason): reason.status == 410
        case .fcm(let code): code == .unregistered
        }
    }

    /// APNs' counts by reason (a sink's) in this vocabulary.
    public static func counts(_ apns: [APNsReason: Int]) -> [PushReason: Int] {
        Dictionary(uniqueKeysWithValues: apns.map { (PushReason.apns($0.key), $0.value) })
    }

    /// The reason a gate or a document names: its word (`BadDeviceToken`, `QUOTA_EXCEEDED`).
    public var description: String { rawValue }

    /// In `index` order: APNs' reasons, then FCM's codes.
    public static func < (lhs: PushReason, rhs: PushReason) -> Bool { lhs.index < rhs.index }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let reason = PushReason(rawValue: text) else {
            throw DecodingError.dataCorruptedError(
                in: container,
                debugDescription: "\"\(text)\" is neither an APNs reason nor an FCM error code"
            )
        }
        self = reason
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}
