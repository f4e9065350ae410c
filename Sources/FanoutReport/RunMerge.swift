import FanoutAPNs
import FanoutClient
import FanoutSettings
import Foundation
import Histogram

/// `fanout merge`: the run folders of a run's shards (`--shard i/N` on several machines, at the
/// same time) as one run folder.
///
/// - Histograms add bucket by bucket (HdrHistogram's add: nothing is lost): second s of the
///   merged log is the sum of every shard's second s (each counted from its own start), and
///   the run's histogram the sum of all of them.
/// - Counts sum (sent, accepted, rejected and failed by reason, requests, retries, the sink's);
///   digests combine, so the merged digest is the digest a single run over the same tokens
///   has; the merge is reconciled when every shard is.
/// - Throughput is the sum of the shards' (they ran at once); a shard that is invalid makes
///   the merge invalid.
public struct RunMerge {
    public struct Shard {
        public var directory: String
        var summary: [String: Any]
        var start: Double
        var entries: [IntervalLog.Entry]
    }

    public let shards: [Shard]
    /// Each second's histogram, summed over the shards.
    public let entries: [IntervalLog.Entry]
    /// Every latency of every shard.
    public let latency: Histogram<UInt64>
    /// The merged `summary.json`.
    public let json: [String: Any]

    /// Reads the shards' `summary.json` and `latency.hlog`, and checks they belong together.
    public init(directories: [String]) throws(ResultsError) {
        guard directories.count >= 2 else { throw ResultsError("merging needs at least two run folders") }
        var shards: [Shard] = []
        for directory in directories {
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
                throw ResultsError("\(summaryPath): schema_version is not one this Fanout reads (2 or 3)")
            }
            let (start, entries) = try IntervalLog.read(log, file: logPath)
            let logged = entries.map(\.histogram.totalCount).reduce(0, +)
            let counted = (summary["intervals"] as? [[String: Any]] ?? []).compactMap { $0["latency_count"] as? Int }
                .reduce(0, +)
            guard logged == UInt64(counted) else {
                throw ResultsError("\(logPath) holds \(logged) latencies but \(summaryPath) counts \(counted)")
            }
            shards.append(Shard(directory: directory, summary: summary, start: start, entries: entries))
        }
        let models = Set(shards.map { $0.summary["model"] as? String ?? "" })
        guard models.count == 1 else {
            throw ResultsError("the shards ran different load models (\(models.sorted().joined(separator: ", ")))")
        }
        self.shards = shards
        entries = Self.entries(of: shards)
        var total = LoadStatistics.makeHistogram()
        for entry in entries { total.add(entry.histogram.unpacked()) }
        latency = total
        json = Self.json(of: shards, entries: entries, latency: total)
    }

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

    /// One line for a person.
    public var text: String {
        let object = json
        let reconciled = object["reconciled"] as? Bool
        return
            "merged \(shards.count) shards: \(object["digest"] as? String ?? "")"
            + (reconciled == true ? ", reconciled" : reconciled == false ? ", NOT reconciled" : "")
            + ((object["valid"] as? Bool) == false ? ", INVALID" : "")
    }
}
