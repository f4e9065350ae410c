import Foundation

/// What `--serve`'s page shows while a run goes, served as `/live.json` and built once a second
/// from the run's per-second data (`LoadSnapshot.intervals`), off the event loops.
///
/// ```
/// {"version":2,"command":"send","second":12,"elapsed_seconds":12.4,"finished":60120,
///  "rate_per_second":5002,"accepted":60000,"rejected":{"Unregistered":120},"failed":{},
///  "done":false,"seconds":[{"second":11,"completed":5001,"p50_ms":0.41,"p99_ms":2.3,…},…]}
/// ```
///
/// Its keys are snake_case, as summary.json's are (version 1 wrote camelCase).
public struct LiveDocument: Codable, Sendable, Equatable {
    /// One second of the run: its throughput, latency, outcomes and the harness's own share.
    public struct Second: Codable, Sendable, Equatable {
        /// Seconds from the start of the run.
        public var second: Int
        /// Notifications that reached a final outcome in it.
        public var completed: Int
        /// Latency percentiles of its answers, milliseconds (0 when it had none; `nil` from the
        /// sink, which holds no per-second latency of its own).
        public var p50Ms: Double?
        public var p99Ms: Double?
        /// Rejections by APNs reason and failures by cause counted in it.
        public var rejected: [String: Int]
        public var failed: [String: Int]
        /// The harness's share: the sender's event loops' worst lag and the p99 of how long
        /// answers waited in their read bursts (milliseconds), and the CPU its loops used
        /// (cores); `nil` where not measured (the sink).
        public var loopLagMaxMs: Double?
        public var readDelayP99Ms: Double?
        public var senderCores: Double?
        /// Connections open at its end (the sink's; `nil` from a sender).
        public var connections: Int?

        enum CodingKeys: String, CodingKey {
            case second, completed, rejected, failed, connections
            case p50Ms = "p50_ms"
            case p99Ms = "p99_ms"
            case loopLagMaxMs = "loop_lag_max_ms"
            case readDelayP99Ms = "read_delay_p99_ms"
            case senderCores = "sender_cores"
        }

        public init(
            second: Int,
            completed: Int,
            p50Ms: Double? = nil,
            p99Ms: Double? = nil,
            rejected: [String: Int] = [:],
            failed: [String: Int] = [:],
            loopLagMaxMs: Double? = nil,
            readDelayP99Ms: Double? = nil,
            senderCores: Double? = nil,
            connections: Int? = nil
        ) {
            self.second = second
            self.completed = completed
            self.p50Ms = p50Ms
            self.p99Ms = p99Ms
            self.rejected = rejected
            self.failed = failed
            self.loopLagMaxMs = loopLagMaxMs
            self.readDelayP99Ms = readDelayP99Ms
            self.senderCores = senderCores
            self.connections = connections
        }
    }

    /// The layout's version: 2 (snake_case keys; 1 wrote camelCase).
    public static let currentVersion = 2
    /// How many of the latest seconds the document holds (the page's charts span them).
    public static let secondsKept = 300

    public var version = Self.currentVersion
    /// `run`, `send` or `sink`.
    public var command: String
    /// The run's current second (whole seconds since it started) and the exact time.
    public var second: Int
    public var elapsedSeconds: Double
    /// Notifications with a final outcome so far, and the rate over the last second or so.
    public var finished: Int
    public var ratePerSecond: Double
    /// The run's outcomes so far.
    public var accepted: Int
    public var rejected: [String: Int]
    public var failed: [String: Int]
    /// The run has ended: its final report is served at `/` and `/report.html`.
    public var done = false
    /// The latest seconds closed so far (at most `secondsKept`), oldest first.
    public var seconds: [Second]

    enum CodingKeys: String, CodingKey {
        case version, command, second, finished, accepted, rejected, failed, done, seconds
        case elapsedSeconds = "elapsed_seconds"
        case ratePerSecond = "rate_per_second"
    }

    public init(
        command: String,
        elapsedSeconds: Double,
        finished: Int,
        ratePerSecond: Double,
        accepted: Int,
        rejected: [String: Int],
        failed: [String: Int],
        seconds: [Second]
    ) {
        self.command = command
        self.second = Int(elapsedSeconds.rounded(.down))
        self.elapsedSeconds = elapsedSeconds
        self.finished = finished
        self.ratePerSecond = ratePerSecond
        self.accepted = accepted
        self.rejected = rejected
        self.failed = failed
        self.seconds = seconds
    }

    /// The document as JSON (keys sorted).
    public var json: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        // Every field is a finite number, a string or a map of them: encoding cannot fail.
        return (try? encoder.encode(self)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }

    /// Counts by name (an APNs reason, a failure's cause), as the document holds them.
    public static func named<Key: RawRepresentable>(_ counts: [Key: Int]) -> [String: Int]
    where Key.RawValue == String {
        Dictionary(uniqueKeysWithValues: counts.map { ($0.key.rawValue, $0.value) })
    }
}
