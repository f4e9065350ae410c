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

/// A rate search's folder read back (`fanout report` on `fanout search --output`): its step
/// table and answer printed again, its page drawn again, from `search.json` alone.
public struct SavedSearch {
    public let report: SearchReport
    /// `search.json`'s own bytes (`fanout report --json` prints them: a field this build does
    /// not know is kept).
    public let json: Data

    /// Whether `directory` is a search's folder: it holds `search.json` and no run's summary.
    public static func isSearch(_ directory: String) -> Bool {
        FileManager.default.fileExists(atPath: directory + "/search.json")
            && !FileManager.default.fileExists(atPath: directory + "/summary.json")
    }

    /// Reads `directory/search.json`; the error says what is wrong with it, and where.
    public init(directory: String) throws(ResultsError) {
        let path = directory + "/search.json"
        let data: Data
        do { data = try Data(contentsOf: URL(fileURLWithPath: path)) } catch {
            throw ResultsError(.unreadable, "cannot read \(path): \(error.localizedDescription)")
        }
        // The version first: a newer search.json may have fields this build does not know.
        struct Version: Decodable { var version: Int }
        if let version = try? JSONDecoder().decode(Version.self, from: data).version, version != SearchReport.version {
            throw ResultsError(
                .version,
                "\(path) is version \(version); this Fanout reads version \(SearchReport.version)"
            )
        }
        let document: SearchDocument
        do { document = try JSONDecoder().decode(SearchDocument.self, from: data) } catch {
            throw ResultsError(.malformed, "\(path) is not a search's search.json: \(DocumentError.describe(error))")
        }
        func malformed(_ what: String) -> ResultsError { ResultsError(.malformed, "\(path): \(what)") }
        var objectives: [Threshold] = []
        for (index, text) in document.objectives.enumerated() {
            do { objectives.append(try Threshold(parsing: text)) } catch {
                throw malformed("objectives[\(index)], '\(text)': \(error)")
            }
        }
        var report = SearchReport(
            target: document.target,
            objectives: objectives,
            bounds: RateSearch.Bounds(
                from: document.from,
                to: document.to,
                precision: document.precision,
                maxSteps: document.maxSteps
            ),
            stepDuration: .seconds(document.stepDurationSeconds),
            warmUp: .seconds(document.warmUpSeconds)
        )
        for (index, step) in document.steps.enumerated() {
            guard let purpose = RateSearch.Purpose(rawValue: step.purpose) else {
                throw malformed("steps[\(index)].purpose is '\(step.purpose)', not explore, bisect or confirm")
            }
            guard let outcome = RateSearch.Outcome(rawValue: step.outcome) else {
                throw malformed("steps[\(index)].outcome is '\(step.outcome)', not passed, failed or generator-limit")
            }
            report.steps.append(
                SearchStep(
                    number: step.step,
                    offered: step.offered,
                    purpose: purpose,
                    folder: step.folder,
                    achieved: step.achieved,
                    p50: step.p50,
                    p99: step.p99,
                    errorShare: step.errorShare,
                    outcome: outcome,
                    reasons: step.reasons
                )
            )
        }
        if let answer = document.answer { report.answer = try RateSearch.Answer(answer, in: path) }
        report.stoppedBy = document.stoppedBy
        self.report = report
        json = data
    }
}

extension RateSearch.Answer {
    /// The answer `search.json` at `path` holds (`SearchDocument.Answer(_:)` the other way); the
    /// error names an unknown kind, or a rate its kind needs that is missing.
    init(_ document: SearchDocument.Answer, in path: String) throws(ResultsError) {
        func needed(_ value: Double?, _ field: String) throws(ResultsError) -> Double {
            guard let value else {
                throw ResultsError(
                    .malformed,
                    "\(path): answer: \(field) is missing: a '\(document.kind)' answer needs it"
                )
            }
            return value
        }
        switch document.kind {
        case "found":
            self = .found(
                rate: try needed(document.rate, "rate_per_second"),
                ceiling: try needed(document.failed, "failed_per_second")
            )
        case "at-least": self = .atLeast(rate: try needed(document.rate, "rate_per_second"))
        case "generator-limit":
            self = .generatorLimit(
                passed: document.rate,
                limit: try needed(document.generatorLimit, "generator_limit_per_second")
            )
        case "no-rate": self = .noRate(lowest: try needed(document.failed, "failed_per_second"))
        case "steps-exhausted": self = .stepsExhausted(passed: document.rate, failed: document.failed)
        default:
            throw ResultsError(
                .malformed,
                "\(path): answer: kind is '\(document.kind)', not found, at-least, generator-limit, no-rate or "
                    + "steps-exhausted"
            )
        }
    }
}
