import FanoutReport
import FanoutResults

/// A job's runs into `directory`, as a loop the job writes out: once into `directory` itself,
/// or `repeat-1/` … `repeat-N/` under it, the set stopping at a stop signal.
///
///     var repeats = try RepeatSet(asked, into: directory, signals: signals, reporter: reporter)
///     while let folder = repeats.next() {
///         try repeats.ended(runOnce(into: folder))
///     }
///     return try repeats.finish()
///
/// Several keep `repeats.json` (`RepeatManifest`) up to date — asked, finished, and the signal
/// that cut the set short ("interrupted after 2 of 5 repeats") — are told `reporter` one by
/// one, and end with their medians and spread, and `report.html` (`RepeatReport`) beside them.
/// The set's status is the worst of its runs'.
struct RepeatSet {
    let directory: String
    private let signals: StopSignals
    private let reporter: any JobReporter
    private var manifest: RepeatManifest
    private var status = RunStatus.clean
    /// The repeat under way or last ended (1-based; 0 before the first).
    private var index = 0
    /// A stop signal came as a repeat was being written: it is whole, and the set ends there.
    private var cut = false

    /// `asked` runs (`--repeat`; below 2 is one run into `directory`); several write their
    /// manifest at once, so that a set stopped before its first repeat ends says so.
    init(_ asked: Int, into directory: String, signals: StopSignals, reporter: any JobReporter) throws(JobError) {
        self.directory = directory
        self.signals = signals
        self.reporter = reporter
        manifest = RepeatManifest(asked: asked)
        try record()
    }

    private var isSet: Bool { manifest.asked > 1 }

    /// The next run's folder, or `nil` when the set is done: every run made, or a stop signal
    /// received. The first always runs: a signal before it stops it at once, and its folder
    /// says so.
    mutating func next() -> String? {
        guard !cut, index < max(1, manifest.asked), index == 0 || signals.received == nil else { return nil }
        index += 1
        guard isSet else { return directory }
        reporter.report(.repeatStarting(index: index, of: manifest.asked))
        return "\(directory)/repeat-\(index)"
    }

    /// The run `next()` gave ended (its folder written) with `outcome`.
    mutating func ended(_ outcome: RunStatus) throws(JobError) {
        status = max(status, outcome)
        // A signal that came as the repeat was being written leaves it whole.
        if signals.received != nil && [.hungUp, .interrupted, .terminated].contains(outcome) {
            cut = true
            return
        }
        manifest.finished = index
        try record()
    }

    /// Ends the set: a signal that cut it short is recorded and said; several runs that all
    /// ran are summed up (spread, `report.html`). Returns the set's status.
    mutating func finish() throws(JobError) -> RunStatus {
        // A signal after the last repeat was written cut nothing short.
        if let signal = signals.received, manifest.finished < max(1, manifest.asked) {
            status = max(status, RunStatus(signal))
            if isSet {
                manifest.interrupted = signal.name
                try record()
                reporter.report(
                    .repeatsInterrupted(finished: manifest.finished, asked: manifest.asked, signal: signal)
                )
            }
            return status
        }
        guard isSet else { return status }
        let set: RunSet
        do { set = try RunSet.load(directory) } catch { throw JobError.input(.command, "\(error)") }
        reporter.report(.repeatsSpread(set.spreadText))
        let report = directory + "/" + RepeatReport.fileName
        do { try RepeatReport(set: set).write() } catch {
            throw JobError.cannotWrite(.file(report), error.reason)
        }
        reporter.report(.repeatsReportWritten(path: report))
        return status
    }

    private func record() throws(JobError) {
        guard isSet else { return }
        do { try manifest.write(in: directory) } catch {
            throw JobError.cannotWrite(.file("\(directory)/\(RepeatManifest.fileName)"), error.reason)
        }
    }
}
