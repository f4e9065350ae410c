import FanoutResults
import Foundation

/// What a run prints by default: five lines a person reads at a glance, drawn from
/// `summary.json` alone, so that `fanout report DIR` prints a folder's again as its run did.
///
/// ```
/// 1,000,000 notifications to the embedded sink at http://127.0.0.1:44041 in 2.44 s over 4 connections × 1000 streams: 410,143 notifications/s
/// accepted 1,000,000   rejected 0   failed 0   skipped 0   errors 0.00%
/// latency ms: p50 9.15  p90 19.0  p99 27.3  p99.9 34.3  p99.99 40.8  max 40.9  — Fanout's own (self-measurement)
/// VALID: complete and reconciled with the sink; no thresholds were given (fanout gate DIR --threshold … judges the folder)
/// results: results/run-20261205-190102/ (summary.json, summary.md, report.html, latency.hgrm, latency.hlog)
/// ```
///
/// Every other line a run can print (each reason's count, the open model's pacing, the
/// harness's parts, the devices, the return wave) is `--verbose`'s, and in summary.md and
/// report.html.
public struct ConsoleSummary: Sendable {
    public var summary: SummaryDocument

    public init(summary: SummaryDocument) { self.summary = summary }

    /// The first four lines; the caller adds where the files went.
    public var lines: [String] {
        [throughputLine, outcomesLine, latencyLine, RunVerdict(summary: summary).line]
    }

    /// What `--verbose` adds under a run's every line: whose latency it is and the error rate,
    /// and the verdict unless it is INVALID (whose reasons are lines of their own there).
    public var verboseTail: [String] {
        let verdict = RunVerdict(summary: summary)
        // Whose latency, only where there is one (a run without answers has none).
        let trust =
            summary.latency == nil ? nil : HarnessRecord(summary: summary).map { "; latency is \($0.latencyIs)" }
        return ["errors \(summary.errorRateText)" + (trust ?? "")] + (verdict.kind == .invalid ? [] : [verdict.line])
    }

    /// The five lines, the last naming `folder` and its `files`.
    public func lines(folder: String, files: [String]) -> [String] {
        lines + [Self.resultsLine(folder: folder, files: files)]
    }

    /// `results: DIR/ (summary.json, …)`: where a run's files went, the last line of every form.
    public static func resultsLine(folder: String, files: [String]) -> String {
        "results: \(folder)/ (\(files.joined(separator: ", ")))"
    }

    /// `1,000,000 notifications to … in 2.44 s over 4 connections × 1000 streams: 410,143/s`,
    /// a scaled rehearsal said so first; the rate's span when a warm-up is left out of it, and
    /// a merge's shards (each with the connections named).
    var throughputLine: String {
        var rate =
            summary.answered == 0
            ? "no answers"
            : summary.throughputPerSecond.map { "\(grouped(Int($0.rounded()))) notifications/s" } ?? "nothing measured"
        if summary.answered > 0, summary.warmUpSeconds > 0 {
            rate += " after the \(HTMLReport.seconds(summary.warmUpSeconds)) warm-up"
        }
        let shards = summary.mergedFrom.map { " a shard, \($0.count) shards merged" } ?? ""
        let connections = summary.connections
        // "SCALED REHEARSAL (1% of the devices, time ×100): …", from the title's own words.
        let rehearsal = summary.sample.map { sample in
            "SCALED REHEARSAL" + sample.title.dropFirst("a scaled rehearsal".count) + ": "
        }
        return (rehearsal ?? "")
            + "\(grouped(summary.sent)) notifications to \(summary.endpoint) in "
            + "\(String(format: "%.2f", summary.elapsedSeconds)) s over \(connections) connection\(connections == 1 ? "" : "s") "
            + "× \(summary.streamsPerConnection) streams\(shards): \(rate)"
    }

    /// The outcomes' totals and the error rate; each reason's count is `--verbose`'s.
    var outcomesLine: String {
        func total<Key>(_ counts: [Key: Int]) -> String { grouped(counts.values.reduce(0, +)) }
        return "accepted \(grouped(summary.accepted))   rejected \(total(summary.rejected))   "
            + "failed \(total(summary.failed))   skipped \(total(summary.skipped))   errors \(summary.errorShareText)"
    }

    /// The percentiles, and whose latency they are (`HarnessRecord.latencyIs`).
    var latencyLine: String {
        guard let latency = summary.latency else {
            return summary.answered == 0 ? "latency: no answers" : "latency: none measured after the warm-up"
        }
        let figures = SummaryDocument.Latency.percentiles.map {
            "\($0.label) \(millisecondsText(latency[keyPath: $0.value]))"
        }
        var notes = HarnessRecord(summary: summary).map { [$0.latencyIs] } ?? []
        // What else is in the latency: a wait for a stream the server had not allowed yet.
        if let waits = summary.openModel?.streamWaits, waits.count > 0 {
            notes.append(
                String(format: "%.1f%% waited up to %.1f ms for a stream", waits.share * 100, waits.longestMs)
            )
        }
        return "latency ms: " + figures.joined(separator: "  ")
            + (notes.isEmpty ? "" : "  — " + notes.joined(separator: "; "))
    }
}
