import FanoutAPNs
import FanoutFCM

/// What APNs and FCM ask of a provider that a server can check from its side of the wire: the
/// rows of the sink's conformance card (`fanout sink --output`), each gateable by its raw value
/// (`fanout gate DIR --threshold 'violations.churn == 0'`). Some rows are both services' (a
/// permanent rejection retried, streams, churn), some one's (`services`): a sink's card shows the
/// rows of the service it mocks.
public enum ProviderRule: String, CaseIterable, Sendable, Codable, Hashable {
    /// A token sent again after an answer that said never to: 400 BadDeviceToken,
    /// DeviceTokenNotForTopic and the other 400s, 403 (but a provider token's own, fixed by a new
    /// token), 410 Unregistered or ExpiredToken, 413.
    case permanentRetried = "permanent-retried"
    /// APNs: a token sent again less than `FastRetry.pause` after its 429 TooManyRequests or
    /// its 500 or 503 (but Shutdown, which asks for another connection, not a pause). FCM: a
    /// token sent again before the Retry-After of its 429 or 503 ran out (`FastRetry.pause`
    /// after a 500, which has none).
    case fastRetry = "fast-retry"
    /// A stream past the limit the sink announced (refused with REFUSED_STREAM), or past the
    /// initial limit (1) before the connection's first accepted request.
    case streamLimit = "stream-limit"
    /// A stream opened after the sink's GOAWAY on that connection.
    case afterGoAway = "after-goaway"
    /// A connection the provider closed after less than `Churn.lifetime` and fewer than
    /// `Churn.requests` requests (but at least one: a port probe is no provider's), followed by
    /// a new connection: connecting per batch or per
    /// notification, which APNs treats as a denial-of-service attempt.
    case churn
    /// A provider token renewed sooner than 20 minutes after the last (by its iat, on any
    /// connection; or 429 TooManyProviderTokenUpdates) or kept past 60 (403 ExpiredProviderToken).
    case providerToken = "provider-token"
    /// One apns-id on two different notifications (token and payload).
    case apnsIDReused = "apns-id-reused"
    /// A payload within 5% of its limit (4,096 bytes, 5,120 for voip): one field longer and APNs
    /// answers 413.
    case payloadNearLimit = "payload-near-limit"
    /// The device fleet's (issue #51; on the card only when the sink has devices): a notification
    /// sent with `apns-expiration: 0` to a device that was offline, lost by design. Apple: "If
    /// the value is 0, APNs attempts to deliver the notification only once and doesn't store it."
    case expirationZeroOffline = "expiration-zero-offline"
    /// The fleet's: an alert (any push type but background) delivered from storage longer after
    /// APNs received it than the sink's `--device-stale-after`; its `apns-expiration` (or its
    /// absence) let it arrive that late.
    case staleDelivery = "stale-delivery"
    /// The fleet's: a background push past the device's budget (`--device-background-budget`),
    /// stored for power considerations. Apple: "don't try to send more than two or three per hour".
    case backgroundOverBudget = "background-over-budget"
    /// Broadcast channels' (issue #45; on the card only when the sink saw a channel or broadcast
    /// request): a channel this provider created during the run and had not deleted when the
    /// sink wrote its folder. Apple: a channel lives until it is deleted, and an app has at
    /// most 10,000 (docs/apns.md, "Broadcast channels").
    case channelsLeftOpen = "channels-left-open"
    /// Broadcast channels': an app's open channels reaching `Broadcast.nearLimit` of the
    /// 10,000 APNs allows (once each time they rise to it), or a creation refused with
    /// CannotCreateChannelConfig.
    case channelsNearLimit = "channels-near-limit"
    /// Broadcast channels': a broadcast to a channel id whose earlier broadcast was answered
    /// ChannelNotRegistered (deleted or never created): the answer says the channel is gone.
    case deletedChannelRetried = "deleted-channel-retried"
    /// Broadcast channels': a broadcast at priority 10 on a channel past the budget of
    /// priority-10 updates per channel per window (`--liveactivity-priority-budget`; Apple
    /// gives no number: `Broadcast.priorityBudget` is Fanout's).
    case liveActivityOverBudget = "liveactivity-over-budget"
    /// Broadcast channels': an accepted broadcast whose `aps.timestamp` is lower than the
    /// highest accepted before it on its channel (a device ignores an update older than the one
    /// it shows: docs/apns.md, "Live Activity payloads").
    case timestampBackwards = "timestamp-backwards"
    /// FCM's: a 429 QUOTA_EXCEEDED for the project answered more than `Quota.grace` into the
    /// back-off its window's first 429 asked for (its Retry-After): the provider kept sending
    /// at a rate the quota refuses. Google: "Use exponential backoff with a minimum initial delay
    /// of 1 minute" (docs/fcm.md, "What FCM asks of senders").
    case quotaIgnored = "quota-ignored"
    /// FCM's: client errors (4xx but 429) at `ClientErrors.share` of the sends or more, all of
    /// them counted (0 below the share). They count against the quota, and a quota increase
    /// needs fewer than 5%.
    case clientErrors = "client-errors"
    /// FCM's: a send answered 200 whose message (token and whole body) was answered 200 before:
    /// a GOAWAY's or a timeout's retry of what was delivered, which the device shows twice.
    case duplicate
    /// FCM's: an access token replaced early: the next one was issued while it had more than
    /// `AccessTokens.earlyRefresh` left, and no send carried it afterwards (a token a send, or
    /// a refresh long before it is due; two clients of one account each using theirs are not).
    case accessToken = "access-token"
    /// FCM's: a send answered 401 UNAUTHENTICATED: without a bearer, with an expired one, with
    /// one the token endpoint never issued, or again with one already answered 401.
    case bearer

