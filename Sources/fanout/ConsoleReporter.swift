import FanoutAssembly
import FanoutNotation
import FanoutReport
import FanoutResults
import FanoutRun
import Foundation
import NIOConcurrencyHelpers

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The one place a job's events become words. Standard output gets what a job produced and
/// where to find it (where it listens, its summary, a search's table); standard error what a
/// person should know beside it (the progress line, warnings, a sink's notes).
///
/// The progress line is drawn on standard error when it is a terminal, and nowhere otherwise;
/// any other event clears it first, so no line is written over a half-drawn one.
final class ConsoleReporter: JobReporter {
    /// The reporter every command hands its job.
    static let shared = ConsoleReporter()

    let wantsProgress: Bool
    private let output: StandardStream
    private let error: StandardStream
    /// Whether the progress line is on the terminal now.
    private let progressShown = NIOLockedValueBox(false)
    private let chosenStyle = NIOLockedValueBox(Style.brief)

    /// What a run's written folder prints (`--quiet`, `--json`, `--verbose`; five lines without).
    enum Style: Sendable, Equatable {
        /// `ConsoleSummary`'s five lines.
        case brief
        /// Every line of the run's summary (`RunSummary.text`) and where the files went.
        case verbose
        /// Nothing on standard output, and no progress line: warnings and errors only.
        case quiet
        /// summary.json's document on standard output, every other line on standard error.
        case json
    }

    /// The style a command chose, before its job runs.
    var style: Style {
        get { chosenStyle.withLockedValue { $0 } }
        set { chosenStyle.withLockedValue { $0 = newValue } }
    }

    /// A reporter on `output` and `error` (standard output and error), drawing the progress
    /// line when `progressOnTerminal` (standard error is a terminal).
    init(
        progressOnTerminal: Bool = isatty(2) == 1,
        output: StandardStream = .output,
        error: StandardStream = .error
    ) {
        wantsProgress = progressOnTerminal
        self.output = output
        self.error = error
    }

    /// Which of the two streams an event goes to.
    enum Stream: Equatable {
        case output
        case error
    }

    func report(_ event: JobEvent) {
        let style = self.style
        if case .progress = event, !wantsProgress || style == .quiet { return }
        var (stream, text) = Self.words(for: event)
        if case .progress = event {
            error.write(("\r\u{1B}[K" + text).utf8)
            progressShown.withLockedValue { $0 = true }
            return
        }
        if case .runWritten(let summary, let document, let folder, let files) = event {
            switch style {
            case .brief:
                text = ConsoleSummary(summary: document).lines(folder: folder, files: files).joined(separator: "\n")
            case .verbose:
                // Every line, then what the five lines add: whose latency, the error rate, and
                // the verdict of a run its INVALID lines do not already judge.
                text =
                    ([summary] + ConsoleSummary(summary: document).verboseTail)
                    .joined(separator: "\n") + "\n" + ConsoleSummary.resultsLine(folder: folder, files: files)
            case .quiet: return
            case .json:
                clearProgress()
                output.write(((try? JSONDocument.data(document)) ?? Data()))
                return
            }
        }
        // --quiet: nothing on standard output but where a server listens (a port to reach).
        if style == .quiet, stream == .output {
            guard case .listening = event else { return }
        }
        // Standard output carries only the documents under --json.
        if style == .json { stream = .error }
        clearProgress()
        (stream == .output ? output : error).write((text + "\n").utf8)
    }

    /// Clears the progress line, if it is drawn: before any other line on either stream (an
    /// event's, or an error the command ends with).
    func clearProgress() {
        let shown = progressShown.withLockedValue { shown in
            defer { shown = false }
            return shown
        }
        if shown { error.write("\r\u{1B}[K".utf8) }
    }

