import FanoutMeasure

/// `plan.json`: the question, each figure of the answer, what binds and every assumption;
/// what is unknown without a CPU cost is `null`.
public struct PlanDocument: Codable, Sendable, Equatable {
    public var devices: UInt64
    public var deadlineSeconds: Double
    public var roundTripMilliseconds: Double
    public var processingMilliseconds: Double
    public var streamsPerConnection: Int
    public var headroom: Double
    @Nullable public var cpuMicroseconds: Double?
    @Nullable public var cpuSource: String?
    public var coresPerMachine: Int
    public var requiredRate: Double
    public var connectionCeiling: Double
    @Nullable public var coreCeiling: Double?
    public var connections: Int
    @Nullable public var cores: Double?
    @Nullable public var machines: Int?
    public var expectedDurationSeconds: Double
    /// `CapacityPlan.Binding`'s raw value.
    public var binds: String
    /// What sets the machines (`CapacityPlan.Binding`'s raw value: CPU or the network interface).
    @Nullable public var machinesBoundBy: String?
    /// Each bound on its own, notifications a second (a connection's; the interface's a machine's).
    public var bounds: Bounds
    @Nullable public var connectionWindow: Int?
    @Nullable public var streamWindow: Int?
    public var refill: Refill
    public var bodyBytes: Int
    public var headerBytes: Int
    public var wireBytesPerNotification: Double
    /// Bytes a second: a connection's path (`null`: not capped) and a machine's interface.
    @Nullable public var bandwidth: Double?
    public var networkInterface: Double
    public var assumptions: [String]
    /// With `fanout plan --device-…`: when the fan-out reaches the devices (`Reach`); absent
    /// otherwise and in older plans.
    public var reach: Reach?
    /// With `fanout plan --device-open …`: the return wave the fan-out sets off (`Wave`); absent
    /// otherwise and in older plans.
    public var wave: Wave?
    /// With `fanout plan --broadcast`: the broadcast's figures and the per-token fan-out of the
    /// same audience (`Broadcast`); absent otherwise and in older plans. The top-level figures
    /// are then the broadcast requests' (`devices` the channels, the deadline the interval).
    public var broadcast: Broadcast?
    /// With `--verify`: how far the rehearsal got (`Verification`); absent without it and in
    /// older plans.
    public var verification: Verification?
    /// The push service planned for, `apns` or `fcm`; absent in older plans (APNs).
    public var service: String?
    /// FCM: the project's quota and what it does to the plan (`Quota`); absent for APNs.
    public var quota: Quota?

    /// FCM's project quota in a plan: messages a window, its sustained rate, whether it binds
    /// (the deadline needs more than its rate and the fan-out more than a window), and the rate
    /// the plan then paces at.
    public struct Quota: Codable, Sendable, Equatable {
        public var messages: Int
        public var windowSeconds: Double
        public var ratePerSecond: Double
        public var binds: Bool
        /// The pace the send keeps, the quota's rate less 1%: where the quota binds, or where the
        /// connections flat out would pass it; `null` where they go flat out.
        @Nullable public var pacedRatePerSecond: Double?

        enum CodingKeys: String, CodingKey {
            case messages
            case windowSeconds = "window_seconds"
            case ratePerSecond = "rate_per_second"
            case binds
            case pacedRatePerSecond = "paced_rate_per_second"
        }

        public init(
            messages: Int,
            windowSeconds: Double,
            ratePerSecond: Double,
            binds: Bool,
            pacedRatePerSecond: Double?
        ) {
            self.messages = messages
            self.windowSeconds = windowSeconds
            self.ratePerSecond = ratePerSecond
            self.binds = binds
            self.pacedRatePerSecond = pacedRatePerSecond
        }
    }

