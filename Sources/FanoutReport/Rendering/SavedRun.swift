import FanoutMeasure
import FanoutResults
import Foundation
import Histogram

/// A run's folder read back (`fanout report DIR`): its `summary.json`, and every latency its
/// `latency.hlog` logged, from which this build draws the folder's summary and report page again,
/// as vegeta's `report` and k6's summary export do for theirs.
///
/// ```
///   DIR/summary.json ──► SummaryDocument ──┬─► MarkdownSummary (summary.md's text)
///   DIR/latency.hlog ──► each second's ────┘─► HTMLReport (report.html)
///                        histogram, summed
/// ```
public struct SavedRun {
    public let summary: SummaryDocument
    /// Every latency the run logged.
    public let latency: Histogram<UInt64>

    /// Reads `directory`; the error says which file and what is wrong with it.
    public init(directory: String) throws(ResultsError) {
        let summaryPath = directory + "/summary.json"
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory, isDirectory: &isFolder), isFolder.boolValue else {
            throw ResultsError(.unreadable, "\(directory) is not a folder: give a run's folder (its --output)")
        }
        guard FileManager.default.fileExists(atPath: summaryPath) else {
            let repeats =
                (try? FileManager.default.contentsOfDirectory(atPath: directory))?
                .filter { $0.hasPrefix("repeat-") } ?? []
            throw ResultsError(
                .unreadable,
                repeats.isEmpty
                    ? "\(directory) holds no summary.json: it is not a run's folder"
                    : "\(directory) is a folder of repeats: give one of them (\(directory)/repeat-1), or compare them with fanout compare"
            )
        }
        // As a merge reads a shard: the two files, and whether the log holds what the summary counts.
        let folder = try RunMerge.read(directory)
        summary = folder.summary
        var latency = makeMicrosecondHistogram()
        for entry in folder.entries { latency.add(entry.histogram.unpacked()) }
        self.latency = latency
    }

    /// `summary.md`'s text.
    public var markdown: String { MarkdownSummary(summary: summary).text }

    /// `report.html` as this build draws it.
    public var html: String { HTMLReport(summary: summary, latency: latency).html }
}