    /// Where an event is said, and in what words (a line, or several).
    static func words(for event: JobEvent) -> (Stream, String) {
        switch event {
        case .listening(let server, let address):
            let lead =
                switch server {
                case .sink: "listening on"
                case .admin: "admin on"
                case .metrics: "metrics on"
                case .livePage: "serving on"
                }
            return (.output, "\(lead) \(address)")
        case .progress(let progress, let total):
            return (.error, ProgressLine(progress, total: total).text)
        case .runWritten(let summary, _, let folder, let files):
            return (.output, summary + "\n" + ConsoleSummary.resultsLine(folder: folder, files: files))
        case .unreachable(let failure, let host, let port):
            return (.error, RunSummary.unreachableLine(failure, host: host, port: port))
        case .repeatStarting(let index, let count):
            return (.output, "repeat \(index) of \(count)")
        case .repeatsInterrupted(let finished, let asked, let signal):
            return (.output, "INVALID: interrupted after \(finished) of \(asked) repeats (\(signal.name))")
        case .repeatsSpread(let spread):
            return (.output, spread)
        case .repeatsReportWritten(let report):
            return (.output, "the repeats side by side: \(report)")
        case .startAtPassed(let startAt, let late):
            return (
                .error,
                "warning: --start-at \(TimeNotation.format(startAt)) passed \(DurationNotation.roughly(late)) before the run began: it starts now"
            )
        case .fewPairs(let pairs):
            return (
                .error,
                "warning: --repeat \(pairs): \(pairs) pair\(pairs == 1 ? "" : "s") cannot measure the noise, so no verdict will be given (at least \(PairedComparison.minimumPairs) can; 5 or more narrow the interval)"
            )
        case .costFromFlatOut(let folder):
            return (
                .error,
                "warning: --cost \(folder) is a flat-out run (the closed model): its answers come back together and cost the sender least, and plans from such costs were up to 6 times short of cores (docs/planning.md); give --cost a run at the plan's pace on its wire (--rate, --sink-rtt), or --calibrate"
            )
        case .stepSummaryUnwritable(let path):
            return (.error, "cannot append to $GITHUB_STEP_SUMMARY (\(path))")
        case .sink(let note):
            return (.error, "fanout sink: " + words(for: note))
        case .sinkStopped(let lines):
            return (.output, lines.joined(separator: "\n"))
        case .campaign(let lines, let folder, let files):
            return (
                .output, lines.joined(separator: "\n") + "\n" + ConsoleSummary.resultsLine(folder: folder, files: files)
            )
        case .sinkWritten(let summary, let folder):
            return (.output, summary + "\nwrote \(folder)")
        case .channelsKept(let kept):
            return (
                .error,
                "fanout: \(kept.kept) of \(kept.created) channels were not deleted at \(kept.management) "
                    + "(\(kept.reasons.joined(separator: ", "))\(kept.failure.map { "; \($0)" } ?? "")): they stay until deleted"
            )
        case .pairStarting(let pair, let pairs, let side, let binary):
            return (.output, "pair \(pair) of \(pairs): \(side.uppercased()) (\(binary))")
        case .calibrating(let calibration):
            return (
                .error,
                "calibrating: \(calibration.notifications) notifications to the embedded sink over TLS with token auth, "
                    + "\(calibration.connections) connections × \(calibration.streams) streams, \(calibration.wire)…"
            )
        case .searchStarted:
            return (.output, SearchReport.tableHeader)
        case .searchStep(let step):
            return (.output, SearchReport.tableRow(step))
        case .searchEnded(let report):
            return (.output, report.answerText)
        case .renderFailed(let position, let token, let reason):
            let place = token.map { "token \(position) (\($0.prefix(16))…)" } ?? "token \(position)"
            return (.error, "error: \(place): \(reason)")
        }
    }

    private static func words(for note: SinkNote) -> String {
        switch note {
        case .selfSigned(let directory):
            "TLS with a self-signed certificate; clients trust it with \((directory as NSString).appendingPathComponent("cert.pem"))"
        case .wire(let wire):
            wire
        case .connectionLimit(let connections, let openFiles, let perPeer):
            "at most \(connections.grouped) connections: what the open-file limit, \(openFiles.grouped), leaves with headroom (--max-connections sets it); \(perPeer.grouped) from one address"
        case .authenticationOff:
            "auth is off (no --key-file or --client-ca given): every request is taken as authenticated"
        case .serving(let line):
            line
        case .fcmCredentials(let path, let tokenURI):
            "wrote \(path): an SDK loads it as its credentials and gets its token from \(tokenURI)"
        case .fcmAnyBearer:
            "auth is lenient (--no-auth): any bearer is taken; a request without one is still 401"
        }
    }
}
