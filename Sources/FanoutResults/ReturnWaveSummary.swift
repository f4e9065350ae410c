import FanoutMeasure
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
    public var p50Micros: UInt64 = 0
    public var p90Micros: UInt64 = 0
    public var p99Micros: UInt64 = 0
    public var maxMicros: UInt64 = 0

    public init(second: Int) { self.second = second }

    enum CodingKeys: String, CodingKey {
        case second, offered, answered, errors
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

/// Where the backend stopped keeping up: the first second, past the wave's first ones, whose p99
/// latency is over `latencyFactor` times the wave's early p99 (and over `floorMicros`), or whose
/// errors pass `errorShare` of what it offered; the rate offered there. `nil` in `ReturnWaveSummary`
/// when no second did.
public struct ReturnKnee: Sendable, Codable, Equatable {
    public var second: Int
    /// Requests offered in the seconds up to the knee, a second (the mean of the last three).
    public var offeredPerSecond: Double
    public var p99Micros: UInt64
    public var errorShare: Double
    /// What crossed: `latency` or `errors`.
    public var cause: String

    static let latencyFactor: UInt64 = 4
    static let floorMicros: UInt64 = 20_000
    static let errorShare = 0.01

    enum CodingKeys: String, CodingKey {
        case second, cause
        case offeredPerSecond = "offered_per_second"
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
        case backend, offered, answered, failures, latency, service, seconds, knee
        case poolSize = "pool_size"
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
    /// five seconds that answered anything.
    public mutating func findKnee() {
        let answered = seconds.filter { $0.answered > 0 }
        guard let early = answered.prefix(5).map(\.p99Micros).min() else { return }
        let bound = max(early * ReturnKnee.latencyFactor, ReturnKnee.floorMicros)
        for (position, second) in seconds.enumerated() where second.offered + second.answered > 0 {
            let total = second.answered + second.errors
            let errorShare = total > 0 ? Double(second.errors) / Double(total) : 0
            let cause: String? =
                second.answered > 0 && second.p99Micros > bound
                ? "latency" : errorShare > ReturnKnee.errorShare ? "errors" : nil
            guard let cause else { continue }
            let window = seconds[max(0, position - 2)...position]
            knee = ReturnKnee(
                second: second.second,
                offeredPerSecond: Double(window.reduce(0) { $0 + $1.offered }) / Double(window.count),
                p99Micros: second.p99Micros,
                errorShare: errorShare,
                cause: cause
            )
            return
        }
    }

    /// summary.md's section: the requests by kind, then the lines.
    public var markdown: [String] {
        var lines = [
            "", "### The return wave", "", "| request | offered | answered | errors |", "|---|---:|---:|---:|",
        ]
        for kind in Self.kinds {
            guard let counts = byKind[kind], counts.offered > 0 else { continue }
            lines.append("| \(kind) | \(counts.offered) | \(counts.answered) | \(counts.errors) |")
        }
        lines.append("")
        lines += self.lines.map { "- " + $0.trimmingCharacters(in: .whitespaces) }
        return lines
    }

    /// The summary's lines.
    public var lines: [String] {
        var lines = [
            "return wave to \(backend): \(offered) requests offered, \(answered) answered, \(errors) errors (pool of \(poolSize))"
        ]
        if let peak { lines.append("  peak \(peak.offered) requests/s offered in second \(peak.second)") }
        lines.append("  latency from due \(latency.text); service \(service.text)")
        let kinds = Self.kinds.compactMap { kind -> String? in
            guard let counts = byKind[kind], counts.offered > 0 else { return nil }
            return "\(kind) \(counts.offered)"
        }
        if !kinds.isEmpty { lines.append("  by kind: " + kinds.joined(separator: ", ")) }
        let failed = failures.filter { $0.value > 0 }.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }
        if !failed.isEmpty { lines.append("  without an answer: " + failed.joined(separator: ", ")) }
        if fallbackContent > 0 {
            lines.append("  \(fallbackContent) media downloads past the extension's budget: shown without media")
        }
        if notSent > 0 { lines.append("  \(notSent) events due after the run ended: not sent") }
        if let knee {
            lines.append(
                "  knee at second \(knee.second): \(Int(knee.offeredPerSecond.rounded())) requests/s offered, p99 \(Double(knee.p99Micros) / 1000) ms (\(knee.cause))"
            )
        }
        return lines
    }
}

extension ReturnWaveSummary {
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