    enum CodingKeys: String, CodingKey {
        case devices
        case deadlineSeconds = "deadline_seconds"
        case roundTripMilliseconds = "rtt_ms"
        case processingMilliseconds = "processing_ms"
        case streamsPerConnection = "streams_per_connection"
        case headroom
        case cpuMicroseconds = "cpu_us_per_notification"
        case cpuSource = "cpu_source"
        case coresPerMachine = "cores_per_machine"
        case requiredRate = "required_rate_per_second"
        case connectionCeiling = "connection_ceiling_per_second"
        case coreCeiling = "core_ceiling_per_second"
        case connections, cores, machines
        case expectedDurationSeconds = "expected_duration_seconds"
        case binds
        case machinesBoundBy = "machines_bound_by"
        case bounds
        case connectionWindow = "connection_window_bytes"
        case streamWindow = "stream_window_bytes"
        case refill
        case bodyBytes = "body_bytes"
        case headerBytes = "header_bytes"
        case wireBytesPerNotification = "wire_bytes_per_notification"
        case bandwidth = "bandwidth_bytes_per_second"
        case networkInterface = "network_interface_bytes_per_second"
        case assumptions, reach, wave, broadcast, verification, service, quota
    }

    /// `plan --verify`'s progress and verdict, written before the rehearsal sends anything and
    /// again when it ends, so a plan.json whose rehearsal was stopped or killed says so:
    ///
    ///     "verification": {"status": "running"}                 (killed outright: it stays so)
    ///     "verification": {"status": "interrupted", "signal": "SIGTERM", "folder": "verify"}
    ///     "verification": {"status": "not_verified", "folder": "verify",
    ///                      "detail": "NOT verified: a measurement is more than 10% from its prediction"}
    public struct Verification: Codable, Sendable, Equatable {
        public enum Status: String, Codable, Sendable {
            /// The rehearsal began and has not ended (a plan.json left so was killed outright).
            case running
            /// Every figure within the tolerance.
            case verified
            /// A figure off its prediction, or not every notification accepted.
            case notVerified = "not_verified"
            /// A stop signal ended the rehearsal part-way; its folder holds what it sent.
            case interrupted
            /// The rehearsal could not run (`detail` says why).
            case failed
        }

        public var status: Status
        /// The stop signal's name (`SIGTERM`), with `interrupted`.
        public var signal: String?
        /// The rehearsal's run folder, relative to plan.json's, once written.
        public var folder: String?
        /// The verdict's last line, or why it could not run.
        public var detail: String?

        public init(status: Status, signal: String? = nil, folder: String? = nil, detail: String? = nil) {
            self.status = status
            self.signal = signal
            self.folder = folder
            self.detail = detail
        }
    }

    /// When the receiver gives back the window (the words of FanoutHTTP2's `WindowRefill`).
    public enum Refill: String, Sendable, Hashable, Codable, CaseIterable {
        /// An update of what was consumed once half the window is (nghttp2, nghttpd, h2load).
        case half
        /// An update for each DATA frame.
        case eachFrame = "each-frame"
        /// An update once `CapacityPlan.Flow.refillThreshold` bytes are consumed (what a probe saw of a
        /// server whose rule is neither).
        case threshold
    }

    /// Each bound a connection meets, notifications a second (`nil`: does not bind, or not
    /// known).
    public struct Bounds: Sendable, Hashable, Codable {
        public var streams: Double
        @Nullable public var connectionWindow: Double?
        @Nullable public var streamWindow: Double?
        @Nullable public var bandwidth: Double?
        @Nullable public var core: Double?
        /// A machine's network interface (every connection of it together).
        public var networkInterface: Double

