import FanoutMeasure
import FanoutNotation
import Histogram

/// One second of the wave at the backend (from the fan-out's start): requests offered (due in
/// it), answered and failed in it, and the latencies of those answered in it, microseconds from
/// their due time (so a request that waited for a connection, or for the backend, counts the wait).
public struct ReturnSecond: Sendable, Codable, Equatable {
    public var second: Int
    public var offered = 0
    public var answered = 0
    /// Answers of status 400 and above, and requests without one (`ReturnFailure`).
    public var errors = 0
    /// Of `errors`, the requests without an answer.
    public var failed = 0
    public var p50Micros: UInt64 = 0
    public var p90Micros: UInt64 = 0
    public var p99Micros: UInt64 = 0
    public var maxMicros: UInt64 = 0

    public init(second: Int) { self.second = second }

    enum CodingKeys: String, CodingKey {
        case second, offered, answered, errors, failed
        case p50Micros = "p50_us"
        case p90Micros = "p90_us"
        case p99Micros = "p99_us"
        case maxMicros = "max_us"
    }
}

/// A latency's distribution in brief, microseconds (`DelayPercentiles`, written to JSON).
public struct ReturnPercentiles: Sendable, Codable, Equatable {
    public var count: UInt64 = 0
    public var p50Micros: UInt64 = 0
    public var p90Micros: UInt64 = 0
    public var p99Micros: UInt64 = 0
    public var maxMicros: UInt64 = 0

    public init() {}

    public init(_ histogram: Histogram<UInt64>) {
        guard histogram.totalCount > 0 else { return }
        count = histogram.totalCount
        p50Micros = histogram.valueAtPercentile(50)
        p90Micros = histogram.valueAtPercentile(90)
        p99Micros = histogram.valueAtPercentile(99)
        maxMicros = histogram.max
    }

    /// "p50 0.02 ms, p99 0.31 ms, max 1.20 ms", or "none".
    public var text: String {
        DelayPercentiles(count: count, p50: p50Micros, p99: p99Micros, max: maxMicros).text
    }

    enum CodingKeys: String, CodingKey {
        case count
        case p50Micros = "p50_us"
        case p90Micros = "p90_us"
        case p99Micros = "p99_us"
        case maxMicros = "max_us"
    }
}

/// Where the backend stopped keeping up, and what it kept up with there.
///
/// ```
///   requests/s                                    saturated: from the first second (past the
///     │        offered ╱╲                          wave's first answers) whose p99 passes 4 × the
///     │              ╱    ╲                        early p99 (and 20 ms), or whose errors pass 1%,
///     │ answered ──┼──────────┐                    while the seconds after it still do
///     │          ╱ │ saturated│╲                   capacity: the median answered a second over
///     │        ╱   │          │  ╲                 them — a backend behind its queue answers at
///     └───────┴────┴──────────┴──────── s          its capacity, whatever is offered
///           knee   latency rose                     knee: the first second whose offered reached
///                                                   95% of that capacity
/// ```
/// The latency rises a few seconds after the offered rate passes the capacity (the queue takes
/// that long to grow past the early latency's bound), so the knee is found from the capacity,
/// not from the rise. `nil` in `ReturnWaveSummary` when no second crossed.
public struct ReturnKnee: Sendable, Codable, Equatable {
    /// The first second whose offered reached 95% of the capacity.
    public var second: Int
    /// Requests offered in the knee's second.
    public var offeredPerSecond: Double
    /// The first second whose latency or errors crossed: the saturated seconds begin here.
    public var roseAt: Int
    /// The median of the answers a second while saturated: the backend's capacity, measured.
    public var capacityPerSecond: Double
    /// The saturated seconds it is the median of.
    public var saturatedSeconds: Int
    public var p99Micros: UInt64
    public var errorShare: Double
    /// What crossed: `latency` or `errors`.
    public var cause: String

    static let latencyFactor: UInt64 = 4
    static let floorMicros: UInt64 = 20_000
    static let errorShare = 0.01

    public init(
        second: Int,
        offeredPerSecond: Double,
        roseAt: Int,
        capacityPerSecond: Double,
        saturatedSeconds: Int,
        p99Micros: UInt64,
        errorShare: Double,
        cause: String
    ) {
        self.second = second
        self.offeredPerSecond = offeredPerSecond
        self.roseAt = roseAt
        self.capacityPerSecond = capacityPerSecond
        self.saturatedSeconds = saturatedSeconds
        self.p99Micros = p99Micros
        self.errorShare = errorShare
        self.cause = cause
    }

