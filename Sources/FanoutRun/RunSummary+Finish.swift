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