        enum CodingKeys: String, CodingKey {
            case streams
            case connectionWindow = "connection_window"
            case streamWindow = "stream_window"
            case bandwidth, core
            case networkInterface = "network_interface"
        }
        public init(
            streams: Double,
            connectionWindow: Double? = nil,
            streamWindow: Double? = nil,
            bandwidth: Double? = nil,
            core: Double? = nil,
            networkInterface: Double
        ) {
            self.streams = streams
            self.connectionWindow = connectionWindow
            self.streamWindow = streamWindow
            self.bandwidth = bandwidth
            self.core = core
            self.networkInterface = networkInterface
        }
    }
    public init(
        devices: UInt64,
        deadlineSeconds: Double,
        roundTripMilliseconds: Double,
        processingMilliseconds: Double,
        streamsPerConnection: Int,
        headroom: Double,
        cpuMicroseconds: Double? = nil,
        cpuSource: String? = nil,
        coresPerMachine: Int,
        requiredRate: Double,
        connectionCeiling: Double,
        coreCeiling: Double? = nil,
        connections: Int,
        cores: Double? = nil,
        machines: Int? = nil,
        expectedDurationSeconds: Double,
        binds: String,
        machinesBoundBy: String? = nil,
        bounds: Bounds,
        connectionWindow: Int? = nil,
        streamWindow: Int? = nil,
        refill: Refill,
        bodyBytes: Int,
        headerBytes: Int,
        wireBytesPerNotification: Double,
        bandwidth: Double? = nil,
        networkInterface: Double,
        assumptions: [String]
    ) {
        self.devices = devices
        self.deadlineSeconds = deadlineSeconds
        self.roundTripMilliseconds = roundTripMilliseconds
        self.processingMilliseconds = processingMilliseconds
        self.streamsPerConnection = streamsPerConnection
        self.headroom = headroom
        self.cpuMicroseconds = cpuMicroseconds
        self.cpuSource = cpuSource
        self.coresPerMachine = coresPerMachine
        self.requiredRate = requiredRate
        self.connectionCeiling = connectionCeiling
        self.coreCeiling = coreCeiling
        self.connections = connections
        self.cores = cores
        self.machines = machines
        self.expectedDurationSeconds = expectedDurationSeconds
        self.binds = binds
        self.machinesBoundBy = machinesBoundBy
        self.bounds = bounds
        self.connectionWindow = connectionWindow
        self.streamWindow = streamWindow
        self.refill = refill
        self.bodyBytes = bodyBytes
        self.headerBytes = headerBytes
        self.wireBytesPerNotification = wireBytesPerNotification
        self.bandwidth = bandwidth
        self.networkInterface = networkInterface
        self.assumptions = assumptions
    }
}

extension PlanDocument {
    /// The return wave's plan (issue #63): its requests, its peak and when, whether the
    /// backend's capacity holds it, and the shortest fan-out that keeps it under.
    public struct Wave: Codable, Sendable, Equatable {
        public var open: Double
        public var requestsPerOpen: Int
        public var requests: Double
        public var fanOutSeconds: Double
        public var peakPerSecond: Double
        public var peakSeconds: Double
        public var capacityPerSecond: Double?
        public var holds: Bool?
        public var pacedFanOutSeconds: Double?
        public var pacedDevicesPerSecond: Double?

        public init(
            open: Double,
            requestsPerOpen: Int,
            requests: Double,
            fanOutSeconds: Double,
            peakPerSecond: Double,
            peakSeconds: Double,
            capacityPerSecond: Double?,
            holds: Bool?,
            pacedFanOutSeconds: Double?,
            pacedDevicesPerSecond: Double?
        ) {
            self.open = open
            self.requestsPerOpen = requestsPerOpen
            self.requests = requests
            self.fanOutSeconds = fanOutSeconds
            self.peakPerSecond = peakPerSecond
            self.peakSeconds = peakSeconds
            self.capacityPerSecond = capacityPerSecond
            self.holds = holds
            self.pacedFanOutSeconds = pacedFanOutSeconds
            self.pacedDevicesPerSecond = pacedDevicesPerSecond
        }

        enum CodingKeys: String, CodingKey {
            case open, requests, holds
            case requestsPerOpen = "requests_per_open"
            case fanOutSeconds = "fan_out_seconds"
            case peakPerSecond = "peak_per_second"
            case peakSeconds = "peak_seconds"
            case capacityPerSecond = "capacity_per_second"
            case pacedFanOutSeconds = "paced_fan_out_seconds"
            case pacedDevicesPerSecond = "paced_devices_per_second"
        }
    }
}
