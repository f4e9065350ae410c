import FanoutAPNs
import FanoutClient
import FanoutMeasure
import FanoutSettings
import FanoutTokens
import Foundation
import Histogram

/// `fanout merge`: the run folders of a sharded run (`--shard i/N` on several machines, at the
/// same time) as one run folder, and whether they make one honest result.
///
/// - Histograms add bucket by bucket (HdrHistogram's add: nothing is lost): second s of the
///   merged log is the sum of every shard's second s (each counted from its own start, which
///   `--start-at` makes one), and the run's histogram the sum of all of them.
/// - Counts sum (sent, accepted, rejected and failed by reason, requests, retries, the sink's);
///   digests combine, so the merged digest is the digest a single run over the same tokens
///   has; the merge is reconciled when every shard is.
/// - Throughput is the sum of the shards' (they ran at once).
///
/// The merge is refused — written, but invalid, with the reasons in `invalid_reasons` — when a
/// shard is missing (N is known from the shards' own `i/N`), did not finish (no `summary.json`,
/// or stopped early), is invalid, was configured unlike the others, or when the shards began
/// further apart than `maxSkew`. With `allowPartial`, missing and unfinished shards do not
/// refuse it: what is there is merged and marked partial.
public struct RunMerge {
    /// What the merge accepts.
    public struct Rules: Sendable {
        /// The most the shards' first sends may lie apart.
        public var maxSkew: Duration = .milliseconds(100)
        /// Merge what is there when shards are missing or did not finish, marked partial.
        public var allowPartial = false

        public init() {}
    }

    public struct Shard {
        public var directory: String
        var summary: [String: Any]
        var start: Double
        var entries: [IntervalLog.Entry]
        /// Which shard it says it is; `nil` for a run that was not sharded.
        var part: TokenShard?
        /// When it sent its first request.
        var firstSend: Date?
    }

    public let shards: [Shard]
    /// Each second's histogram, summed over the shards.
    public let entries: [IntervalLog.Entry]
    /// Every latency of every shard.
    public let latency: Histogram<UInt64>
    /// How far apart the shards' first sends lie, in seconds (`nil`: fewer than two sent).
    public let skew: Double?
    /// Why the shards do not make one run's result; empty when they do.
    public let refusals: [String]
    /// What is missing from a partial merge (`allowPartial`); empty when nothing is.
    public let gaps: [String]
    /// The merged `summary.json`.
    public let json: [String: Any]

    /// Reads the shards' `summary.json` and `latency.hlog`, and checks they make one run. A
    /// folder that does not exist, or files that cannot be read or disagree, throw; a folder
    /// without `summary.json` is a shard that did not finish.
    public init(directories: [String], rules: Rules = Rules()) throws(ResultsError) {
        guard !directories.isEmpty else { throw ResultsError("give the shards' run folders") }
        var shards: [Shard] = []
        var unfinished: [String] = []
        for directory in directories {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue
            else {
                throw ResultsError("cannot read \(directory): there is no such folder")
            }
            guard FileManager.default.fileExists(atPath: directory + "/summary.json") else {
                unfinished.append(directory)
                continue
            }
            shards.append(try Self.read(directory))
        }
        guard !shards.isEmpty else {
            throw ResultsError(
                "no shard finished: \(unfinished.joined(separator: ", ")) hold no summary.json"
            )
        }
        let (incomplete, wrong) = Self.check(shards, unfinished: unfinished, rules: rules)
        let sends = shards.compactMap(\.firstSend)
        skew = sends.count < 2 ? nil : sends.max()!.timeIntervalSince(sends.min()!)
        var refusals = wrong
        if let skew, skew > Double(rules.maxSkew.wholeNanoseconds) / 1e9 {
            refusals.append(
                "the shards began \(Self.milliseconds(skew)) ms apart (their first sends), more than --max-skew allows (\(Self.milliseconds(Double(rules.maxSkew.wholeNanoseconds) / 1e9)) ms)"
            )
        }
        if !rules.allowPartial { refusals += incomplete }
        self.refusals = refusals
        gaps = rules.allowPartial ? incomplete : []
        self.shards = shards
        entries = Self.entries(of: shards)
        var total = LoadStatistics.makeHistogram()
        for entry in entries { total.add(entry.histogram.unpacked()) }
        latency = total
        var json = Self.json(of: shards, entries: entries, latency: total)
        json["invalid_reasons"] = (json["invalid_reasons"] as? [String] ?? []) + refusals
        json["valid"] = (json["invalid_reasons"] as? [String])?.isEmpty == true
        json["partial"] = !gaps.isEmpty
        json["partial_reasons"] = gaps
        json["start_skew_ms"] = skew.map { $0 * 1000 as Any } ?? NSNull()
        // A shard stopped early is a gap a partial merge accepts, not a stopped merge.
        if rules.allowPartial { json["cancelled"] = false }
        self.json = json
    }

