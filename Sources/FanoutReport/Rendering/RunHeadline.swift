import FanoutResults
import Foundation

/// What a run's report says before any figure: when it ran and where, the command, what ran in
/// one line, and its verdict. The page's first screen and the console's default lines both
/// begin with it, so that a person who reads nothing else can say what ran, when, and whether
/// it passed (the trust card beside it says whether its latency is the endpoint's).
///
/// ```
/// Fanout run: 6,000 notifications
/// 2026-12-05 18:52:10 UTC on build-7 · fanout run --rate 2000 --duration 3s --warm-up 1s
/// open model, 2000/s for 3.0 seconds (warm-up 1 s): 6,000 notifications to the embedded sink (h2c) over 4 connections × 1000 streams
/// VALID: complete and reconciled; no thresholds were given (fanout gate judges the folder)
/// ```
public struct RunHeadline: Sendable, Equatable {
    /// `2026-12-05 18:52:10 UTC on build-7`: the run's start and its host.
    public var when: String
    /// The command line (`summary.json`'s `command`), `nil` where it was not recorded.
    public var command: String?
    public var whatRan: String
    public var verdict: RunVerdict

    public init(summary: SummaryDocument) {
        when = Self.format(summary.started) + " on " + summary.environment.hostname
        command = summary.command
        whatRan = summary.whatRan
        verdict = RunVerdict(summary: summary)
    }

    /// UTC to the second, as a person reads it (summary.json keeps RFC 3339 to the millisecond).
    static func format(_ date: Date) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let c = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        return String(
            format: "%04d-%02d-%02d %02d:%02d:%02d UTC",
            c.year ?? 0,
            c.month ?? 0,
            c.day ?? 0,
            c.hour ?? 0,
            c.minute ?? 0,
            c.second ?? 0
        )
    }

    /// The page's lines under its title: when and the command, what ran, the verdict.
    var html: String {
        var html = "<p class=\"when\">Ran \(ChartFrame.escape(when))"
        if let command { html += " · <code>\(ChartFrame.escape(command))</code>" }
        html +=
            "</p>\n<p class=\"what\">\(ChartFrame.escape(whatRan.prefix(1).uppercased() + whatRan.dropFirst()))</p>\n"
        return html + verdict.html
    }
}

/// A run's verdict in a word and a reason: the `--abort-on` conditions' when it had any (the
/// gate it carried), else whether its figures stand. `fanout gate` judges a folder against
/// thresholds afterwards and says its own verdict.
///
/// | verdict | when |
/// |---|---|
/// | FAILED  | an `--abort-on` condition stopped the run; notifications failed (exit 3); a sink's provider failed its card |
/// | INVALID | a reason the figures cannot be trusted (`invalid_reasons`, a stop short of the end, a disagreement with the sink, a partial merge) |
/// | PASSED  | `--abort-on` conditions were given and none was met |
/// | VALID   | no conditions given, and nothing makes the figures untrustworthy |
public struct RunVerdict: Sendable, Equatable {
    public enum Kind: String, Sendable {
        case passed = "PASSED"
        case failed = "FAILED"
        case valid = "VALID"
        case invalid = "INVALID"
    }

    public var kind: Kind
    public var reason: String

    public init(summary: SummaryDocument) {
        // The reasons `fanout gate` judges by, but the other files' (summary.json alone here).
        let invalidity = summary.judgedInvalidity()
        let failed = summary.failed.values.reduce(0, +)
        if let aborted = summary.aborted {
            kind = .failed
            reason = aborted.line
        } else if !invalidity.isEmpty {
            kind = .invalid
            reason = "its figures cannot be trusted: " + invalidity.map(\.description).joined(separator: "; ")
        } else if summary.partial == true {
            kind = .invalid
            reason =
                "a partial merge: " + (summary.partialReasons ?? []).joined(separator: "; ")
                + " (the gate judges what ran, said PARTIAL)"
        } else if failed > 0 {
            // The run's exit status is 3: notifications with no answer after every try.
            kind = .failed
            reason =
                "\(grouped(failed)) notification\(failed == 1 ? "" : "s") failed (no answer after every try; by cause in the outcomes)"
        } else if case .failed(let violations) = summary.cardJudgement {
            // A sink's folder: the provider under test is judged by its conformance card.
            kind = .failed
            reason =
                "the provider failed the conformance card: \(grouped(violations)) violations (its table below)"
        } else if let conditions = summary.configuration.abortOn, !conditions.isEmpty {
            kind = .passed
            reason = "no --abort-on condition was met (\(conditions.joined(separator: "; ")))"
        } else {
            kind = .valid
            reason =
                (summary.reconciled == true ? "complete and reconciled with the sink" : "complete")
                + "; no thresholds were given (fanout gate DIR --threshold … judges the folder)"
        }
    }

