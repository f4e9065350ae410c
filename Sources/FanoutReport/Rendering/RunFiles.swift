import FanoutResults
import Foundation
import Histogram

/// The files of a run folder, from its summary and histograms.
package enum RunFiles {
    /// The files `write` makes, as a run's last line names them.
    package static let names = ["summary.json", "summary.md", "report.html", "latency.hgrm", "latency.hlog"]

    package static func write(
        to directory: String,
        summary: SummaryDocument,
        latency: Histogram<UInt64>,
        hlog: String
    ) throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        func file(_ name: String, _ data: Data) throws {
            // Atomically (a file written beside it, then renamed): a reader polling for the
            // folder never reads half a file.
            try data.write(to: URL(fileURLWithPath: directory + "/" + name), options: .atomic)
        }
        try file("summary.md", Data(MarkdownSummary(summary: summary).text.utf8))
        try file("report.html", Data(HTMLReport(summary: summary, latency: latency).html.utf8))
        var hgrm = ""
        latency.outputPercentileDistribution(to: &hgrm, outputValueUnitScalingRatio: 1000)
        try file("latency.hgrm", Data(hgrm.utf8))
        try file("latency.hlog", Data(hlog.utf8))
        // Last: a folder whose writing stopped part-way has no summary.json, and no reader
        // takes it for a finished one.
        try file("summary.json", try summary.data())
    }
}
