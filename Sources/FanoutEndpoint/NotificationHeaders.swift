import FanoutAPNs

/// The APNs request headers of a run besides the path (docs/apns.md, "Request").
public struct NotificationHeaders: Sendable, Hashable {
    /// `apns-topic`: the bundle id plus the push type's suffix.
    public private(set) var topic: String
    public private(set) var pushType: APNsPushType
    /// `apns-priority`; `nil` leaves it out (APNs' default, 10).
    public private(set) var priority: APNsPriority?
    /// `apns-expiration` in UNIX seconds (0: deliver once); `nil` leaves it out.
    public private(set) var expiration: Int?
    /// `apns-collapse-id`.
    public private(set) var collapseID: APNsCollapseID?
    /// Whether each notification gets an `apns-id` (a random version-4 UUID, the same on its
    /// retries, as a provider that tracks its notifications sends), or none (APNs makes one).
    public var generatesAPNsID = false
    /// Every how many requests one carries an `apns-id` with its send time (`TimedAPNsID`; 1:
    /// each, 0: none): a Fanout sink on this host times those answers' lateness from the send.
    /// The others carry none. Overrides `generatesAPNsID`. `fanout run` times one in
    /// `RunJob.timedAPNsIDs`: the id's 46 bytes on every request cost throughput.
    public var timedAPNsIDs = 0

    /// Headers APNs accepts, or the first rule they break (docs/apns.md): the topic ends with
    /// the push type's suffix, the priority is 10, 5 or 1 (5 for a background push), the
    /// expiration is not negative, the collapse id at most 64 bytes.
    public init(
        topic: String,
        pushType: APNsPushType = .alert,
        priority: Int? = nil,
        expiration: Int? = nil,
        collapseID: String? = nil,
        generatesAPNsID: Bool = false
    ) throws(APNsHeaderError) {
        try pushType.check(topic: topic)
        self.topic = topic
        self.pushType = pushType
        self.priority = try priority.map { value throws(APNsHeaderError) in try APNsPriority(checking: value) }
        if pushType == .background, let priority = self.priority, priority != .powerConsidered {
            throw APNsHeaderError(header: "apns-priority", "of a background push is 5, not \(priority)")
        }
        if let expiration, expiration < 0 {
            throw APNsHeaderError(header: "apns-expiration", "is UNIX seconds (0: deliver once), not \(expiration)")
        }
        self.expiration = expiration
        self.collapseID = try collapseID.map { text throws(APNsHeaderError) in try APNsCollapseID(checking: text) }
        self.generatesAPNsID = generatesAPNsID
    }
}
