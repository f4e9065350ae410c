import FanoutMeasure
import FanoutSettings
import Foundation

/// `summary.json`: one definition for what `fanout run`, `send` and `merge` write and what
/// `compare`, `gate`, `export`, `merge`, `plan --cost`, summary.md and report.html read.
/// docs/summary.schema.json describes the same document; a test checks what is written
/// against it.
///
/// A field newer than schema 2 is optional here, so a folder written by an older Fanout (down
/// to `RunSummary.readableSchemaVersions`) still reads; `read(_:)` refuses the rest by their
/// version. Times are seconds unless a key ends in `_ms`.
public struct SummaryDocument: Codable, Sendable, Equatable {
    public var schemaVersion: Int
    public var configuration: Configuration
    public var environment: RunEnvironment
    /// When the run started (before it connected), RFC 3339 to the millisecond.
    public var started: String
    public var endpoint: String
    public var connections: Int
    public var streamsPerConnection: Int
    public var elapsedSeconds: Double
    public var sent: Int
    public var accepted: Int
    /// Counts by reason (`APNsReason`, `FailureCause`, `SkipCause` raw values).
    public var rejected: [String: Int]
    public var failed: [String: Int]
    public var skipped: [String: Int]
    public var requests: Int
    public var retries: Int
    /// `null` when nothing was measured: no answers, or none after the warm-up (schema 7).
    @Nullable public var throughputPerSecond: Double?
    /// `null` when no latency was measured (schema 7; before, zeros).
    @Nullable public var latency: Latency?
    public var digest: String
    public var cancelled: Bool
    /// Whether sender and sink agree; `null` without a sink to ask.
    @Nullable public var reconciled: Bool?
    /// Schema 3.
    public var cpu: CPU?
    /// Schema 5; `null` in a merge of shards without it.
    @Nullable public var harness: Harness?
    /// Schema 4.
    public var start: Start?
    /// `--shard i/N`; `null` for a whole run and a merge (schema 4).
    @Nullable public var shard: String?
    public var model: String
    /// The open model's schedule; absent in the closed model.
    public var schedule: Schedule?
    public var generatorLag: GeneratorLag?
    public var warmUpSeconds: Double
    /// The sum of `unscheduledReasons`.
    public var unscheduled: Int
    /// Absent before the reasons were kept: then all of `unscheduled` was `scheduleOver`.
    public var unscheduledReasons: UnscheduledReasons?
    public var valid: Bool
    public var invalidReasons: [String]

    /// Why the run cannot be trusted, as every reader takes it: `valid` is authoritative, so a
    /// summary saying `false` without a reason is invalid still, and a reason makes it invalid
    /// whatever `valid` says. Empty for a valid run.
    public var invalidity: [String] {
        if !valid && invalidReasons.isEmpty { return [Self.invalidWithoutReason] }
        return invalidReasons
    }

    public static let invalidWithoutReason = "summary.json says \"valid\": false and gives no reason"

    /// Notifications the server answered (accepted, rejected, or answered without an APNs
    /// reason): with none, no rate, CPU per notification or percentile stands for anything, and
    /// readers say "no answers".
    public var answered: Int { accepted + rejected.values.reduce(0, +) + (failed["UnexpectedResponse"] ?? 0) }
    public var intervals: [Interval]
    public var tokens: Tokens?
    public var abandoned: String?
    public var sink: Sink?
    /// `fanout merge`: the shards' folders, whether some were missing and why, how far apart
    /// their first sends lay (absent with fewer than two), and where each ran.
    public var mergedFrom: [String]?
    public var partial: Bool?
    public var partialReasons: [String]?
    public var startSkew: Double?
    public var shardEnvironments: [RunEnvironment]?
    /// Schema 6: what wrote the folder — `sink` for `fanout sink --output` (then `provider`
    /// holds what it measured of the provider under test); absent for a run or a merge of runs.
    public var kind: String?
    public var provider: Provider?
    /// Tokens read ahead but never sent because the run was interrupted: not in `sent`, not
    /// failures. Absent when none were (and in folders written before it was kept).
    public var unsent: Int?
    /// The open model's pacing and its waits for streams (schema 8); absent in the closed model,
    /// a merge and older folders.
    public var openModel: OpenModel? = nil
    /// With the sink's device fleet on: what became of the accepted notifications (an added,
    /// optional field); absent otherwise and in older folders.
    public var delivery: DeliverySummary? = nil

