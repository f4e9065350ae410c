import FanoutAPNs
import FanoutMeasure
import FanoutPush
import Foundation

/// `summary.json`: one definition for what `fanout run`, `send` and `merge` write and what
/// `compare`, `gate`, `export`, `merge`, `plan --cost`, summary.md and report.html read.
/// docs/summary.schema.json describes the same document; a test checks what is written
/// against it.
///
/// A field newer than schema 2 is optional here, so a folder written by an older Fanout (down
/// to `SummaryDocument.readableSchemaVersions`) still reads; `read(_:)` refuses the rest by their
/// version. Times are seconds unless a key ends in `_ms`.
public struct SummaryDocument: Codable, Sendable, Equatable {
    /// The version of `summary.json`'s layout (`docs/summary.schema.json`); it changes when a
    /// field changes meaning or goes away. 2: `configuration`, `environment`, the load model,
    /// validity and intervals.
    public static let schemaVersion = 8
    /// The versions this Fanout reads: 3 added `cpu` to what 2 had, 4 `start` and `shard`,
    /// 5 `harness` and the intervals' `max_loop_lag_ms` and `read_delay_p99_ms`, 6 `kind` and
    /// `provider` (the sink's folder), 7 `null` latency and throughput when nothing was
    /// measured and `configuration.scenario`, 8 the intervals' `rejected` and `failed` by reason,
    /// `connections`, `in_flight` and `cpu_ms`.
    public static let readableSchemaVersions: ClosedRange<Int> = 2...8

    public var schemaVersion: Int
    public var configuration: Configuration
    public var environment: RunEnvironment
    /// When the run started (before it connected); written RFC 3339 to the millisecond.
    @RFC3339Time public var started: Date
    public var endpoint: String
    public var connections: Int
    public var streamsPerConnection: Int
    public var elapsedSeconds: Double
    public var sent: Int
    public var accepted: Int
    /// Counts by reason, written as objects keyed by each reason's raw value
    /// (`{"Unregistered": 12}`).
    public var rejected: [PushReason: Int]
    public var failed: [FailureCause: Int]
    public var skipped: [SkipCause: Int]
    public var requests: Int
    public var retries: Int
    /// Requests the server never processed (above a GOAWAY's last stream, or refused with
    /// REFUSED_STREAM) and that were sent again without a try used; `requests` counts each
    /// sending (an added, optional field; absent when none were, and in older folders).
    public var resent: Int? = nil
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
    public var model: LoadModel
    /// The open model's schedule; absent in the closed model.
    public var schedule: Schedule?
    public var generatorLag: GeneratorLag?
    public var warmUpSeconds: Double
    /// The sum of `unscheduledReasons`.
    public var unscheduled: Int
    /// Absent before the reasons were kept: then all of `unscheduled` was `scheduleOver`.
    public var unscheduledReasons: UnscheduledReasons?
    public var valid: Bool
    /// Why the run cannot be trusted, in words for people (`invalid_reasons`); Fanout's own
    /// readers judge `invalidity`, never these.
    public var invalidReasonWords: [String]
    /// The same reasons as cases, for Fanout's readers to judge (`invalid_causes`, an added,
    /// optional field); absent for a valid run and in folders written before it was kept.
    public var invalidCauses: [InvalidReason]? = nil

    /// Why the run cannot be trusted, as every reader takes it: `valid` is authoritative, so a
    /// summary saying `false` without a reason is invalid still, and a reason makes it invalid
    /// whatever `valid` says. The cases where the folder keeps them, else its words read back
    /// (`InvalidReason.init(legacy:)`). Empty for a valid run.
    public var invalidity: [InvalidReason] {
        let reasons = invalidCauses ?? invalidReasonWords.map(InvalidReason.init(legacy:))
        if !valid && reasons.isEmpty { return [.validWithoutReason] }
        return reasons
    }

    /// Notifications the server answered (accepted, rejected, or answered without an APNs
    /// reason): with none, no rate, CPU per notification or percentile stands for anything, and
    /// readers say "no answers".
    public var answered: Int { answeredCount(accepted: accepted, rejected: rejected, failed: failed) }
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
    public var kind: Kind?
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
    /// A broadcast run's channels and broadcasts, or what a sink's broadcasts reached (an
    /// added, optional field); absent without broadcasts and in older folders.
    public var broadcast: BroadcastSummary? = nil
    /// With the device fleet's engagement on (`--return-to`): what the return wave did at the
    /// provider's backend (issue #63; an added, optional field).
    public var returnWave: ReturnWaveSummary? = nil
    /// A scaled rehearsal's terms (`fanout run --sample`; an added, optional field): its rates
    /// are the campaign's, its counts and durations the sample's. Absent for a run at full scale.
    public var sample: SampleSummary? = nil
    /// `--abort-on` stopped the run (an added, optional field): which condition, over which
    /// window, when; absent otherwise and in older folders.
    public var aborted: Aborted? = nil
    /// A run of 10 s or less: what finished in each 100 ms (an added, optional field); absent
    /// for longer runs and in older folders.
    public var fineIntervals: FineIntervals? = nil
    /// The command line that ran it (`Invocation.command`; an added, optional field): absent
    /// when the library ran it, in a merge, and in older folders.
    public var command: String? = nil

