import ArgumentParser
import FanoutReport
import Foundation

/// `fanout report DIR`: a run folder's summary printed again, and with `--html` its page drawn
/// again (issue #64; vegeta's `report`, k6's summary export).
struct ReportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "report",
        abstract: "Print a run folder's summary again; with --html, write its report page.",
        discussion: """
            Reads DIR's summary.json (and latency.hlog, for the page's latency) as fanout run, \
            send, merge or sink --output wrote it, prints summary.md's text, and with --html \
            FILE writes report.html as this build draws it: an old folder's figures in today's \
            report.

            Exit status: 0 with the summary printed (and the page written), 1 when FILE cannot \
            be written, 64 when DIR is not a run's folder or its files cannot be read (which \
            file, and what is wrong with it, on standard error).
            """
    )

    @Argument(help: ArgumentHelp("A run's folder (a repeat's, a merge's, a sink's --output).", valueName: "dir"))
    var directory: String

    @Option(name: .long, help: ArgumentHelp("Write its report page here too.", valueName: "file"))
    var html: String?

    func run() throws {
        let saved: SavedRun
        do {
            saved = try SavedRun(directory: directory)
        } catch {
            reportError("\(error)")
            throw ExitCode(64)
        }
        StandardStream.output.write(saved.markdown.utf8)
        guard let html else { return }
        do {
            try Data(saved.html.utf8).write(to: URL(fileURLWithPath: html), options: .atomic)
        } catch {
            reportError("cannot write \(html): \(error.localizedDescription)")
            throw ExitCode(1)
        }
        StandardStream.output.write("wrote \(html)\n".utf8)
    }
}