    private static func read(_ directory: String) throws(ResultsError) -> Shard {
        let summaryPath = directory + "/summary.json"
        let logPath = directory + "/latency.hlog"
        let summary: [String: Any]
        let log: String
        do {
            let data = try Data(contentsOf: URL(fileURLWithPath: summaryPath))
            summary = try JSONSerialization.jsonObject(with: data) as? [String: Any] ?? [:]
            log = try String(contentsOfFile: logPath, encoding: .utf8)
        } catch {
            throw ResultsError("cannot read \(directory): \(error.reason)")
        }
        guard let version = summary["schema_version"] as? Int, RunSummary.readableSchemaVersions.contains(version)
        else {
            throw ResultsError("\(summaryPath): schema_version is not one this Fanout reads (2 to 4)")
        }
        let (start, entries) = try IntervalLog.read(log, file: logPath)
        let logged = entries.map(\.histogram.totalCount).reduce(0, +)
        let counted = (summary["intervals"] as? [[String: Any]] ?? []).compactMap { $0["latency_count"] as? Int }
            .reduce(0, +)
        guard logged == UInt64(counted) else {
            throw ResultsError("\(logPath) holds \(logged) latencies but \(summaryPath) counts \(counted)")
        }
        let part: TokenShard?
        if let text = summary["shard"] as? String {
            do { part = try TokenShard(parsing: text) } catch { throw ResultsError("\(summaryPath): shard: \(error)") }
        } else {
            part = nil
        }
        let firstSend = ((summary["start"] as? [String: Any])?["first_send"] as? String).flatMap {
            TimeNotation.parse($0)
        }
        return Shard(
            directory: directory,
            summary: summary,
            start: start,
            entries: entries,
            part: part,
            firstSend: firstSend
        )
    }

    /// What keeps the shards from being one run: `incomplete` (missing or unfinished shards,
    /// which a partial merge accepts) and `wrong` (which nothing does).
    private static func check(
        _ shards: [Shard],
        unfinished: [String],
        rules: Rules
    ) -> (incomplete: [String], wrong: [String]) {
        var incomplete = unfinished.map { "\($0) holds no summary.json: its shard did not finish" }
        var wrong: [String] = []
        let unsharded = shards.filter { $0.part == nil }.map(\.directory)
        if !unsharded.isEmpty {
            wrong.append("\(unsharded.joined(separator: ", ")): not a shard (run without --shard i/N)")
        }
        let counts = Set(shards.compactMap(\.part?.count))
        if counts.count > 1 {
            wrong.append(
                "the shards disagree on how many there are: \(counts.sorted().map(String.init).joined(separator: ", "))"
            )
        } else if let count = counts.first {
            let byIndex = Dictionary(grouping: shards.filter { $0.part != nil }, by: { $0.part!.index })
            for (index, list) in byIndex.sorted(by: { $0.key < $1.key }) where list.count > 1 {
                wrong.append(
                    "shard \(index)/\(count) is there \(list.count) times: \(list.map(\.directory).joined(separator: ", "))"
                )
            }
            let missing = (1...count).filter { byIndex[$0] == nil }
            if !missing.isEmpty {
                let names = missing.map { "\($0)/\(count)" }
                incomplete.append(
                    "\(names.count == 1 ? "shard" : "shards") \(Self.list(names)) \(names.count == 1 ? "is" : "are") missing"
                )
            }
        }
        for shard in shards {
            let name = shard.part.map { "\(shard.directory) (shard \($0))" } ?? shard.directory
            if let abandoned = shard.summary["abandoned"] as? String {
                incomplete.append("\(name) did not finish: \(abandoned)")
            } else if shard.summary["cancelled"] as? Bool == true {
                incomplete.append("\(name) did not finish: it was stopped before the end")
            }
            // An invalid shard's own reasons are the merge's already (`json(of:)`, by folder).
        }
        let first = shards[0]
        let reference = configuration(of: first)
        for shard in shards.dropFirst() {
            let other = configuration(of: shard)
            let differences = Set(reference.keys).union(other.keys).sorted().filter { reference[$0] != other[$0] }
            if !differences.isEmpty {
                let described = differences.map { "\($0) \(other[$0] ?? "-") (not \(reference[$0] ?? "-"))" }
                wrong.append(
                    "\(shard.directory) was configured unlike \(first.directory): \(described.joined(separator: ", "))"
                )
            }
        }
        return (incomplete, wrong)
    }

