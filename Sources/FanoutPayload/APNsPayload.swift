/// A whole APNs notification payload: the `aps` dictionary, the dynamic-action keys of
/// interactive notifications, and any custom keys beside them.
///
/// ## Key order
/// Encoding writes keys in one documented, stable order, whatever order a template file used:
/// `aps` first, then `category-actions`, `notification-action`, `category-name`, then the custom
/// keys in the order they were given. Inside `aps`, the order of Apple's payload key reference:
/// `alert`, `badge`, `sound`, `thread-id`, `category`, `content-available`, `mutable-content`,
/// `target-content-id`, `interruption-level`, `relevance-score`, `filter-criteria`, `stale-date`,
/// `content-state`, `timestamp`, `event`, `dismissal-date`, `attributes-type`, `attributes`,
/// `input-push-token`, `input-push-channel`, `content-changed`, then any other keys as given.
/// Inside `alert`: `title`, `subtitle`, `body`, `launch-image`, `title-loc-key`,
/// `title-loc-args`, `subtitle-loc-key`, `subtitle-loc-args`, `loc-key`, `loc-args`. Inside a
/// `sound` dictionary: `critical`, `name`, `volume`. Inside an action: `name`, `type`, `value`,
/// then its other keys as given.
public struct APNsPayload: Sendable, Hashable {
    /// The `aps` dictionary.
    public var aps: APS
    /// `category-actions`, `notification-action` and `category-name`.
    public var dynamicActions: DynamicActions
    /// Keys beside `aps`, in order.
    public var customKeys: [JSONMember]

    /// Creates a payload.
    public init(aps: APS, dynamicActions: DynamicActions = DynamicActions(), customKeys: [JSONMember] = []) {
        self.aps = aps
        self.dynamicActions = dynamicActions
        self.customKeys = customKeys
    }
}

// The payload's parts, named within it (`APNsPayload.APS`, `APNsPayload.Alert`, …): a library user's
// own `Alert` or `Sound` never collides with them.
extension APNsPayload {
    /// The `aps` dictionary: what iOS itself reads.
    public struct APS: Sendable, Hashable {
        /// `alert`: the text shown.
        public var alert: Alert?
        /// `badge`: the number on the app icon; 0 clears it.
        public var badge: TemplateInteger?
        /// `sound`: a sound file's name, or a critical-alert sound.
        public var sound: Sound?
        /// `thread-id`: groups notifications.
        public var threadID: TemplateText?
        /// `category`: the registered category whose actions the notification shows.
        public var category: TemplateText?
        /// `content-available`: 1 wakes the app in the background.
        public var contentAvailable: Int?
        /// `mutable-content`: 1 routes the notification through the app's service extension, which
        /// is how dynamic action categories get built.
        public var mutableContent: Int?
        /// `target-content-id`: the window or content to bring forward.
        public var targetContentID: TemplateText?
        /// `interruption-level`.
        public var interruptionLevel: InterruptionLevel?
        /// `relevance-score`: 0 to 1, for the notification summary.
        public var relevanceScore: TemplateNumber?
        /// `filter-criteria`: a Focus filter.
        public var filterCriteria: TemplateText?
        /// `stale-date` (Live Activities): UNIX seconds after which it is out of date.
        public var staleDate: TemplateInteger?
        /// `content-state` (Live Activities): the dynamic content.
        public var contentState: [JSONMember]?
        /// `timestamp` (Live Activities): UNIX seconds of this update.
        public var timestamp: TemplateInteger?
        /// `event` (Live Activities).
        public var event: LiveActivityEvent?
        /// `dismissal-date` (Live Activities): UNIX seconds at which an ended activity goes.
        public var dismissalDate: TemplateInteger?
        /// `attributes-type` (Live Activities, push to start).
        public var attributesType: TemplateText?
        /// `attributes` (Live Activities, push to start).
        public var attributes: [JSONMember]?
        /// `input-push-token` (Live Activities): 1 asks for a push token.
        public var inputPushToken: Int?
        /// `input-push-channel` (Live Activities): a broadcast channel id.
        public var inputPushChannel: TemplateText?
        /// `content-changed` (widgets and controls).
        public var contentChanged: Bool?
        /// Keys Fanout does not know, kept only when the template options allow them.
        public var otherKeys: [JSONMember]

        /// Creates an `aps` dictionary; every key is optional.
        public init(
            alert: Alert? = nil,
            badge: TemplateInteger? = nil,
            sound: Sound? = nil,
            threadID: TemplateText? = nil,
            category: TemplateText? = nil,
            contentAvailable: Int? = nil,
            mutableContent: Int? = nil,
            targetContentID: TemplateText? = nil,
            interruptionLevel: InterruptionLevel? = nil,
            relevanceScore: TemplateNumber? = nil,
            filterCriteria: TemplateText? = nil,
            staleDate: TemplateInteger? = nil,
            contentState: [JSONMember]? = nil,
            timestamp: TemplateInteger? = nil,
            event: LiveActivityEvent? = nil,
            dismissalDate: TemplateInteger? = nil,
            attributesType: TemplateText? = nil,
            attributes: [JSONMember]? = nil,
            inputPushToken: Int? = nil,
            inputPushChannel: TemplateText? = nil,
            contentChanged: Bool? = nil,
            otherKeys: [JSONMember] = []
        ) {
            self.alert = alert
            self.badge = badge
            self.sound = sound
            self.threadID = threadID
            self.category = category
            self.contentAvailable = contentAvailable
            self.mutableContent = mutableContent
            self.targetContentID = targetContentID
            self.interruptionLevel = interruptionLevel
            self.relevanceScore = relevanceScore
            self.filterCriteria = filterCriteria
            self.staleDate = staleDate
            self.contentState = contentState
            self.timestamp = timestamp
            self.event = event
            self.dismissalDate = dismissalDate
            self.attributesType = attributesType
            self.attributes = attributes
            self.inputPushToken = inputPushToken
            self.inputPushChannel = inputPushChannel
            self.contentChanged = contentChanged
            self.otherKeys = otherKeys
        }
    }

