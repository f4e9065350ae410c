import FanoutDevices
import FanoutFCM
import FanoutListening
import FanoutScenarioTerms

/// What an FCM sink serves and how it judges (docs/fcm.md; docs/sink.md, "FCM").
public struct FCMSinkConfiguration: Sendable {
    /// The one project the sink serves: `/v1/projects/{project}/messages:send`. Another
    /// project's sends are 403 PERMISSION_DENIED.
    public var project = "fanout-fcm"
    /// How bearers are judged.
    public var authentication = Authentication.serviceAccount
    /// The project's quota: messages a window (docs/fcm.md, "Quota and rate limits"); `nil`: none.
    public var quota: Quota? = Quota()
    /// Each device's rates (`FCMDeviceRates`); `nil`: none.
    public var deviceLimits: DeviceLimits? = DeviceLimits()
    /// Tokens the sink holds unregistered (404 UNREGISTERED), by a hash of the token's text.
    public var unregisteredShare = 0.0
    /// Tokens listed as unregistered (`--unregistered-tokens FILE`), by `FCMTokenFate.hash`:
    /// each answered 404 UNREGISTERED, whatever the shares draw.
    public var unregisteredTokens: Set<UInt64> = []
    /// Tokens of another sender (403 SENDER_ID_MISMATCH), by the same hash, apart from those.
    public var otherSenderShare = 0.0
    /// Sends the sink fails with 500 INTERNAL, drawn per send (a retry may get through), after
    /// the bearer and the project are checked and before the quota: a server's failure, not
    /// counted against the project.
    public var internalShare = 0.0
    /// Sends the sink turns away with 503 UNAVAILABLE and `Retry-After: unavailableRetryAfter`,
    /// drawn per send like `internalShare`, apart from it.
    public var unavailableShare = 0.0
    /// Seconds a 503 asks for (Google documents no value: **our assumption**, docs/fcm.md).
    public var unavailableRetryAfter = 1
    /// How long each send's answer is held (`--latency`): Google's own time, drawn per send
    /// from the connection's seed, its stream held open meanwhile; token requests are answered
    /// at once. `nil`: every answer at once (a wire in front, `--rtt`, is apart from it).
    public var latency: LatencyDistribution?
    /// GOAWAY (NO_ERROR) after this many requests on an HTTP/2 connection, the streams it has
    /// answered as usual; on HTTP/1.1 the answer to that request says `connection: close`
    /// (`--goaway-after-requests`): a front end retiring a connection, which a sender must
    /// follow onto a new one without losing or repeating a send. `nil`: never.
    public var goAwayAfterRequests: Int?
    /// The draws' seed (`--seed`): each connection's latencies and faults are drawn from the
    /// next of a sequence it starts (shared with the wire's draws).
    public var seed: UInt64 = 0xFC3_5EED
    /// SETTINGS_MAX_CONCURRENT_STREAMS: Google's front end grants 100 (docs/fcm.md, "Transport").
    public var maxConcurrentStreams: UInt32 = 100
    /// A connection with nothing received, open or held for this long (up to twice it) is
    /// closed: GOAWAY NO_ERROR on HTTP/2, a close between requests on HTTP/1.1
    /// (`FCMConnectionTimers`). Google documents none: the APNs sink's 10 minutes, **our
    /// assumption** (docs/fcm.md, "Transport"). `nil` keeps idle connections forever.
    public var idleTimeout: Duration? = .seconds(10 * 60)
    /// How long a request may take to arrive whole once begun: an HTTP/2 stream still open
    /// from the client's side past it is reset (RST_STREAM CANCEL); an HTTP/1.1 connection
    /// whose body is still arriving is closed, unanswered. The APNs sink's 10 s. `nil`: forever.
    public var requestTimeout: Duration? = .seconds(10)
    /// How long the start of an HTTP/2 frame may wait for its rest
    /// (`HTTP2Connection.Configuration.incompleteFrameTimeout`, 30 s); `nil` waits forever.
    public var incompleteFrameTimeout: Duration? = .seconds(30)
    /// Connections open at once, from anyone and from one address, and (once half the total is
    /// open) from one address that have not proved who they are: the APNs sink's limits
    /// (`ConnectionAdmission`). The next is closed as it is accepted, and the log says which
    /// limit, unless a connection that never proved itself can make room for it (it is closed:
    /// `evicted`). `nil`: none of the sink's own, the open-file limit's alone; the sink's job
    /// gives the APNs sink's defaults.
    public var maxConnections: Int?
    public var maxConnectionsPerPeer: Int?
    public var maxIdleConnectionsPerPeer: Int?
    /// How long a connection may go without a proven request (a send with a good bearer, or a
    /// token granted) before a newcomer from its own address, at one of that address's limits,
    /// has it closed; `nil`: the newcomer is closed instead.
    public var idleGrace: Duration? = ConnectionAdmission<Int>.defaultGrace
    /// How long an access token lives, in seconds: Google's answers say 3599.
    public var accessTokenLifetime = 3599
    /// The Android devices behind the sink (`--device-…`, docs/fcm.md, "Devices behind the
    /// sink"): off unless a share or a delay is given. Doze is the fleet's low power: a normal
    /// priority message waits for the device's maintenance window (`burstInterval`), a high
    /// one is delivered at once. A message without `android.ttl` is kept FCM's four weeks
    /// (`defaultTTL`), whatever `defaultExpiry` says.
    public var devices = DeviceFleetSettings()
    /// FCM's ttl when a message gives none: four weeks, "the maximum and the default"
    /// (AndroidConfig.ttl).
    public static let defaultTTL: UInt64 = 2_419_200 * 1_000_000_000

    public init() {}

    public enum Authentication: Sendable, Equatable {
        /// Bearers must be access tokens the sink's token endpoint issued and not yet expired.
        case serviceAccount
        /// `--no-auth`: any bearer is taken; a request without one is still 401.
        case anyBearer
    }

    /// A fixed window that starts with the project's first counted message and ends `window`
    /// later; the next counted message starts the next (not aligned to the clock). Successes and
    /// 4xx answers but 429 count; past `messages`, 429 QUOTA_EXCEEDED with `Retry-After`: the
    /// seconds to the window's end.
    public struct Quota: Sendable, Equatable {
        public var messages = 600_000
        /// Nanoseconds.
        public var window: UInt64 = 60_000_000_000

        public init(messages: Int = 600_000, window: UInt64 = 60_000_000_000) {
            self.messages = messages
            self.window = window
        }
    }

    /// FCM's limits on one device (docs/fcm.md, "Quota and rate limits"): messages a minute and
    /// an hour, and the collapsible messages' burst and its refill.
    public struct DeviceLimits: Sendable, Equatable {
        public var perMinute: UInt32 = 240
        public var perHour: UInt32 = 5000
        public var collapsibleBurst = 20
        public var collapsibleRefillSeconds = 180

        public init(perMinute: UInt32 = 240, perHour: UInt32 = 5000) {
            self.perMinute = perMinute
            self.perHour = perHour
        }
    }
}