    /// A shard's `configuration` as text per key, its token source without its shard (which
    /// is what differs between shards).
    private static func configuration(of shard: Shard) -> [String: String] {
        var values: [String: String] = [:]
        for (key, value) in shard.summary["configuration"] as? [String: Any] ?? [:] {
            var text = value is NSNull ? "null" : "\(value)"
            if key == "tokens" { text = text.replacing(/, shard \d+\/\d+$/, with: "") }
            values[key] = text
        }
        return values
    }

    private static func list(_ names: [String]) -> String {
        names.count <= 8
            ? names.joined(separator: ", ") : names.prefix(8).joined(separator: ", ") + " and \(names.count - 8) more"
    }

    private static func milliseconds(_ seconds: Double) -> String { String(format: "%.1f", seconds * 1000) }

    private static func entries(of shards: [Shard]) -> [IntervalLog.Entry] {
        var seconds: [Int: (length: Double, histogram: Histogram<UInt64>)] = [:]
        for shard in shards {
            for entry in shard.entries {
                let second = Int(entry.start.rounded(.down))
                var slot = seconds[second] ?? (0, LoadStatistics.makeHistogram())
                slot.histogram.add(entry.histogram.unpacked())
                slot.length = max(slot.length, entry.length)
                seconds[second] = slot
            }
        }
        return seconds.keys.sorted().map { second in
            IntervalLog.Entry(
                start: Double(second),
                length: seconds[second]!.length,
                histogram: PackedHistogram(seconds[second]!.histogram)
            )
        }
    }

    /// The shards' `harness` objects as one: each delay's p50, p99 and max the largest over the
    /// shards (the shards' histograms of them are not kept), every loop's CPU, the share against
    /// the merged p99. `NSNull` when a shard has none (schema 4 and before).
    private static func mergedHarness(_ summaries: [[String: Any]], latency: Histogram<UInt64>) -> Any {
        let harnesses = summaries.compactMap { $0["harness"] as? [String: Any] }
        guard harnesses.count == summaries.count, let first = harnesses.first else { return NSNull() }
        func largest(_ delays: [[String: Any]?]) -> [String: Any] {
            var merged: [String: Any] = ["count": delays.compactMap { $0?["count"] as? Int }.reduce(0, +)]
            for key in ["p50", "p99", "max"] { merged[key] = delays.compactMap { $0?[key] as? Double }.max() ?? 0 }
            return merged
        }
        func side(_ name: String, _ keys: [String]) -> Any {
            let sides = harnesses.compactMap { $0[name] as? [String: Any] }
            guard sides.count == harnesses.count else { return NSNull() }
            var merged: [String: Any] = [:]
            for key in keys {
                let delays = sides.map { $0[key] as? [String: Any] }
                // The closed model has no send lateness: null stays null.
                merged[key] = delays.allSatisfy { $0 == nil } ? NSNull() : largest(delays)
            }
            merged["loop_utilisation"] = sides.flatMap { $0["loop_utilisation"] as? [Double] ?? [] }
            return merged
        }
        let ownP99 = harnesses.compactMap { $0["own_p99_ms"] as? Double }.max() ?? 0
        let measured = latency.milliseconds(at: 99)
        let maxShare = first["max_share"] as? Double ?? 0
        let share = measured > 0 ? ownP99 / measured : 0
        var guidance: [String] = []
        for advice in harnesses.flatMap({ $0["guidance"] as? [String] ?? [] }) where !guidance.contains(advice) {
            guidance.append(advice)
        }
        let largestPart = harnesses.max { ($0["own_p99_ms"] as? Double ?? 0) < ($1["own_p99_ms"] as? Double ?? 0) }
        return [
            "sender": side(
                "sender",
                ["send_lateness_ms", "loop_lag_ms", "read_delay_ms", "return_path_ms", "per_answer_ms"]
            ),
            "sink": side("sink", ["lateness_ms", "from_send_ms", "injected_ms", "loop_lag_ms"]),
            "own_p99_ms": ownP99,
            "own_ms": NSNull(),
            "own_measured": harnesses.allSatisfy { $0["own_measured"] as? Bool == true },
            "largest": largestPart?["largest"] as? String ?? "",
            "measured_p99_ms": measured,
            "share_of_p99": share,
            "max_share": maxShare,
            "bound": share > maxShare,
            "guidance": share > maxShare ? guidance : [],
        ] as [String: Any]
    }