    /// `aps.alert`: a plain string, or a dictionary with title, body and localisation keys.
    public enum Alert: Sendable, Hashable {
        case text(TemplateText)
        case fields(AlertFields)
    }

    /// The dictionary form of `aps.alert`.
    public struct AlertFields: Sendable, Hashable {
        public var title: TemplateText?
        public var subtitle: TemplateText?
        public var body: TemplateText?
        /// `launch-image`.
        public var launchImage: TemplateText?
        /// `title-loc-key`.
        public var titleLocKey: TemplateText?
        /// `title-loc-args`.
        public var titleLocArgs: [TemplateText]?
        /// `subtitle-loc-key`.
        public var subtitleLocKey: TemplateText?
        /// `subtitle-loc-args`.
        public var subtitleLocArgs: [TemplateText]?
        /// `loc-key`.
        public var locKey: TemplateText?
        /// `loc-args`.
        public var locArgs: [TemplateText]?

        /// Creates an alert dictionary; every key is optional.
        public init(
            title: TemplateText? = nil,
            subtitle: TemplateText? = nil,
            body: TemplateText? = nil,
            launchImage: TemplateText? = nil,
            titleLocKey: TemplateText? = nil,
            titleLocArgs: [TemplateText]? = nil,
            subtitleLocKey: TemplateText? = nil,
            subtitleLocArgs: [TemplateText]? = nil,
            locKey: TemplateText? = nil,
            locArgs: [TemplateText]? = nil
        ) {
            self.title = title
            self.subtitle = subtitle
            self.body = body
            self.launchImage = launchImage
            self.titleLocKey = titleLocKey
            self.titleLocArgs = titleLocArgs
            self.subtitleLocKey = subtitleLocKey
            self.subtitleLocArgs = subtitleLocArgs
            self.locKey = locKey
            self.locArgs = locArgs
        }
    }

    /// `aps.sound`: a sound file's name, or the dictionary of a critical alert.
    public enum Sound: Sendable, Hashable {
        case named(TemplateText)
        case critical(CriticalSound)
    }

    /// The dictionary form of `aps.sound`.
    public struct CriticalSound: Sendable, Hashable {
        /// `critical`: 1 plays the sound even when the device is muted.
        public var critical: Int?
        /// `name`: the sound file.
        public var name: TemplateText?
        /// `volume`: 0 to 1.
        public var volume: Double?

        /// Creates a sound dictionary.
        public init(critical: Int? = 1, name: TemplateText? = nil, volume: Double? = nil) {
            self.critical = critical
            self.name = name
            self.volume = volume
        }
    }

    /// `aps.interruption-level`.
    public enum InterruptionLevel: String, Sendable, Hashable, CaseIterable {
        case passive
        case active
        case timeSensitive = "time-sensitive"
        case critical
    }

    /// `aps.event` of a Live Activity update.
    public enum LiveActivityEvent: String, Sendable, Hashable, CaseIterable {
        case start
        case update
        case end
    }

    /// The keys push services carry beside `aps` so that a notification service extension can
    /// build a category of action buttons at run time (dynamic action categories).
    ///
    /// ```
    /// "category-actions": [{"name": "OK", "type": "url", "value": "https://…"}, …],
    /// "notification-action": {"type": "url", "value": "https://…"},
    /// "category-name": "content-extension"
    /// ```
    public struct DynamicActions: Sendable, Hashable {
        /// `category-actions`: the buttons, in order.
        public var categoryActions: [NotificationAction]?
        /// `notification-action`: what opening the notification itself does.
        public var notificationAction: NotificationAction?
        /// `category-name`: the category name to use instead of a generated one.
        public var categoryName: TemplateText?

        /// Creates the dynamic-action keys; all are optional.
        public init(
            categoryActions: [NotificationAction]? = nil,
            notificationAction: NotificationAction? = nil,
            categoryName: TemplateText? = nil
        ) {
            self.categoryActions = categoryActions
            self.notificationAction = notificationAction
            self.categoryName = categoryName
        }

        /// Whether none of the keys is present.
        public var isEmpty: Bool { categoryActions == nil && notificationAction == nil && categoryName == nil }
    }

    /// One action: a button of a dynamic category, or the notification's default action.
    public struct NotificationAction: Sendable, Hashable {
        /// `name`: the button's title (required for category actions).
        public var name: TemplateText?
        /// `type`: what the action does, for example `url`.
        public var type: TemplateText?
        /// `value`: its argument, for example the URL.
        public var value: TemplateText?
        /// Any further keys a push service uses, in order.
        public var otherMembers: [JSONMember]

        /// Creates an action.
        public init(
            name: TemplateText? = nil,
            type: TemplateText? = nil,
            value: TemplateText? = nil,
            otherMembers: [JSONMember] = []
        ) {
            self.name = name
            self.type = type
            self.value = value
            self.otherMembers = otherMembers
        }
    }
}