    /// Whether the device fleet checks it: such a rule is on the card only when the sink has
    /// devices (without them there is nothing to check, and a check that saw nothing claims no pass).
    public var isFleet: Bool {
        switch self {
        case .expirationZeroOffline, .staleDelivery, .backgroundOverBudget: true
        default: false
        }
    }

    /// Whether it is a broadcast channels' rule: on the card only when the sink saw a channel or
    /// broadcast request (a provider that sent none has nothing to pass).
    public var isBroadcast: Bool {
        switch self {
        case .channelsLeftOpen, .channelsNearLimit, .deletedChannelRetried, .liveActivityOverBudget,
            .timestampBackwards:
            true
        default: false
        }
    }

    /// The services whose sink checks it.
    public var services: Set<PushService> {
        switch self {
        case .permanentRetried, .fastRetry, .streamLimit, .afterGoAway, .churn: [.apns, .fcm]
        case .expirationZeroOffline, .staleDelivery: [.apns, .fcm]
        case .quotaIgnored, .clientErrors, .duplicate, .accessToken, .bearer: [.fcm]
        default: [.apns]
        }
    }

    /// Whether a sink of `service`'s card shows it: its service's rules; of those, the fleet's
    /// with devices, the broadcast rules once a channel or broadcast request came, the rest always.
    public func isShown(service: PushService, devices: Bool, broadcasts: Bool) -> Bool {
        services.contains(service) && (!isFleet || devices) && (!isBroadcast || broadcasts)
    }

    /// This rule's position in `allCases`, the subscript of its count: a switch, so that counting
    /// a violation neither hashes nor allocates.
    public var index: Int {
        switch self {
        case .permanentRetried: 0
        case .fastRetry: 1
        case .streamLimit: 2
        case .afterGoAway: 3
        case .churn: 4
        case .providerToken: 5
        case .apnsIDReused: 6
        case .payloadNearLimit: 7
        case .expirationZeroOffline: 8
        case .staleDelivery: 9
        case .backgroundOverBudget: 10
        case .channelsLeftOpen: 11
        case .channelsNearLimit: 12
        case .deletedChannelRetried: 13
        case .liveActivityOverBudget: 14
        case .timestampBackwards: 15
        case .quotaIgnored: 16
        case .clientErrors: 17
        case .duplicate: 18
        case .accessToken: 19
        case .bearer: 20
        }
    }

    /// The rule, as a card of `service`'s sink states it (the rows both services check say
    /// each one's statuses).
    public func title(for service: PushService) -> String {
        guard service == .fcm else { return title }
        switch self {
        case .permanentRetried: return "never retry a permanent rejection (400, 403 SENDER_ID_MISMATCH, 404)"
        case .fastRetry: return "retry 429, 500 and 503 only after their Retry-After (1 s without one)"
        case .streamLimit: return "respect MAX_CONCURRENT_STREAMS (100)"
        case .expirationZeroOffline: return "ttl 0 only for what may be lost: none reached an offline device"
        case .staleDelivery:
            return "notification messages expire before they go stale: none delivered after being kept past the bound"
        default: return title
        }
    }