    /// Every field written; `SummaryMerge` switches over them all, so a new one says how shards
    /// merge it before it compiles.
    public enum CodingKeys: String, CodingKey, CaseIterable {
        case schemaVersion = "schema_version"
        case configuration, environment, started, endpoint, connections
        case streamsPerConnection = "streams_per_connection"
        case elapsedSeconds = "elapsed_seconds"
        case sent, accepted, rejected, failed, skipped, requests, retries, resent
        case throughputPerSecond = "throughput_per_second"
        case latency = "latency_ms"
        case digest, cancelled, reconciled, cpu, harness, start, shard, model, schedule
        case generatorLag = "generator_lag_ms"
        case warmUpSeconds = "warm_up_seconds"
        case unscheduled
        case unscheduledReasons = "unscheduled_reasons"
        case valid
        case invalidReasonWords = "invalid_reasons"
        case invalidCauses = "invalid_causes"
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
        case broadcast
        case returnWave = "return_wave"
        case sample
        case aborted
        case fineIntervals = "fine_intervals"
        case command
    }

    /// `fanout sink --output`'s folder.
    public var isSink: Bool { kind == .sink }

    /// What wrote the folder, when not a run (schema 6).
    public enum Kind: String, Codable, Sendable, Hashable {
        /// `fanout sink --output`: the sink measured the provider under test.
        case sink
    }

    /// How the load was offered: the closed model (`--connections × --streams` kept full), the
    /// open model (arrivals on a schedule), or, in a sink's folder, the provider's own.
    public enum LoadModel: String, Codable, Sendable, Hashable, CustomStringConvertible {
        case closed, open, sink

        public var description: String { rawValue }
    }

    public init(
        schemaVersion: Int,
        configuration: Configuration,
        environment: RunEnvironment,
        started: Date,
        endpoint: String,
        connections: Int,
        streamsPerConnection: Int,
        elapsedSeconds: Double,
        sent: Int,
        accepted: Int,
        rejected: [PushReason: Int],
        failed: [FailureCause: Int],
        skipped: [SkipCause: Int],
        requests: Int,
        retries: Int,
        throughputPerSecond: Double? = nil,
        latency: Latency? = nil,
        digest: String,
        cancelled: Bool,
        reconciled: Bool? = nil,
        cpu: CPU? = nil,
        harness: Harness? = nil,
        start: Start? = nil,
        shard: String? = nil,
        model: LoadModel,
        schedule: Schedule? = nil,
        generatorLag: GeneratorLag? = nil,
        warmUpSeconds: Double,
        unscheduled: Int,
        unscheduledReasons: UnscheduledReasons? = nil,
        valid: Bool,
        invalidReasons: [InvalidReason],
        intervals: [Interval],
        tokens: Tokens? = nil,
        abandoned: String? = nil,
        sink: Sink? = nil,
        mergedFrom: [String]? = nil,
        partial: Bool? = nil,
        partialReasons: [String]? = nil,
        startSkew: Double? = nil,
        shardEnvironments: [RunEnvironment]? = nil,
        kind: Kind? = nil,
        provider: Provider? = nil,
        unsent: Int? = nil,
        openModel: OpenModel? = nil,
        delivery: DeliverySummary? = nil,
        broadcast: BroadcastSummary? = nil,
        aborted: Aborted? = nil,
        fineIntervals: FineIntervals? = nil,
        resent: Int? = nil
    ) {
        self.schemaVersion = schemaVersion
        self.configuration = configuration
        self.environment = environment
        self.started = started
        self.endpoint = endpoint
        self.connections = connections
        self.streamsPerConnection = streamsPerConnection
        self.elapsedSeconds = elapsedSeconds
        self.sent = sent
        self.accepted = accepted
        self.rejected = rejected
        self.failed = failed
        self.skipped = skipped
        self.requests = requests
        self.retries = retries
        self.throughputPerSecond = throughputPerSecond
        self.latency = latency
        self.digest = digest
        self.cancelled = cancelled
        self.reconciled = reconciled
        self.cpu = cpu
        self.harness = harness
        self.start = start
        self.shard = shard
        self.model = model
        self.schedule = schedule
        self.generatorLag = generatorLag
        self.warmUpSeconds = warmUpSeconds
        self.unscheduled = unscheduled
        self.unscheduledReasons = unscheduledReasons
        self.valid = valid
        self.invalidReasonWords = invalidReasons.map(\.description)
        self.invalidCauses = invalidReasons.isEmpty ? nil : invalidReasons
        self.intervals = intervals
        self.tokens = tokens
        self.abandoned = abandoned
        self.sink = sink
        self.mergedFrom = mergedFrom
        self.partial = partial
        self.partialReasons = partialReasons
        self.startSkew = startSkew
        self.shardEnvironments = shardEnvironments
        self.kind = kind
        self.provider = provider
        self.unsent = unsent
        self.openModel = openModel
        self.delivery = delivery
        self.broadcast = broadcast
        self.aborted = aborted
        self.fineIntervals = fineIntervals
        self.resent = resent
    }
}

extension Dictionary where Key: RawRepresentable, Key.RawValue == String, Value == Int {
    /// The counts by their reasons' names, in the names' order: how every reader lists them.
    public var byName: [(name: String, count: Int)] {
        map { (name: $0.key.rawValue, count: $0.value) }.sorted { $0.name < $1.name }
    }
}
