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

    /// Whether `directory` is a search's folder: it holds `search.json` and no run's summary.
    public static func isSearch(_ directory: String) -> Bool {
        FileManager.default.fileExists(atPath: directory + "/search.json")
            && !FileManager.default.fileExists(atPath: directory + "/summary.json")
    }

    /// Reads `directory/search.json`; the error says what is wrong with it.
    public init(directory: String) throws(ResultsError) {
        let path = directory + "/search.json"
        let document: SearchDocument
        do {
            document = try JSONDecoder().decode(SearchDocument.self, from: Data(contentsOf: URL(fileURLWithPath: path)))
        } catch {
            throw ResultsError(.malformed, "\(path) is not a search's search.json: \(error)")
        }
        guard document.version == SearchReport.version else {
            throw ResultsError(
                .version,
                "\(path) is version \(document.version); this Fanout reads version \(SearchReport.version)"
            )
        }
        func malformed(_ what: String) -> ResultsError { ResultsError(.malformed, "\(path): \(what)") }
        var objectives: [Threshold] = []
        for text in document.objectives {
            guard let objective = try? Threshold(parsing: text) else {
                throw malformed("objective '\(text)' is not one")
            }
            objectives.append(objective)
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
        for step in document.steps {
            guard let purpose = RateSearch.Purpose(rawValue: step.purpose),
                let outcome = RateSearch.Outcome(rawValue: step.outcome)
            else { throw malformed("step \(step.step)'s purpose '\(step.purpose)' or outcome '\(step.outcome)'") }
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
        if let answer = document.answer {
            guard let read = RateSearch.Answer(answer) else { throw malformed("the answer's kind '\(answer.kind)'") }
            report.answer = read
        }
        report.stoppedBy = document.stoppedBy
        self.report = report
    }
}

extension RateSearch.Answer {
    /// The answer `search.json` holds (`SearchDocument.Answer(_:)` the other way), or `nil` when
    /// its kind or the rates that kind needs are not there.
    init?(_ document: SearchDocument.Answer) {
        switch (document.kind, document.rate, document.failed, document.generatorLimit) {
        case ("found", let rate?, let ceiling?, _): self = .found(rate: rate, ceiling: ceiling)
        case ("at-least", let rate?, _, _): self = .atLeast(rate: rate)
        case ("generator-limit", let passed, _, let limit?): self = .generatorLimit(passed: passed, limit: limit)
        case ("no-rate", _, let lowest?, _): self = .noRate(lowest: lowest)
        case ("steps-exhausted", let passed, let failed, _): self = .stepsExhausted(passed: passed, failed: failed)
        default: return nil
        }
    }
}