    enum CodingKeys: String, CodingKey {
        case second, cause
        case offeredPerSecond = "offered_per_second"
        case roseAt = "rose_at"
        case capacityPerSecond = "capacity_per_second"
        case saturatedSeconds = "saturated_seconds"
        case p99Micros = "p99_us"
        case errorShare = "error_share"
    }
}

/// What the return wave did (issue #63, docs/return-wave.md): `summary.json`'s `return_wave`,
/// summary.md's lines, and report.html's curve beside the delivery's. Absent without a wave
/// and in older folders: an added, optional field.
public struct ReturnWaveSummary: Sendable, Codable, Equatable {
    public var backend: String
    public var poolSize: Int
    /// How the wave spoke to the backend: `1.1`, or `2` with its streams a connection at most
    /// (`nil` in folders from before HTTP/2).
    public var http: String?
    public var streamsPerConnection: Int?
    public var offered = 0
    public var answered = 0
    /// Requests by kind: offered, answered, errors.
    public var byKind: [String: KindCounts] = [:]
    /// Answers by status code.
    public var byStatus: [String: Int] = [:]
    /// Requests without an answer, by why (`ReturnFailure`).
    public var failures: [String: Int] = [:]
    /// Media downloads slower than the service extension's budget: shown without their media.
    public var fallbackContent = 0
    /// Events due after the run ended (not sent).
    public var notSent = 0
    public var latency = ReturnPercentiles()
    /// From the request's write to its answer: the backend and the network alone.
    public var service = ReturnPercentiles()
    public var seconds: [ReturnSecond] = []
    public var knee: ReturnKnee?
    /// What the devices did (the fleet's counts), whatever reached the backend.
    public var devices = Devices()

    /// The fleet's engagement counts: opens by action, media downloads, what was not carried.
    public struct Devices: Sendable, Codable, Equatable {
        public var opens = 0
        public var defaultOpens = 0
        /// Opens by each named action, and those that drew an action their payload did not
        /// carry (taken as the default action).
        public var actions: [String: Int] = [:]
        public var notCarried: [String: Int] = [:]
        public var mediaDownloads = 0
        /// Deliveries from storage (devices that came back): their events fall due from the
        /// delivery, as a device's at once does.
        public var fromStorage = 0
        /// Events sent with their token cut: longer than the wave keeps (64 bytes for APNs, 200
        /// for FCM) (`nil`: none, and in older folders).
        public var tokensCut: Int?
        /// Actions run in the background (the category file's): a request each, no open
        /// (`nil` in folders from before category files).
        public var backgroundActions: Int?

        public init() {}

        enum CodingKeys: String, CodingKey {
            case opens, actions
            case defaultOpens = "default_opens"
            case notCarried = "not_carried"
            case mediaDownloads = "media_downloads"
            case fromStorage = "from_storage"
            case backgroundActions = "background_actions"
            case tokensCut = "tokens_cut"
        }
    }

    public struct KindCounts: Sendable, Codable, Equatable {
        public var offered = 0
        public var answered = 0
        public var errors = 0

        public init() {}
    }

    /// The kinds of request, in the order the lines tell them (FanoutReturn's `ReturnRequestKind`).
    public static let kinds = ["media", "open", "action", "launch"]

    public init(backend: String, poolSize: Int) {
        self.backend = backend
        self.poolSize = poolSize
    }

    enum CodingKeys: String, CodingKey {
        case backend, offered, answered, failures, latency, service, seconds, knee, devices
        case poolSize = "pool_size"
        case http
        case streamsPerConnection = "streams_per_connection"
        case byKind = "by_kind"
        case byStatus = "by_status"
        case fallbackContent = "fallback_content"
        case notSent = "not_sent"
    }

    /// Errors of every kind: 4xx/5xx answers and requests without one.
    public var errors: Int { byKind.values.reduce(0) { $0 + $1.errors } }

    /// The busiest second offered and its count.
    public var peak: ReturnSecond? { seconds.max { $0.offered < $1.offered } }

