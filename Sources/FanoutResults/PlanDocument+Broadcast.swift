import FanoutMeasure

extension PlanDocument {
    /// plan.json's `broadcast` (with `fanout plan --broadcast`; absent otherwise and in older
    /// plans): one update every interval on each channel, and the per-token fan-out of the same
    /// audience beside it. Rates are a second.
    public struct Broadcast: Codable, Sendable, Equatable {
        public var channels: UInt64
        public var subscribers: UInt64
        public var updateEverySeconds: Double
        /// Broadcast requests a second (channels ÷ interval): what a rehearsal measures.
        public var requestRate: Double
        /// Connections the requests need, and the share of one connection's ceiling they use.
        public var connections: Int
        public var connectionShare: Double
        /// Device deliveries a second APNs is asked for (request rate × subscribers).
        public var deliveriesPerSecond: Double
        public var perToken: PerToken

        /// The per-token fan-out of the same audience: a notification a subscriber an update.
        public struct PerToken: Codable, Sendable, Equatable {
            public var notificationsPerUpdate: UInt64
            public var rate: Double
            public var connections: Int
            /// Sender cores and machines, when the CPU cost is known (`null` otherwise).
            @Nullable public var cores: Double?
            @Nullable public var machines: Int?
            /// One update's notifications on the broadcast's connections, and whether that fits
            /// in the interval.
            public var secondsOnBroadcastConnections: Double
            public var fits: Bool

            enum CodingKeys: String, CodingKey {
                case notificationsPerUpdate = "notifications_per_update"
                case rate = "rate_per_second"
                case connections, cores, machines
                case secondsOnBroadcastConnections = "seconds_on_broadcast_connections"
                case fits
            }

            public init(
                notificationsPerUpdate: UInt64,
                rate: Double,
                connections: Int,
                cores: Double?,
                machines: Int?,
                secondsOnBroadcastConnections: Double,
                fits: Bool
            ) {
                self.notificationsPerUpdate = notificationsPerUpdate
                self.rate = rate
                self.connections = connections
                self.cores = cores
                self.machines = machines
                self.secondsOnBroadcastConnections = secondsOnBroadcastConnections
                self.fits = fits
            }
        }

        enum CodingKeys: String, CodingKey {
            case channels, subscribers
            case updateEverySeconds = "update_every_seconds"
            case requestRate = "request_rate_per_second"
            case connections
            case connectionShare = "connection_share"
            case deliveriesPerSecond = "deliveries_per_second"
            case perToken = "per_token"
        }

        public init(
            channels: UInt64,
            subscribers: UInt64,
            updateEverySeconds: Double,
            requestRate: Double,
            connections: Int,
            connectionShare: Double,
            deliveriesPerSecond: Double,
            perToken: PerToken
        ) {
            self.channels = channels
            self.subscribers = subscribers
            self.updateEverySeconds = updateEverySeconds
            self.requestRate = requestRate
            self.connections = connections
            self.connectionShare = connectionShare
            self.deliveriesPerSecond = deliveriesPerSecond
            self.perToken = perToken
        }
    }
}