    private static func json(
        of shards: [Shard],
        entries: [IntervalLog.Entry],
        latency: Histogram<UInt64>
    ) -> [String: Any] {
        let summaries = shards.map(\.summary)
        var object = summaries[0]
        func sum(_ key: String) -> Int { summaries.compactMap { $0[key] as? Int }.reduce(0, +) }
        func sumCounts(_ key: String, in list: [[String: Any]]) -> [String: Int] {
            list.compactMap { $0[key] as? [String: Int] }.reduce(into: [:]) { total, counts in
                for (name, count) in counts { total[name, default: 0] += count }
            }
        }
        func digest(_ texts: [String?]) -> String {
            var combined = NotificationDigest()
            for text in texts {
                if let text, let digest = NotificationDigest(parsing: text) { combined.combine(digest) }
            }
            return combined.description
        }
        for key in ["sent", "accepted", "requests", "retries", "unscheduled"] { object[key] = sum(key) }
        for key in ["rejected", "failed", "skipped"] { object[key] = sumCounts(key, in: summaries) }
        // A shard written before the reasons were kept left tokens unsent only past the
        // schedule's end.
        var unscheduled = ["schedule_over": 0, "tokens_ran_out": 0]
        for summary in summaries {
            let shard =
                summary["unscheduled_reasons"] as? [String: Int]
                ?? ["schedule_over": summary["unscheduled"] as? Int ?? 0]
            for (reason, count) in shard { unscheduled[reason, default: 0] += count }
        }
        object["unscheduled_reasons"] = unscheduled
        object["digest"] = digest(summaries.map { $0["digest"] as? String })
        // CPU adds up over shards; a shard without it (schema 2) leaves the total unknown.
        object["schema_version"] = RunSummary.schemaVersion
        let sent = sum("sent")
        var cpu: [String: Any] = [:]
        for role in ["sender", "sink"] {
            let seconds = summaries.map { ($0["cpu"] as? [String: Any])?["\(role)_seconds"] as? Double }
            let total: Double? = seconds.contains(nil) ? nil : seconds.compactMap { $0 }.reduce(0, +)
            cpu["\(role)_seconds"] = total.map { $0 as Any } ?? NSNull()
            cpu["\(role)_us_per_notification"] =
                total.flatMap { sent > 0 ? $0 * 1e6 / Double(sent) as Any : nil } ?? NSNull()
        }
        object["cpu"] = cpu
        object["harness"] = mergedHarness(summaries, latency: latency)
        object["elapsed_seconds"] = summaries.compactMap { $0["elapsed_seconds"] as? Double }.max() ?? 0
        object["throughput_per_second"] = summaries.compactMap { $0["throughput_per_second"] as? Double }.reduce(0, +)
        object["latency_ms"] = Dictionary(
            uniqueKeysWithValues: RunSummary.percentiles.map { ($0.key, latency.milliseconds(at: $0.value)) }
        )
        object["cancelled"] = summaries.contains { $0["cancelled"] as? Bool == true }
        let reconciled = summaries.map { $0["reconciled"] as? Bool }
        object["reconciled"] =
            reconciled.contains(false) ? false : reconciled.allSatisfy { $0 == true } ? true as Any : NSNull()
        let sinks = summaries.compactMap { $0["sink"] as? [String: Any] }
        if sinks.count == summaries.count {
            object["sink"] = [
                "requests": sinks.compactMap { $0["requests"] as? Int }.reduce(0, +),
                "accepted": sinks.compactMap { $0["accepted"] as? Int }.reduce(0, +),
                "rejected": sumCounts("rejected", in: sinks),
                "digest": digest(sinks.map { $0["digest"] as? String }),
                "differences": sinks.flatMap { $0["differences"] as? [String] ?? [] },
            ]
        }
        let tokens = summaries.compactMap { $0["tokens"] as? [String: Int] }
        if tokens.count == summaries.count {
            object["tokens"] = ["read", "lines", "turned_down"].reduce(into: [String: Int]()) { total, key in
                total[key] = tokens.compactMap { $0[key] }.reduce(0, +)
            }
        }
        let lags = summaries.compactMap { $0["generator_lag_ms"] as? [String: Double] }
        if !lags.isEmpty {
            object["generator_lag_ms"] = [
                "p99": lags.compactMap { $0["p99"] }.max() ?? 0, "max": lags.compactMap { $0["max"] }.max() ?? 0,
                "limit": lags[0]["limit"] ?? 0,
            ]
        }
        var reasons: [String] = []
        for shard in shards {
            reasons += (shard.summary["invalid_reasons"] as? [String] ?? []).map { "\(shard.directory): \($0)" }
        }
        object["invalid_reasons"] = reasons
        object["valid"] = reasons.isEmpty
        object["intervals"] = mergedIntervals(summaries, entries: entries)
        var configuration = object["configuration"] as? [String: Any] ?? [:]
        configuration["tokens"] = summaries.compactMap { ($0["configuration"] as? [String: Any])?["tokens"] as? String }
            .joined(separator: "; ")
        object["configuration"] = configuration
        object["merged_from"] = shards.map(\.directory)
        object["shard"] = NSNull()
        let sends = shards.compactMap(\.firstSend)
        object["start"] = [
            "scheduled": (summaries[0]["start"] as? [String: Any])?["scheduled"] ?? NSNull(),
            "first_send": sends.min().map { TimeNotation.format($0) as Any } ?? NSNull(),
            "host": Set(summaries.compactMap { ($0["start"] as? [String: Any])?["host"] as? String }).sorted()
                .joined(separator: ", "),
        ]
        object["shard_environments"] = summaries.compactMap { $0["environment"] }
        return object
    }

