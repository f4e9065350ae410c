import FanoutPush

/// `campaign.json`: one campaign across push services (`fanout run --fleet`, `fanout send
/// --fcm-endpoint`), each service's half beside the campaign's whole. Each half's own run folder (`apns/`, `fcm/`) holds its
/// summary.json as any run's; this file is what they make together.
///
/// ```
///   {"schema": 2,
///    "fleet": {"apns": 0.55, "fcm": 0.45},
///    "services": [{"service": "apns", "folder": "apns", "devices": 549914, …},
///                 {"service": "fcm",  "folder": "fcm",  "devices": 450086, …}],
///    "campaign": {"devices": 1000000, "accepted": 1000000, "seconds": 6.2, …}}
/// ```
public struct CampaignDocument: Codable, Sendable, Equatable {
    /// 2 since `reconciled` may be absent (a half sent to an endpoint the run cannot see).
    public var schema = 2
    /// Each service's share of the devices: as asked (`run --fleet`), or as the token set held
    /// them (`send --fcm-endpoint`).
    public var fleet: [String: Double]
    public var services: [Half]
    public var campaign: Whole
    /// A scaled rehearsal's terms (`run --fleet --sample`): every count and duration here is the
    /// sample's, every rate the campaign's. Absent for the campaign itself and in older files.
    public var sample: SampleSummary?

    /// Latency percentiles in milliseconds, from the notification's start to its final answer.
    public struct Latency: Codable, Sendable, Equatable {
        public var p50: Double
        public var p99: Double
        public var max: Double

        public init(p50: Double, p99: Double, max: Double) {
            self.p50 = p50
            self.p99 = p99
            self.max = max
        }
    }

    /// One service's half of the campaign: its devices, what became of them, whether its sink
    /// agrees, and its fan-out time from the campaign's start.
    public struct Half: Codable, Sendable, Equatable {
        public var service: PushService
        /// Its run folder, relative to campaign.json's.
        public var folder: String
        public var devices: UInt64
        public var sent: Int
        public var accepted: Int
        public var rejected: [PushReason: Int]
        public var failed: Int
        /// Sender and sink agree on every count and on the digest of what was accepted; absent
        /// when the half went to an endpoint whose counts the run cannot see.
        public var reconciled: Bool?
        /// From the campaign's start (the first half's) to this half's start: the halves run
        /// together, so one of them starts at 0 and the other a set-up's moment later.
        public var started: Double
        /// From the campaign's start to this half's last answer.
        public var seconds: Double
        public var latencyMilliseconds: Latency?

        enum CodingKeys: String, CodingKey {
            case service, folder, devices, sent, accepted, rejected, failed, reconciled, seconds
            case started = "started_seconds"
            case latencyMilliseconds = "latency_ms"
        }

        public init(
            service: PushService,
            folder: String,
            devices: UInt64,
            sent: Int,
            accepted: Int,
            rejected: [PushReason: Int],
            failed: Int,
            reconciled: Bool?,
            started: Double,
            seconds: Double,
            latencyMilliseconds: Latency?
        ) {
            self.started = started
            self.service = service
            self.folder = folder
            self.devices = devices
            self.sent = sent
            self.accepted = accepted
            self.rejected = rejected
            self.failed = failed
            self.reconciled = reconciled
            self.seconds = seconds
            self.latencyMilliseconds = latencyMilliseconds
        }
    }

    /// The campaign: every half's devices and outcomes together, its fan-out time to the last
    /// device of either service, and the latency of every notification of both.
    public struct Whole: Codable, Sendable, Equatable {
        public var devices: UInt64
        public var accepted: Int
        public var rejected: Int
        public var failed: Int
        /// Every half reconciled with its sink; absent when some half's endpoint's counts are
        /// unseen.
        public var reconciled: Bool?
        public var seconds: Double
        public var latencyMilliseconds: Latency?

        enum CodingKeys: String, CodingKey {
            case devices, accepted, rejected, failed, reconciled, seconds
            case latencyMilliseconds = "latency_ms"
        }

        public init(
            devices: UInt64,
            accepted: Int,
            rejected: Int,
            failed: Int,
            reconciled: Bool?,
            seconds: Double,
            latencyMilliseconds: Latency?
        ) {
            self.devices = devices
            self.accepted = accepted
            self.rejected = rejected
            self.failed = failed
            self.reconciled = reconciled
            self.seconds = seconds
            self.latencyMilliseconds = latencyMilliseconds
        }
    }

    public init(fleet: [String: Double], services: [Half], campaign: Whole) {
        self.fleet = fleet
        self.services = services
        self.campaign = campaign
    }

    /// The file's name in the campaign's folder.
    public static let fileName = "campaign.json"
}
