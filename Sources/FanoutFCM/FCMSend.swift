/// What an FCM send asks for, as `FCMSendCheck` reads it from the request's body:
///
/// ```
///   {"validate_only": false,
///    "message": {"token": "…",                     ← the target: token, fid, topic or condition
///                "data": {"k": "v"},                ← counted against the size limit
///                "notification": {"title": "…", "body": "…"},
///                "android": {"priority": "high", "ttl": "3600s", "collapse_key": "…"}}}
/// ```
///
/// Byte ranges point into the body checked: nothing is copied.
public struct FCMSend: Sendable, Hashable {
    /// The four targets of a message, exactly one of which is set.
    public enum TargetKind: String, Sendable, Hashable, CaseIterable {
        case token, fid, topic, condition
    }

    /// Android's delivery priority (`android.priority`; FCM's default is high for a notification
    /// message, normal for a data message: `effectivePriority`).
    public enum Priority: Sendable, Hashable { case normal, high }

    /// `validate_only`: answered as a send, delivered to no one.
    public var validateOnly = false
    public var targetKind = TargetKind.token
    /// The target's text as written in the body (escapes not decoded).
    public var target: Range<Int> = 0..<0
    /// `android.priority`, when given.
    public var priority: Priority?
    /// `android.ttl` in whole seconds (FCM rounds down), when given; FCM's default is four weeks.
    public var ttlSeconds: Int?
    /// `android.collapse_key` as written, when given.
    public var collapseKey: Range<Int>?
    /// A notification message (`notification` or `android.notification` given), which FCM sends
    /// with high priority unless told otherwise; a data message goes with normal priority.
    public var hasNotification = false
    /// The bytes counted against FCM's size limit: `data`'s keys and values (or
    /// `android.data`'s, which overrides it) and `notification`'s title, body and image.
    public var countedBytes = 0

    public init() {}

    /// The priority the message goes with: `android.priority` when given, else FCM's default
    /// for its kind (AndroidMessagePriority: HIGH "the default for notification messages",
    /// NORMAL "the default for data messages").
    public var effectivePriority: Priority { priority ?? (hasNotification ? .high : .normal) }
}