    private static func mergedIntervals(_ summaries: [[String: Any]], entries: [IntervalLog.Entry]) -> [[String: Any]] {
        var completed: [Int: Int] = [:]
        var lag: [Int: Double] = [:]
        for summary in summaries {
            for interval in summary["intervals"] as? [[String: Any]] ?? [] {
                guard let second = interval["second"] as? Int else { continue }
                completed[second, default: 0] += interval["completed"] as? Int ?? 0
                lag[second] = max(lag[second] ?? 0, interval["max_lag_ms"] as? Double ?? 0)
            }
        }
        let histograms = Dictionary(uniqueKeysWithValues: entries.map { (Int($0.start), $0.histogram.unpacked()) })
        return Set(completed.keys).union(histograms.keys).sorted().map { second in
            let histogram = histograms[second] ?? LoadStatistics.makeHistogram()
            func milliseconds(_ percentile: Double) -> Double { histogram.milliseconds(at: percentile) }
            return [
                "second": second, "completed": completed[second] ?? 0, "latency_count": Int(histogram.totalCount),
                "p50_ms": milliseconds(50), "p90_ms": milliseconds(90), "p99_ms": milliseconds(99),
                "max_ms": milliseconds(100), "max_lag_ms": lag[second] ?? 0,
            ]
        }
    }

    /// Writes the merged run's files.
    public func write(to directory: String) throws {
        let start = shards.map(\.start).min() ?? 0
        try RunFiles.write(
            to: directory,
            summary: json,
            latency: latency,
            hlog: IntervalLog(entries: entries, start: start).text
        )
    }

    /// What a person reads: the merge in a line, then why it is refused or partial.
    public var text: String {
        let object = json
        let reconciled = object["reconciled"] as? Bool
        var lines = [
            "merged \(shards.count) \(shards.count == 1 ? "shard" : "shards"): \(object["digest"] as? String ?? "")"
                + (reconciled == true ? ", reconciled" : reconciled == false ? ", NOT reconciled" : "")
                + (skew.map { ", start skew \(Self.milliseconds($0)) ms" } ?? "")
        ]
        lines += gaps.map { "PARTIAL: \($0)" }
        lines += (object["invalid_reasons"] as? [String] ?? []).map { "REFUSED: \($0)" }
        return lines.joined(separator: "\n")
    }

    /// Whether the merge is one run's result: `false` when refused.
    public var isValid: Bool { json["valid"] as? Bool == true }
}