    enum CodingKeys: String, CodingKey {
        case schemaVersion = "schema_version"
        case configuration, environment, started, endpoint, connections
        case streamsPerConnection = "streams_per_connection"
        case elapsedSeconds = "elapsed_seconds"
        case sent, accepted, rejected, failed, skipped, requests, retries
        case throughputPerSecond = "throughput_per_second"
        case latency = "latency_ms"
        case digest, cancelled, reconciled, cpu, harness, start, shard, model, schedule
        case generatorLag = "generator_lag_ms"
        case warmUpSeconds = "warm_up_seconds"
        case unscheduled
        case unscheduledReasons = "unscheduled_reasons"
        case valid
        case invalidReasons = "invalid_reasons"
        case intervals, tokens, abandoned, sink
        case mergedFrom = "merged_from"
        case partial
        case partialReasons = "partial_reasons"
        case startSkew = "start_skew_ms"
        case shardEnvironments = "shard_environments"
        case kind, provider
        case unsent
        case openModel = "open_model"
        case delivery
    }

    /// How the open model's arrivals went out: the pacing window asked for (`--coalesce`) and the
    /// largest one used, and the notifications that fell due while every stream their
    /// connection could open was busy (`StreamWaits`): part of their latency is that wait.
    public struct OpenModel: Codable, Sendable, Equatable {
        public var coalesce: String
        public var largestWindowMs: Double
        public var streamWaits: StreamWaits

        public struct StreamWaits: Codable, Sendable, Equatable {
            /// Outside the warm-up.
            public var count: Int
            /// Of the notifications sent outside the warm-up.
            public var share: Double
            public var longestMs: Double
            /// The fewest streams busy while one waited: the tightest limit met (0: none).
            public var fewestStreams: Int

            public init(count: Int, share: Double, longestMs: Double, fewestStreams: Int) {
                self.count = count
                self.share = share
                self.longestMs = longestMs
                self.fewestStreams = fewestStreams
            }

            enum CodingKeys: String, CodingKey {
                case count, share
                case longestMs = "longest_ms"
                case fewestStreams = "fewest_streams"
            }
        }

        public init(coalesce: String, largestWindowMs: Double, streamWaits: StreamWaits) {
            self.coalesce = coalesce
            self.largestWindowMs = largestWindowMs
            self.streamWaits = streamWaits
        }

        enum CodingKeys: String, CodingKey {
            case coalesce
            case largestWindowMs = "largest_window_ms"
            case streamWaits = "stream_waits"
        }

        /// "1,600 notifications (1.6%) waited up to 80.0 ms for a stream (1 stream a connection:
        /// APNs allows one until a connection's first request is accepted)"; `nil` when none did.
        public var streamWaitLine: String? {
            guard streamWaits.count > 0 else { return nil }
            let limit =
                switch streamWaits.fewestStreams {
                case 0: ""
                case 1: " (1 stream a connection: APNs allows one until a connection's first request is accepted)"
                default: " (\(streamWaits.fewestStreams) streams a connection, the server's limit)"
                }
            return
                "\(grouped(streamWaits.count)) notifications (\(String(format: "%.1f", streamWaits.share * 100))%) waited up to "
                + "\(String(format: "%.1f", streamWaits.longestMs)) ms for a stream\(limit): part of their latency"
        }
    }

    /// `fanout sink --output`'s folder.
    public static let sinkKind = "sink"
    public var isSink: Bool { kind == Self.sinkKind }

    /// What was asked for: the settings that shape a run, to compare like with like.
    public struct Configuration: Codable, Sendable, Equatable {
        public var endpoint: String
        public var connections: Int
        public var streamsPerConnection: Int
        /// Where the tokens came from, e.g. `generated: 1000000, seed 1, shard 1/2`.
        public var tokens: String
        public var topic: String
        public var pushType: String
        @Nullable public var priority: Int?
        @Nullable public var expiration: Int?
        @Nullable public var collapseID: String?
        public var tokenAuth: Bool
        public var streamTimeoutSeconds: Double
        public var maxAttempts: Int
        public var model: String
        @Nullable public var schedule: String?
        @Nullable public var durationSeconds: Double?
        public var warmUpSeconds: Double
        public var maxLagSeconds: Double
        /// Schema 5.
        public var maxHarnessShare: Double?
        /// The scenario file that applied (`fanout run --sink-scenario`, `send --scenario`,
        /// `sink --scenario`): its path and SHA-256; `null` for none (schema 7).
        @Nullable public var scenario: FileUse? = nil