    /// Finds the knee in `seconds` (`ReturnKnee`): the early p99 is the lowest p99 of the first
    /// five seconds that answered anything. The saturated seconds run from the knee while a
    /// second still crosses; the last second of the wave (partly empty) is left out of the
    /// capacity's median unless it is the only one.
    public mutating func findKnee() {
        knee = nil
        let answered = seconds.filter { $0.answered > 0 }
        guard let early = answered.prefix(5).map(\.p99Micros).min() else { return }
        let bound = max(early * ReturnKnee.latencyFactor, ReturnKnee.floorMicros)
        func crossing(_ second: ReturnSecond) -> (cause: String, errorShare: Double)? {
            // Every request that ended in the second once: answered (any status) or failed.
            let total = second.answered + second.failed
            let errorShare = total > 0 ? Double(second.errors) / Double(total) : 0
            if second.answered > 0 && second.p99Micros > bound { return ("latency", errorShare) }
            if errorShare > ReturnKnee.errorShare { return ("errors", errorShare) }
            return nil
        }
        // Past the wave's first second, whose latencies are the early ones.
        let first = seconds.firstIndex { $0.answered + $0.failed > 0 } ?? 0
        guard let start = seconds[(first + 1)...].firstIndex(where: { crossing($0) != nil }),
            let (cause, errorShare) = crossing(seconds[start])
        else { return }
        var end = start
        while end + 1 < seconds.count, crossing(seconds[end + 1]) != nil { end += 1 }
        // What the backend answered well (below 400) a second: its capacity, not its refusals.
        var saturated = seconds[start...end].map { $0.answered - ($0.errors - $0.failed) }
        if saturated.count > 1 && end == seconds.count - 1 { saturated.removeLast() }
        saturated.sort()
        let middle = saturated.count / 2
        let median =
            saturated.count % 2 == 1
            ? Double(saturated[middle]) : Double(saturated[middle - 1] + saturated[middle]) / 2
        let reached = seconds[...start].firstIndex { Double($0.offered) >= 0.95 * median } ?? start
        knee = ReturnKnee(
            second: seconds[reached].second,
            offeredPerSecond: Double(seconds[reached].offered),
            roseAt: seconds[start].second,
            capacityPerSecond: median,
            saturatedSeconds: saturated.count,
            p99Micros: seconds[start].p99Micros,
            errorShare: errorShare,
            cause: cause
        )
    }

    /// summary.md's section: the requests by kind, then the lines.
    public var markdown: [String] {
        var lines = [
            "", "### The return wave", "", "| request | offered | answered | errors |", "|---|---:|---:|---:|",
        ]
        for kind in Self.kinds {
            guard let counts = byKind[kind], counts.offered > 0 else { continue }
            let cells = [counts.offered, counts.answered, counts.errors].map(\.grouped)
            lines.append("| \(kind) | " + cells.joined(separator: " | ") + " |")
        }
        lines.append("")
        lines += self.lines.map { "- " + $0.trimmingCharacters(in: .whitespaces) }
        return lines
    }

    /// The summary's lines.
    public var lines: [String] {
        var lines = [
            "return wave to \(backend): \(offered.grouped) requests offered, \(answered.grouped) answered, \(errors.grouped) errors (\(connectionsText))"
        ]
        let actions = devices.actions.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value.grouped)" }
        // Actions by name count foreground and background ones alike.
        let background =
            devices.backgroundActions.map { $0 > 0 ? " and \($0.grouped) actions in the background" : "" } ?? ""
        lines.append(
            "  devices: \(devices.opens.grouped) opened\(background) (\((actions + ["default \(devices.defaultOpens.grouped)"]).joined(separator: ", "))), \(devices.mediaDownloads.grouped) media downloads"
        )
        let notCarried = devices.notCarried.filter { $0.value > 0 }.sorted { $0.key < $1.key }
        if !notCarried.isEmpty {
            lines.append(
                "  NOT carried by their notification, taken as the default action: "
                    + notCarried.map { "\($0.key) \($0.value.grouped)" }.joined(separator: ", ")
            )
        }
        if devices.fromStorage > 0 {
            lines.append(
                "  \(devices.fromStorage.grouped) deliveries from storage: their devices engaged from the delivery"
            )
        }
        if let cut = devices.tokensCut, cut > 0 {
            lines.append(
                "  \(cut.grouped) events were sent with their token cut (the wave keeps 64 bytes for APNs, 200 for FCM)"
            )
        }
        if let peak { lines.append("  peak \(peak.offered.grouped) requests/s offered in second \(peak.second)") }
        lines.append("  latency from due \(latency.text); service \(service.text)")
        let kinds = Self.kinds.compactMap { kind -> String? in
            guard let counts = byKind[kind], counts.offered > 0 else { return nil }
            return "\(kind) \(counts.offered.grouped)"
        }
        if !kinds.isEmpty { lines.append("  by kind: " + kinds.joined(separator: ", ")) }
        let failed = failures.filter { $0.value > 0 }.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value.grouped)" }
        if !failed.isEmpty { lines.append("  without an answer: " + failed.joined(separator: ", ")) }
        if fallbackContent > 0 {
            lines.append(
                "  \(fallbackContent.grouped) media downloads past the extension's budget: shown without media"
            )
        }
        if notSent > 0 { lines.append("  \(notSent.grouped) events due after the run ended: not sent") }
        if let knee {
            lines.append(
                "  knee at second \(knee.second): \(Int(knee.offeredPerSecond.rounded()).grouped) requests/s offered, the backend answering \(Int(knee.capacityPerSecond.rounded()).grouped)/s at most (the median of \(knee.saturatedSeconds) saturated seconds); its \(knee.cause == "latency" ? "p99 rose to \(Double(knee.p99Micros) / 1000) ms" : "errors rose to \(ShareNotation.percent(knee.errorShare))") in second \(knee.roseAt)"
            )
        }
        return lines
    }
}

