import ArgumentParser
import FanoutAssembly
import FanoutReport
import FanoutResults
import Foundation

/// `fanout report DIR`: a run folder's summary printed again, and with `--html` its page drawn
/// again (issue #64; vegeta's `report`, k6's summary export).
struct ReportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "report",
        abstract: "Print a run folder's summary again; with --html, write its report page.",
        discussion: """
            Reads DIR's summary.json (and latency.hlog, for the page's latency) as fanout run, \
            send, merge or sink --output wrote it, and prints the five lines a run prints (what \
            ran and its rate, the outcomes and error rate, the latency and whose it is, the \
            verdict, the files): a sink's folder prints summary.md's text, as --markdown does \
            for any; --json prints summary.json. With --html FILE it writes report.html as this \
            build draws it: an old folder's figures in today's report. A search's folder (fanout \
            search --output) prints its step table and answer again from search.json; --json \
            prints search.json, --html draws its page.

            Exit status: 0 with the summary printed (and the page written), 1 when FILE cannot \
            be written, 64 when DIR is not a run's folder or its files cannot be read (which \
            file, and what is wrong with it, on standard error).
            """
    )

    @Argument(
        help: ArgumentHelp(
            "A run's folder: a run's, one repeat's (DIR/repeat-1), a merge's, a sink's or a search's --output.",
            valueName: "dir"
        )
    )
    var directory: String

    @Option(name: .long, help: ArgumentHelp("Write its report page here too.", valueName: "file"))
    var html: String?

    @Flag(name: .long, help: "Print summary.md's text instead of the five lines.")
    var markdown = false

    @Flag(name: .long, help: "Print summary.json instead of the five lines.")
    var json = false

    func validate() throws {
        if markdown && json { throw ValidationError("--markdown and --json cannot be given together: choose one") }
    }

    func run() throws {
        if SavedSearch.isSearch(directory) { return try reportSearch() }
        let saved = try read { () throws(ResultsError) in try SavedRun(directory: directory) }
        if json {
            // The file's own bytes: a field this build does not know is kept.
            StandardStream.output.write(
                (try? Data(contentsOf: URL(fileURLWithPath: directory + "/summary.json"))) ?? Data()
            )
        } else if markdown || saved.summary.isSink {
            StandardStream.output.write(saved.markdown.utf8)
        } else {
            // The files the run's own last line named: a send's answer-ids.json too.
            let files = (RunSummary.files + [AnswerIDDocument.fileName]).filter {
                FileManager.default.fileExists(atPath: directory + "/" + $0)
            }
            let lines = ConsoleSummary(summary: saved.summary).lines(folder: directory, files: files)
            StandardStream.output.write((lines.joined(separator: "\n") + "\n").utf8)
        }
        try writePage(saved.html)
    }

    /// A search's folder: its table and answer (search.json's), or the file itself with --json.
    private func reportSearch() throws {
        guard !markdown else {
            reportError(
                "\(directory) is a search's folder: it has no summary.md (drop --markdown; its runs are its step-NN folders)"
            )
            throw ExitCode(64)
        }
        let saved = try read { () throws(ResultsError) in try SavedSearch(directory: directory) }
        StandardStream.output.write(json ? saved.json : Data((saved.report.text + "\n").utf8))
        try writePage(saved.report.html)
    }

    /// A folder read, or its error on standard error and exit status 64 (which file, and what is
    /// wrong with it).
    private func read<Saved>(_ saved: () throws(ResultsError) -> Saved) throws -> Saved {
        do { return try saved() } catch {
            reportError("\(error)")
            throw ExitCode(64)
        }
    }

    /// With --html FILE, writes `page` there and says so; exit status 1 when it cannot.
    private func writePage(_ page: String) throws {
        guard let html else { return }
        do {
            try Data(page.utf8).write(to: URL(fileURLWithPath: html), options: .atomic)
        } catch {
            reportError("cannot write \(html): \(error.localizedDescription)")
            throw ExitCode(1)
        }
        StandardStream.output.write("wrote \(html)\n".utf8)
    }
}