        enum CodingKeys: String, CodingKey {
            case endpoint, connections
            case streamsPerConnection = "streams_per_connection"
            case tokens, topic
            case pushType = "push_type"
            case priority, expiration
            case collapseID = "collapse_id"
            case tokenAuth = "token_auth"
            case streamTimeoutSeconds = "stream_timeout_seconds"
            case maxAttempts = "max_attempts"
            case model, schedule
            case durationSeconds = "duration_seconds"
            case warmUpSeconds = "warm_up_seconds"
            case maxLagSeconds = "max_lag_seconds"
            case maxHarnessShare = "max_harness_share"
            case scenario
        }

        /// Each setting by its key, as text (`nil` for none), in key order: what report.html
        /// tabulates and what `fanout merge` compares shard by shard.
        public var rows: [(key: String, value: String?)] {
            func text<T>(_ value: T?) -> String? { value.map { "\($0)" } }
            let rows: [(CodingKeys, String?)] = [
                (.collapseID, text(collapseID)), (.connections, text(connections)),
                (.durationSeconds, text(durationSeconds)), (.endpoint, endpoint), (.expiration, text(expiration)),
                (.maxAttempts, text(maxAttempts)), (.maxHarnessShare, text(maxHarnessShare)),
                (.maxLagSeconds, text(maxLagSeconds)), (.model, model), (.priority, text(priority)),
                (.pushType, pushType), (.schedule, text(schedule)), (.streamTimeoutSeconds, text(streamTimeoutSeconds)),
                (.streamsPerConnection, text(streamsPerConnection)), (.tokenAuth, text(tokenAuth)), (.tokens, tokens),
                (.topic, topic), (.warmUpSeconds, text(warmUpSeconds)), (.scenario, scenario?.description),
            ]
            return rows.filter { $0.0 != .maxHarnessShare || maxHarnessShare != nil }.map { ($0.0.rawValue, $0.1) }
        }
    }

    /// Latency percentiles, milliseconds.
    public struct Latency: Codable, Sendable, Equatable {
        public var p50: Double
        public var p90: Double
        public var p99: Double
        public var p99_9: Double
        public var p99_99: Double
        public var max: Double

        /// Each of `RunSummary.percentiles` read from `milliseconds(at:)`.
        public init(milliseconds: (Double) -> Double) {
            p50 = milliseconds(50)
            p90 = milliseconds(90)
            p99 = milliseconds(99)
            p99_9 = milliseconds(99.9)
            p99_99 = milliseconds(99.99)
            max = milliseconds(100)
        }

        /// The percentiles reported everywhere, with their labels.
        public static let percentiles:
            [(label: String, percentile: Double, value: KeyPath<Latency, Double> & Sendable)] = [
                ("p50", 50, \.p50), ("p90", 90, \.p90), ("p99", 99, \.p99), ("p99.9", 99.9, \.p99_9),
                ("p99.99", 99.99, \.p99_99), ("max", 100, \.max),
            ]
    }

    /// CPU time measured per event-loop thread: seconds over the run, µs per notification sent.
    public struct CPU: Codable, Sendable, Equatable {
        @Nullable public var senderSeconds: Double?
        @Nullable public var senderPerNotification: Double?
        @Nullable public var sinkSeconds: Double?
        @Nullable public var sinkPerNotification: Double?

        enum CodingKeys: String, CodingKey {
            case senderSeconds = "sender_seconds"
            case senderPerNotification = "sender_us_per_notification"
            case sinkSeconds = "sink_seconds"
            case sinkPerNotification = "sink_us_per_notification"
        }

        public init(
            senderSeconds: Double?,
            senderPerNotification: Double?,
            sinkSeconds: Double?,
            sinkPerNotification: Double?
        ) {
            self.senderSeconds = senderSeconds
            self.senderPerNotification = senderPerNotification
            self.sinkSeconds = sinkSeconds
            self.sinkPerNotification = sinkPerNotification
        }

