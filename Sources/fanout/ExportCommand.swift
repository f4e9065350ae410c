import ArgumentParser
import FanoutReport
import FanoutRun
import Foundation

/// `fanout export`: a run's figures in the JSON that CI benchmark trackers ingest.
struct ExportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Write a run's figures as Bencher Metric Format or github-action-benchmark JSON.",
        discussion: """
            Reads a run folder, or a folder of repeats (medians; the lowest and highest become \
            Bencher's lower_value and upper_value, and github-action-benchmark's range). \
            Throughput, p50, p90, p99, p99.9, max and errors. bencher is for `bencher run \
            --adapter json`; benchmark-action-bigger (throughput) and benchmark-action-smaller \
            (latencies, errors) for github-action-benchmark's customBiggerIsBetter and \
            customSmallerIsBetter tools. An invalid run (interrupted, nothing measured, \
            generator lag, …) is not exported: its reasons go to standard error.

            Exit status: 0 with the figures written, 1 when --output cannot be written, 2 when \
            the run is invalid (as `fanout gate`'s), 64 when the folder is not a run.
            """
    )

    @Argument(help: ArgumentHelp("The run folder (or folder of repeats).", valueName: "run-dir"))
    var runDirectory: String

    @Option(
        name: .long,
        help: ArgumentHelp(
            "bencher, benchmark-action-bigger or benchmark-action-smaller.",
            valueName: "format"
        )
    )
    var format: CIExport.Format

    @Option(name: .long, help: ArgumentHelp("The benchmark's name in the file.", valueName: "name"))
    var name = "fanout"

    @Option(name: .long, help: ArgumentHelp("Write here instead of standard output.", valueName: "file"))
    var output: String?

    func run() throws {
        let run: RunSet
        do {
            run = try RunSet.load(runDirectory)
        } catch {
            reportError("\(error)")
            throw ExitCode(Gate.Status.usage.rawValue)
        }
        // An invalid run's figures are not published: a dashboard keeps a number, not its reason.
        guard run.valid else {
            for reason in run.invalidReasons { reportError("the run is invalid: \(reason)") }
            reportError("nothing exported (an invalid run's figures stand for nothing)")
            throw ExitCode(Gate.Status.invalid.rawValue)
        }
        let data = try CIExport(run: run, name: name).data(format)
        guard let output else {
            StandardStream.output.write(data + Data("\n".utf8))
            return
        }
        do {
            try data.write(to: URL(fileURLWithPath: output))
        } catch {
            reportError("cannot write \(output): \(error.localizedDescription)")
            throw ExitCode(1)
        }
    }
}
