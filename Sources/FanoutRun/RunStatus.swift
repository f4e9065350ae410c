import FanoutAssembly
import FanoutClient
import FanoutEndpoint
import FanoutFiles
import FanoutNotation
import FanoutReport
import FanoutResults
import Foundation

/// How a run ended, as the exit status `fanout run` and `fanout send` give it.
public enum RunStatus: Int32, Sendable, Comparable {
    /// Every notification was accepted or rejected by the server (and, with the embedded sink,
    /// sender and sink agree on every count and the digest).
    case clean = 0
    /// Notifications failed (no answer after every try), or sender and sink disagree.
    case failed = 3
    /// The numbers cannot be trusted: the open model's generator fell further behind its
    /// schedule than the lag limit, nothing or too little was measured (no answers, none after
    /// the warm-up, fewer than `--min-measured`), every answer refused the credentials, a list
    /// written on the side lost lines. (Sender and sink disagreeing is `failed`; the summary
    /// calls it invalid too.)
    case invalid = 4
    /// Could not reach the endpoint: no connection got as far as an answer (a name not
    /// resolved, refused or timed-out connects, TLS, not HTTP/2, credentials refused).
    case unreachable = 5
    /// Stopped by an `--abort-on` condition; the folder says which, over which window, when.
    case aborted = 6
    /// Stopped by SIGHUP (128 + its number, as shells report it); the folder says so.
    case hungUp = 129
    /// Stopped by SIGINT, Ctrl-C.
    case interrupted = 130
    /// Stopped by SIGTERM, e.g. a CI runner's cancel.
    case terminated = 143

    /// The status of a run stopped by `signal`.
    public init(_ signal: StopSignal) {
        switch signal {
        case .hangUp: self = .hungUp
        case .interrupt: self = .interrupted
        case .terminate: self = .terminated
        }
    }

    /// The status of a finished run.
    public init(_ summary: RunSummary) {
        let report = summary.report
        if let interruption = report.interruption {
            self = RunStatus(interruption.signal)
        } else if report.abort != nil {
            self = .aborted
        } else if report.unreachable != nil {
            self = .unreachable
        } else if report.cancelled && report.abandoned == nil {
            self = .interrupted
        } else if summary.invalidReasons.contains(where: { $0 != .senderAndSinkDisagree }) {
            self = .invalid
        } else if report.snapshot.failed.isEmpty && summary.reconciliation?.agrees != false {
            self = .clean
        } else {
            self = .failed
        }
    }

    public static func < (lhs: RunStatus, rhs: RunStatus) -> Bool { lhs.rawValue < rhs.rawValue }
}

extension RunSummary {
    /// Finishes a run the one way every job does: writes its folder, tells `reporter` the
    /// summary and where the files went (and an endpoint never reached), and says how it ended.
    public func finish(into directory: String, reporter: any JobReporter) throws -> RunStatus {
        do {
            try write(to: directory)
        } catch {
            throw JobError.output("cannot write the results to \(directory): \(error.reason)")
        }
        reporter.report(.runWritten(summary: text, folder: directory, files: RunSummary.files))
        appendToStepSummary(from: directory, reporter: reporter)
        if let failure = report.unreachable {
            reporter.report(.unreachable(failure, host: configuration.endpoint.host, port: configuration.endpoint.port))
        }
        return RunStatus(self)
    }

    /// The one line on standard error for an endpoint never reached: where, what, what to do.
    public static func unreachableLine(_ failure: EndpointFailure, host: String, port: Int) -> String {
        let address = host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        return "error: could not reach \(address): \(failure.phrase) (\(failure.detail)): \(failure.advice)"
    }
}

/// Runs a job `repeats` times into `repeat-1/` … `repeat-N/` under `directory` (or once into
/// `directory` itself), stopping at a stop signal; tells `reporter` each repeat and the medians
/// and spread of several, and returns the worst status; several end with `report.html`
/// (`RepeatReport`) beside them. Several keep `repeats.json` (`RepeatManifest`) up to date:
/// asked, finished, and the signal that cut the set short ("interrupted after 2 of 5 repeats").
public func repeatRuns(
    _ repeats: Int,
    into directory: String,
    signals: StopSignals,
    reporter: any JobReporter,
    _ once: (_ folder: String) throws -> RunStatus
) throws -> RunStatus {
    var status = RunStatus.clean
    var manifest = RepeatManifest(asked: repeats)
    func record() throws {
        guard repeats > 1 else { return }
        do { try manifest.write(in: directory) } catch {
            throw JobError.output("cannot write \(directory)/\(RepeatManifest.fileName): \(error.reason)")
        }
    }
    try record()
    for index in 1...max(1, repeats) {
        // The first always runs: a signal before it stops it at once, and its folder says so.
        if index > 1 && signals.received != nil { break }
        let folder = repeats <= 1 ? directory : "\(directory)/repeat-\(index)"
        if repeats > 1 { reporter.report(.repeatStarting(index: index, of: repeats)) }
        let outcome = try once(folder)
        status = max(status, outcome)
        // A signal that came as the repeat was being written leaves it whole.
        if signals.received != nil && [.hungUp, .interrupted, .terminated].contains(outcome) { break }
        manifest.finished = index
        try record()
    }
    // A signal after the last repeat was written cut nothing short.
    if let signal = signals.received, manifest.finished < max(1, repeats) {
        status = max(status, RunStatus(signal))
        if repeats > 1 {
            manifest.interrupted = signal.name
            try record()
            reporter.report(.repeatsInterrupted(finished: manifest.finished, asked: repeats, signal: signal))
        }
        return status
    }
    if repeats > 1 {
        let set: RunSet
        do { set = try RunSet.load(directory) } catch { throw JobError.input("\(error)") }
        reporter.report(.repeatsSpread(set.spreadText))
        let report = directory + "/" + RepeatReport.fileName
        do { try RepeatReport(set: set).write() } catch {
            throw JobError.output("cannot write \(report): \(error.reason)")
        }
        reporter.report(.repeatsReportWritten(path: report))
    }
    return status
}

/// On GitHub Actions (`$GITHUB_STEP_SUMMARY` names a file), appends the run's `summary.md` to
/// the job's summary page; a file that cannot be written is told `reporter`, not fatal.
func appendToStepSummary(
    from directory: String,
    reporter: any JobReporter,
    environment: [String: String] = ProcessInfo.processInfo.environment
) {
    guard let path = environment["GITHUB_STEP_SUMMARY"], !path.isEmpty,
        let markdown = FileManager.default.contents(atPath: directory + "/summary.md")
    else { return }
    guard let handle = FileHandle(forWritingAtPath: path) ?? create(path) else {
        reporter.report(.stepSummaryUnwritable(path: path))
        return
    }
    defer { try? handle.close() }
    _ = try? handle.seekToEnd()
    try? handle.write(contentsOf: markdown + Data("\n".utf8))

    func create(_ path: String) -> FileHandle? {
        FileManager.default.createFile(atPath: path, contents: nil) ? FileHandle(forWritingAtPath: path) : nil
    }
}

/// Tells `reporter` when `--start-at`'s time has passed as the run begins: it starts at once,
/// and `fanout merge` sees how late from its first send.
func warnIfLate(_ startAt: Date?, reporter: any JobReporter, now: Date = Date()) {
    guard let startAt, startAt < now else { return }
    reporter.report(
        .startAtPassed(startAt, late: .milliseconds(Int64((now.timeIntervalSince(startAt) * 1000).rounded())))
    )
}