        /// From seconds over the run and the notifications sent.
        public init(sender: Double?, sink: Double?, sent: Int) {
            func perNotification(_ seconds: Double?) -> Double? {
                seconds.flatMap { sent > 0 ? $0 * 1e6 / Double(sent) : nil }
            }
            self.init(
                senderSeconds: sender,
                senderPerNotification: perNotification(sender),
                sinkSeconds: sink,
                sinkPerNotification: perNotification(sink)
            )
        }
    }

    /// How much of the measured latency Fanout itself accounts for (`HarnessAccount`).
    public struct Harness: Codable, Sendable, Equatable {
        public struct Sender: Codable, Sendable, Equatable {
            /// The open model's generator lag; `null` in the closed model.
            @Nullable public var sendLateness: DelayFigures?
            public var loopLag: DelayFigures
            public var readDelay: DelayFigures
            /// Timed answers only; `null` without them.
            @Nullable public var returnPath: DelayFigures?
            @Nullable public var perAnswer: DelayFigures?
            public var loopUtilisation: [Double]

            enum CodingKeys: String, CodingKey {
                case sendLateness = "send_lateness_ms"
                case loopLag = "loop_lag_ms"
                case readDelay = "read_delay_ms"
                case returnPath = "return_path_ms"
                case perAnswer = "per_answer_ms"
                case loopUtilisation = "loop_utilisation"
            }
        }

        public var sender: Sender
        /// The embedded sink's; `null` for an endpoint elsewhere.
        @Nullable public var sink: SinkOwnDelays.Figures?
        public var ownP99: Double
        /// Timed answers' latency less the sink's hold; `null` without them, and in a merge.
        @Nullable public var own: DelayFigures?
        public var ownMeasured: Bool
        public var largest: String
        public var measuredP99: Double
        public var shareOfP99: Double
        public var maxShare: Double
        public var bound: Bool
        public var guidance: [String]

        enum CodingKeys: String, CodingKey {
            case sender, sink
            case ownP99 = "own_p99_ms"
            case own = "own_ms"
            case ownMeasured = "own_measured"
            case largest
            case measuredP99 = "measured_p99_ms"
            case shareOfP99 = "share_of_p99"
            case maxShare = "max_share"
            case bound, guidance
        }
    }

    /// When sending began, RFC 3339 to the millisecond, and where.
    public struct Start: Codable, Sendable, Equatable {
        /// `--start-at`'s time.
        @Nullable public var scheduled: String?
        /// The first request's; `null` when none went out.
        @Nullable public var firstSend: String?
        public var host: String

        enum CodingKeys: String, CodingKey {
            case scheduled
            case firstSend = "first_send"
            case host
        }
    }

    public struct Schedule: Codable, Sendable, Equatable {
        public struct Stage: Codable, Sendable, Equatable {
            public var durationSeconds: Double
            public var targetPerSecond: Double

            enum CodingKeys: String, CodingKey {
                case durationSeconds = "duration_seconds"
                case targetPerSecond = "target_per_second"
            }
        }

        public var description: String
        public var startRatePerSecond: Double
        public var stages: [Stage]
        /// Arrivals the schedule plans; `null` for an endless one.
        @Nullable public var planned: Int?
        /// Why the rate was not the user's own (Apple's hosts' cap); absent when it was.
        public var capped: String? = nil

        enum CodingKeys: String, CodingKey {
            case description
            case startRatePerSecond = "start_rate_per_second"
            case stages, planned, capped
        }
    }

    /// The open model's generator lag, milliseconds: p99, the largest, and the limit.
    public struct GeneratorLag: Codable, Sendable, Equatable {
        public var p99: Double
        public var max: Double
        public var limit: Double
    }

    public struct UnscheduledReasons: Codable, Sendable, Equatable {
        /// Tokens read past the schedule's end (or the closed model's duration).
        public var scheduleOver: Int
        /// The open model's arrivals due after the last token.
        public var tokensRanOut: Int

        public init(scheduleOver: Int, tokensRanOut: Int) {
            self.scheduleOver = scheduleOver
            self.tokensRanOut = tokensRanOut
        }

        enum CodingKeys: String, CodingKey {
            case scheduleOver = "schedule_over"
            case tokensRanOut = "tokens_ran_out"
        }
    }

    /// One second of the run.
    public struct Interval: Codable, Sendable, Equatable {
        public var second: Int
        public var completed: Int
        public var latencyCount: Int
        public var p50: Double
        public var p90: Double
        public var p99: Double
        public var max: Double
        public var maxLag: Double
        /// Schema 5; not kept by a merge.
        public var maxLoopLag: Double?
        public var readDelayP99: Double?
        /// Schema 8: notifications due in it that waited for a stream (the open model).
        public var streamWaits: Int? = nil

