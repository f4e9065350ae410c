import FanoutAssembly
import FanoutClient
import FanoutEndpoint
import FanoutFiles
import FanoutNotation
import FanoutReport
import FanoutResults
import Foundation

extension RunSummary {
    /// Finishes a run the one way every job does: writes its folder, tells `reporter` the
    /// summary and where the files went — the run's and `alsoWritten`, which the job wrote
    /// there first (a send's `answer-ids.json`) — and an endpoint never reached, and says how
    /// it ended.
    public func finish(
        into directory: String,
        alsoWritten: [String] = [],
        reporter: any JobReporter
    ) throws -> RunStatus {
        do {
            try write(to: directory)
        } catch {
            throw JobError.cannotWrite(.file(directory), error.reason)
        }
        reporter.report(
            .runWritten(summary: text, document: document, folder: directory, files: RunSummary.files + alsoWritten)
        )
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
            throw JobError.cannotWrite(.file("\(directory)/\(RepeatManifest.fileName)"), error.reason)
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
        do { set = try RunSet.load(directory) } catch { throw JobError.input(.command, "\(error)") }
        reporter.report(.repeatsSpread(set.spreadText))
        let report = directory + "/" + RepeatReport.fileName
        do { try RepeatReport(set: set).write() } catch {
            throw JobError.cannotWrite(.file(report), error.reason)
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