extension ReturnWaveSummary {
    /// "HTTP/2, pool of 4 × 100 streams", "pool of 64" (HTTP/1.1).
    var connectionsText: String {
        guard http == "2" else { return "pool of \(poolSize)" }
        return "HTTP/2, pool of \(poolSize)" + (streamsPerConnection.map { " × \($0) streams" } ?? "")
    }

    /// The shards' waves as one (`fanout merge`): counts summed, second by second (each shard's
    /// seconds count from its own fan-out's start, which a merge's shards share to within their
    /// start skew); a latency the highest of the shards' (their histograms are not kept: an
    /// upper bound, said in docs/return-wave.md); the knee found again. `nil` when no shard had one.
    public static func merged(_ waves: [ReturnWaveSummary?]) -> ReturnWaveSummary? {
        let waves = waves.compactMap { $0 }
        guard var merged = waves.first else { return nil }
        for wave in waves.dropFirst() {
            merged.backend = merged.backend == wave.backend ? merged.backend : merged.backend + ", " + wave.backend
            merged.poolSize += wave.poolSize
            merged.offered += wave.offered
            merged.answered += wave.answered
            for (kind, counts) in wave.byKind {
                merged.byKind[kind, default: .init()].offered += counts.offered
                merged.byKind[kind, default: .init()].answered += counts.answered
                merged.byKind[kind, default: .init()].errors += counts.errors
            }
            merged.byStatus.merge(wave.byStatus, uniquingKeysWith: +)
            merged.failures.merge(wave.failures, uniquingKeysWith: +)
            merged.fallbackContent += wave.fallbackContent
            merged.devices.opens += wave.devices.opens
            merged.devices.defaultOpens += wave.devices.defaultOpens
            merged.devices.actions.merge(wave.devices.actions, uniquingKeysWith: +)
            merged.devices.notCarried.merge(wave.devices.notCarried, uniquingKeysWith: +)
            merged.devices.mediaDownloads += wave.devices.mediaDownloads
            merged.devices.fromStorage += wave.devices.fromStorage
            if let cut = wave.devices.tokensCut { merged.devices.tokensCut = (merged.devices.tokensCut ?? 0) + cut }
            if let background = wave.devices.backgroundActions {
                merged.devices.backgroundActions = (merged.devices.backgroundActions ?? 0) + background
            }
            merged.notSent += wave.notSent
            merged.latency = .highest(merged.latency, wave.latency)
            merged.service = .highest(merged.service, wave.service)
            for second in wave.seconds {
                while merged.seconds.count <= second.second {
                    merged.seconds.append(ReturnSecond(second: merged.seconds.count))
                }
                var row = merged.seconds[second.second]
                row.offered += second.offered
                row.answered += second.answered
                row.errors += second.errors
                row.failed += second.failed
                row.p50Micros = max(row.p50Micros, second.p50Micros)
                row.p90Micros = max(row.p90Micros, second.p90Micros)
                row.p99Micros = max(row.p99Micros, second.p99Micros)
                row.maxMicros = max(row.maxMicros, second.maxMicros)
                merged.seconds[second.second] = row
            }
        }
        merged.knee = nil
        merged.findKnee()
        return merged
    }
}

extension ReturnPercentiles {
    /// Each figure the higher of the two's, the counts summed.
    static func highest(_ left: Self, _ right: Self) -> Self {
        var result = left
        result.count += right.count
        result.p50Micros = max(left.p50Micros, right.p50Micros)
        result.p90Micros = max(left.p90Micros, right.p90Micros)
        result.p99Micros = max(left.p99Micros, right.p99Micros)
        result.maxMicros = max(left.maxMicros, right.maxMicros)
        return result
    }
}