    /// The rule, as the card states it (an APNs sink's words for the rows both check).
    public var title: String {
        switch self {
        case .permanentRetried: "never retry a permanent rejection (400, 403, 410, 413)"
        case .fastRetry: "retry 429 and 5xx only after a pause (1 s or more)"
        case .streamLimit: "respect MAX_CONCURRENT_STREAMS (1 until the first accepted request)"
        case .afterGoAway: "no new streams on a connection after its GOAWAY"
        case .churn: "keep connections open: no connect and close in quick succession"
        case .providerToken: "renew provider tokens every 20 to 60 minutes"
        case .apnsIDReused: "one apns-id, one notification"
        case .payloadNearLimit: "payloads at least 5% under the size limit"
        case .expirationZeroOffline: "apns-expiration 0 only for what may be lost: none reached an offline device"
        case .staleDelivery: "alerts expire before they go stale: none delivered from storage past the bound"
        case .backgroundOverBudget: "background pushes within the device's budget (two or three an hour)"
        case .channelsLeftOpen: "delete the broadcast channels a run created"
        case .channelsNearLimit: "stay under 90% of the app's 10,000 channels"
        case .deletedChannelRetried: "no broadcast again to a channel answered ChannelNotRegistered"
        case .liveActivityOverBudget: "priority-10 Live Activity updates within the budget per channel"
        case .timestampBackwards: "Live Activity timestamps never go backwards on a channel"
        case .quotaIgnored: "after the project's 429, back off: none more than 1 s into its Retry-After"
        case .clientErrors: "client errors (4xx but 429) under 5% of sends"
        case .duplicate: "each message delivered once: no send answered 200 twice"
        case .accessToken: "reuse the access token until near its expiry (10 minutes or less left)"
        case .bearer: "every send with a live bearer the token endpoint issued"
        }
    }

    /// Thresholds of the checks.
    public enum FastRetry {
        /// A retry sooner than this after a 429 or 5xx is too fast.
        public static let pause: Duration = .seconds(1)
    }

    public enum Churn {
        /// A connection closed by its provider sooner than this, with fewer than `requests`
        /// requests, is short; a short one followed by a new connection is churn.
        public static let lifetime: Duration = .seconds(10)
        public static let requests = 100
    }

    /// FCM's project quota.
    public enum Quota {
        /// What may still arrive after a back-off begins: requests in flight when its first 429
        /// was answered.
        public static let grace: Duration = .seconds(1)
    }

    /// FCM's client errors.
    public enum ClientErrors {
        /// The share of sends at which they count: Google's bar for a quota increase ("< 5%
        /// client errors", docs/fcm.md).
        public static let share = 0.05
    }

    /// FCM's access tokens.
    public enum AccessTokens {
        /// A new token while the last had more than this to live is early (Google's libraries
        /// refresh 3 min 45 s before expiry; 10 minutes leaves room for clocks and batches).
        public static let earlyRefresh: Duration = .seconds(600)
    }

    public enum ProviderTokens {
        /// Seconds between renewals, at least and at most.
        public static let shortestRenewal: Int64 = 20 * 60
        public static let longestUse: Int64 = 60 * 60
    }

    public enum Broadcast {
        /// APNs's channels per app and environment (docs/apns.md, "Broadcast channels").
        public static let channelLimit = 10_000
        /// An app holding this many channels is near the limit: 90% of it (Fanout's choice).
        public static let nearLimit = channelLimit * 9 / 10
        /// Priority-10 broadcasts a channel may carry per `priorityWindow` (Fanout's choice:
        /// Apple says high priority "counts against" a Live Activity's budget and gives no number;
        /// 12 an hour is one every five minutes on average).
        public static let priorityBudget = 12
        public static let priorityWindow: Duration = .seconds(3600)
    }

    /// A payload this close to its limit (a share of it) is near it.
    public static let payloadMargin = 0.05

    /// Whether `length` bytes are within `payloadMargin` of `limit`.
    @inlinable
    public static func isNearLimit(_ length: Int, limit: Int) -> Bool {
        Double(length) >= Double(limit) * (1 - payloadMargin)
    }

    /// What a rejection tells the provider about sending the same token again.
    public enum RetryAdvice: Sendable, Equatable {
        /// Never: the token or notification is wrong for good.
        case never
        /// After a pause.
        case afterPause
        /// Whenever: the answer is about the connection or the provider token, not the token.
        case any
    }

    /// What FCM's `code` says about sending its token again (docs/fcm.md, "What FCM asks of
    /// senders"): INVALID_ARGUMENT, SENDER_ID_MISMATCH and UNREGISTERED never; QUOTA_EXCEEDED,
    /// INTERNAL and UNAVAILABLE after their Retry-After; the rest (the APNs credential in
    /// Firebase, an unspecified error) whenever.
    public static func advice(after code: FCMErrorCode) -> RetryAdvice {
        switch code {
        case .invalidArgument, .senderIDMismatch, .unregistered: .never
        case .quotaExceeded, .internal, .unavailable: .afterPause
        case .thirdPartyAuthError, .unspecifiedError: .any
        }
    }

    /// What `reason` says about sending its token again.
    public static func advice(after reason: APNsReason) -> RetryAdvice {
        switch reason {
        case .shutdown, .idleTimeout, .expiredProviderToken, .invalidProviderToken, .missingProviderToken,
            .unrelatedKeyIdInToken, .badEnvironmentKeyInToken, .tooManyProviderTokenUpdates, .badCertificate,
            .badCertificateEnvironment:
            .any
        case .tooManyRequests, .internalServerError, .serviceUnavailable:
            .afterPause
        default:
            .never
        }
    }
}