        enum CodingKeys: String, CodingKey {
            case second, completed
            case latencyCount = "latency_count"
            case p50 = "p50_ms"
            case p90 = "p90_ms"
            case p99 = "p99_ms"
            case max = "max_ms"
            case maxLag = "max_lag_ms"
            case maxLoopLag = "max_loop_lag_ms"
            case readDelayP99 = "read_delay_p99_ms"
            case streamWaits = "stream_waits"
        }
    }

    public struct Tokens: Codable, Sendable, Equatable {
        public var read: Int
        public var lines: Int
        public var turnedDown: Int

        enum CodingKeys: String, CodingKey {
            case read, lines
            case turnedDown = "turned_down"
        }
    }

    /// What the sink counted (`fanout run`, or `--reconcile`).
    public struct Sink: Codable, Sendable, Equatable {
        public var requests: Int
        public var accepted: Int
        public var rejected: [String: Int]
        public var digest: String
        public var differences: [String]
    }
}

extension SummaryDocument {
    /// The document as the file holds it.
    public func data() throws -> Data { try JSONDocument.data(self) }

    /// Reads `path`: a summary this Fanout writes or reads, or an error that says which file and
    /// what is wrong (an older or newer schema by its number, a missing or mistyped key by its
    /// path in the document).
    public static func read(_ path: String) throws(ResultsError) -> SummaryDocument {
        let data: Data
        do { data = try Data(contentsOf: URL(fileURLWithPath: path)) } catch {
            throw ResultsError("cannot read \(path): \(error.reason)")
        }
        struct Version: Decodable {
            var schemaVersion: Int?
            enum CodingKeys: String, CodingKey { case schemaVersion = "schema_version" }
        }
        let decoder = JSONDecoder()
        let version: Int
        do {
            guard let found = try decoder.decode(Version.self, from: data).schemaVersion else {
                throw ResultsError("\(path): schema_version is missing: not a Fanout summary")
            }
            version = found
        } catch let error as ResultsError {
            throw error
        } catch {
            throw ResultsError("\(path): not a JSON object (\(DocumentError.describe(error)))")
        }
        let readable = RunSummary.readableSchemaVersions
        guard version >= readable.lowerBound else {
            throw ResultsError(
                "\(path): written by an older fanout (schema \(version)); this one reads schemas \(readable.lowerBound) to \(readable.upperBound)"
            )
        }
        guard version <= readable.upperBound else {
            throw ResultsError(
                "\(path): written by a newer fanout (schema \(version)); this one reads schemas \(readable.lowerBound) to \(readable.upperBound)"
            )
        }
        do { return try decoder.decode(SummaryDocument.self, from: data) } catch {
            throw ResultsError("\(path): \(DocumentError.describe(error))")
        }
    }
}

/// How Fanout writes its JSON files: pretty, keys sorted, a newline at the end.
public enum JSONDocument {
    public static func data(_ document: some Encodable) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        return try encoder.encode(document) + Data("\n".utf8)
    }
}

/// A decoding error said the way a person fixes the file: where in the document, and what.
enum DocumentError {
    static func describe(_ error: any Error) -> String {
        func path(_ codingPath: [any CodingKey]) -> String {
            codingPath.isEmpty
                ? "the document"
                : codingPath.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".")
                    .replacingOccurrences(of: ".[", with: "[")
        }
        guard let error = error as? DecodingError else { return "\(error)" }
        switch error {
        case .keyNotFound(let key, let context): return "\(path(context.codingPath + [key])) is missing"
        case .valueNotFound(_, let context): return "\(path(context.codingPath)) is null"
        case .typeMismatch(let type, let context): return "\(path(context.codingPath)) is not \(Self.kind(type))"
        case .dataCorrupted(let context):
            return context.codingPath.isEmpty ? "not JSON" : "\(path(context.codingPath)): \(context.debugDescription)"
        @unknown default: return "\(error)"
        }
    }

    private static func kind(_ type: Any.Type) -> String {
        switch type {
        case is Int.Type: "a whole number"
        case is Double.Type: "a number"
        case is String.Type: "a string"
        case is Bool.Type: "true or false"
        default: "what it should be (\(type))"
        }
    }
}