    /// `VALID: complete and reconciled with the sink; …`.
    public var line: String { "\(kind.rawValue): \(reason)" }

    var html: String {
        "<p class=\"verdict verdict-\(kind.rawValue.lowercased())\"><strong>\(kind.rawValue)</strong> \(ChartFrame.escape(reason))</p>\n"
    }
}

extension SummaryDocument {
    /// What ran, in one line: the load model and its terms, how many went where over how many
    /// connections, the scenario, the shard or the shards merged.
    ///
    /// `open model, 2000/s for 3.0 seconds (warm-up 1 s): 6,000 notifications to the embedded
    /// sink (h2c) over 4 connections × 1000 streams, scenario bad-day.json`
    public var whatRan: String {
        if isSink {
            return "the provider under test sent \(grouped(sent)) requests to \(endpoint) over "
                + "\(grouped(connections)) connection\(connections == 1 ? "" : "s")"
        }
        var model: String
        switch self.model {
        case .open: model = "open model, " + (schedule?.description ?? configuration.schedule ?? "a schedule")
        case .closed, .sink:
            model = "closed model" + (configuration.durationSeconds.map { " for " + HTMLReport.seconds($0) } ?? "")
        }
        if warmUpSeconds > 0 { model += " (warm-up \(HTMLReport.seconds(warmUpSeconds)))" }
        var line =
            model
            + ": \(grouped(sent)) notifications in \(String(format: "%.2f", elapsedSeconds)) s to \(configuration.endpoint) over "
            + "\(grouped(connections)) connection\(connections == 1 ? "" : "s") × \(streamsPerConnection) streams"
            + (mergedFrom == nil ? "" : " a shard")
        if let scenario = configuration.scenario {
            line += ", scenario " + (scenario.path.split(separator: "/").last.map(String.init) ?? scenario.path)
        }
        if let shard { line += ", shard \(shard)" }
        if let merged = mergedFrom { line += ", merged from \(merged.count) shards" }
        return line
    }

    /// What a sink's conformance card says of the provider; `nil` for a run's folder.
    enum CardJudgement: Equatable {
        /// No request arrived: no card to pass.
        case notJudged
        case passed
        case failed(violations: Int)
    }

    /// The card as every rendering judges it (the verdict, report.html's card, summary.md).
    var cardJudgement: CardJudgement? {
        guard let card = provider?.card else { return nil }
        if sent == 0 { return .notJudged }
        return card.passed ? .passed : .failed(violations: card.violations)
    }

    /// The card in a word: `passed`, `FAILED (12)`, `not judged`; `—` for a run's folder.
    var cardWord: String {
        switch cardJudgement {
        case nil: "—"
        case .notJudged: "not judged"
        case .passed: "passed"
        case .failed(let violations): "FAILED (\(grouped(violations)))"
        }
    }

    /// Rejected and failed as a share of what was sent (`fanout gate`'s `errors`), with the
    /// counts: `0.40% (24 of 6,000)`.
    var errorRateText: String { errorShareText + " (\(grouped(errors)) of \(grouped(sent)))" }

    /// Rejected and failed.
    var errors: Int { rejected.values.reduce(0, +) + failed.values.reduce(0, +) }

    /// `0.40%`; a share that is not 0 never reads 0 (`percentFigures`).
    var errorShareText: String { percentFigures(sent > 0 ? Double(errors) / Double(sent) : 0) }
}
