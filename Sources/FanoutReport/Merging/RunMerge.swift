import FanoutAPNs
import FanoutFiles
import FanoutMeasure
import FanoutNotation
import FanoutResults
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
        var summary: SummaryDocument
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
    public let refusals: [InvalidReason]
    /// What is missing from a partial merge (`allowPartial`); empty when nothing is.
    public let gaps: [InvalidReason]
    /// The merged `summary.json`.
    public let document: SummaryDocument

    /// Reads the shards' `summary.json` and `latency.hlog`, and checks they make one run. A
    /// folder that does not exist, or files that cannot be read or disagree, throw; a folder
    /// without `summary.json` is a shard that did not finish.
    public init(directories: [String], rules: Rules = Rules()) throws(ResultsError) {
        guard !directories.isEmpty else { throw ResultsError(.unreadable, "give the shards' run folders") }
        var shards: [Shard] = []
        var unfinished: [String] = []
        for directory in directories {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue
            else {
                throw ResultsError(.unreadable, "cannot read \(directory): there is no such folder")
            }
            guard FileManager.default.fileExists(atPath: directory + "/summary.json") else {
                unfinished.append(directory)
                continue
            }
            shards.append(try Self.read(directory))
        }
        guard !shards.isEmpty else {
            throw ResultsError(
                .inconsistent,
                "no shard finished: \(unfinished.joined(separator: ", ")) hold no summary.json"
            )
        }
        let (incomplete, wrong) = Self.check(shards, unfinished: unfinished, rules: rules)
        let sends = shards.compactMap(\.firstSend)
        skew = sends.count < 2 ? nil : sends.max()!.timeIntervalSince(sends.min()!)
        var refusals = wrong
        if let skew, skew > rules.maxSkew.seconds {
            refusals.append(
                .startSkew(skewMs: Self.tenths(skew * 1000), limitMs: Self.tenths(rules.maxSkew.milliseconds))
            )
        }
        if !rules.allowPartial { refusals += incomplete }
        self.refusals = refusals
        gaps = rules.allowPartial ? incomplete : []
        self.shards = shards
        entries = Self.entries(of: shards)
        var total = makeMicrosecondHistogram()
        for entry in entries { total.add(entry.histogram.unpacked()) }
        latency = total
        document =
            SummaryMerge(
                shards: shards,
                entries: entries,
                latency: total,
                refusals: refusals,
                gaps: gaps,
                allowPartial: rules.allowPartial,
                skew: skew
            ).document
    }

    static func read(_ directory: String) throws(ResultsError) -> Shard {
        let summaryPath = directory + "/summary.json"
        let logPath = directory + "/latency.hlog"
        let summary = try SummaryDocument.read(summaryPath)
        let log: String
        do { log = try String(contentsOfFile: logPath, encoding: .utf8) } catch {
            throw ResultsError(.unreadable, "cannot read \(directory): \(error.reason)")
        }
        let (start, entries) = try IntervalLog.read(log, file: logPath)
        let logged = entries.map(\.histogram.totalCount).reduce(0, +)
        let counted = summary.intervals.map(\.latencyCount).reduce(0, +)
        guard logged == UInt64(counted) else {
            throw ResultsError(
                .inconsistent,
                "\(logPath) holds \(logged) latencies but \(summaryPath) counts \(counted)"
            )
        }
        let part: TokenShard?
        if let text = summary.shard {
            do { part = try TokenShard(parsing: text) } catch {
                throw ResultsError(.malformed, "\(summaryPath): shard: \(error)")
            }
        } else {
            part = nil
        }
        let firstSend = summary.start?.firstSend.flatMap { TimeNotation.parse($0) }
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
    ) -> (incomplete: [InvalidReason], wrong: [InvalidReason]) {
        var incomplete = unfinished.map { InvalidReason.noSummary(folder: $0) }
        var wrong: [InvalidReason] = []
        // Sinks behind one provider are not shards of a run: each listened on its own address,
        // took the connections that came, and expected its own share.
        let sinks = shards.filter(\.summary.isSink).map(\.directory)
        if !sinks.isEmpty && sinks.count < shards.count {
            wrong.append(.sinkAmongRuns(folders: sinks))
        }
        let allSinks = sinks.count == shards.count
        let unsharded = shards.filter { $0.part == nil && !$0.summary.isSink }.map(\.directory)
        if !unsharded.isEmpty {
            wrong.append(.notAShard(folders: unsharded))
        }
        let counts = Set(shards.compactMap(\.part?.count))
        if counts.count > 1 {
            wrong.append(.shardCountsDisagree(counts: counts.sorted()))
        } else if let count = counts.first {
            let byIndex = Dictionary(grouping: shards.filter { $0.part != nil }, by: { $0.part!.index })
            for (index, list) in byIndex.sorted(by: { $0.key < $1.key }) where list.count > 1 {
                wrong.append(.shardTwice(index: index, count: count, folders: list.map(\.directory)))
            }
            let missing = (1...count).filter { byIndex[$0] == nil }
            if !missing.isEmpty {
                incomplete.append(.shardsMissing(names: missing.map { "\($0)/\(count)" }))
            }
        }
        // A shard's --abort-on stops the fleet (cluster-local.sh, Kubernetes's FailJob): the
        // shards stopped are the abort's doing, not gaps (`SummaryMerge.firstAbort`).
        let aborted = shards.contains { $0.summary.aborted != nil }
        for shard in shards {
            let name = shard.part.map { "\(shard.directory) (shard \($0))" } ?? shard.directory
            if let abandoned = shard.summary.abandoned {
                incomplete.append(.shardGaveUp(shard: name, abandoned: abandoned))
            } else if shard.summary.cancelled && !aborted {
                incomplete.append(.shardStopped(shard: name))
            }
            // An invalid shard's own reasons are the merge's already (`json(of:)`, by folder).
        }
        let first = shards[0]
        let ownToEachSink: Set = ["endpoint", "connections", "tokens"]
        let reference = configuration(of: first).filter { !allSinks || !ownToEachSink.contains($0.key) }
        for shard in shards.dropFirst() {
            let other = configuration(of: shard).filter { !allSinks || !ownToEachSink.contains($0.key) }
            let differences = Set(reference.keys).union(other.keys).sorted().filter { reference[$0] != other[$0] }
            if !differences.isEmpty {
                wrong.append(
                    .configuredUnlike(
                        folder: shard.directory,
                        reference: first.directory,
                        differences: differences.map {
                            .init(field: $0, value: other[$0], reference: reference[$0])
                        }
                    )
                )
            }
        }
        return (incomplete, wrong)
    }

    /// A shard's `configuration` as text per key, its token source without its shard (which
    /// is what differs between shards).
    private static func configuration(of shard: Shard) -> [String: String] {
        var values: [String: String] = [:]
        for (key, value) in shard.summary.configuration.rows {
            var text = value ?? "null"
            if key == "tokens" { text = text.replacing(/, shard \d+\/\d+$/, with: "") }
            values[key] = text
        }
        return values
    }

    /// `milliseconds` to a tenth, as the merge writes its shards' start skew.
    private static func tenths(_ milliseconds: Double) -> Double { (milliseconds * 10).rounded() / 10 }

    private static func entries(of shards: [Shard]) -> [IntervalLog.Entry] {
        var seconds: [Int: (length: Double, histogram: Histogram<UInt64>)] = [:]
        for shard in shards {
            for entry in shard.entries {
                let second = Int(entry.start.rounded(.down))
                var slot = seconds[second] ?? (0, makeMicrosecondHistogram())
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

    /// Writes the merged run's files.
    public func write(to directory: String) throws {
        let start = shards.map(\.start).min() ?? 0
        try RunFiles.write(
            to: directory,
            summary: document,
            latency: latency,
            hlog: IntervalLog(entries: entries, start: start).text
        )
    }

    /// What a person reads: the merge in a line, then why it is refused or partial.
    ///
    /// `merged 2 shards: 200,000 sent; 198,034 notifications, digest 6a1f…-09c2… (the accepted),
    /// reconciled, start skew 0.3 ms`
    public var text: String {
        let reconciled = document.reconciled
        var lines = [
            "merged \(shards.count) \(shards.count == 1 ? "shard" : "shards"): \(grouped(document.sent)) sent; "
                + (NotificationDigest(parsing: document.digest)?.text ?? document.digest) + " (the accepted)"
                + (reconciled == true ? ", reconciled" : reconciled == false ? ", NOT reconciled" : "")
                + (skew.map { ", start skew \(String(format: "%.1f", $0 * 1000)) ms" } ?? "")
        ]
        if let aborted = document.aborted { lines.append("ABORTED: " + aborted.line) }
        lines += gaps.map { "PARTIAL: \($0)" }
        lines += document.invalidity.map { "REFUSED: \($0)" }
        return lines.joined(separator: "\n")
    }

    /// Whether the merge is one run's result: `false` when refused.
    public var isValid: Bool { document.valid }
}
