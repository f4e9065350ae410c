import ArgumentParser
import FanoutAPNs
import FanoutFiles
import FanoutPush
import FanoutReport
import FanoutRun
import Foundation

/// `fanout gate`: thresholds on a run's results, for CI.
struct GateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gate",
        abstract: "Check a run's results against thresholds (p99 < 25ms, throughput > baseline - 5%, …).",
        discussion: """
            A threshold is METRIC COMPARISON LIMIT. Metrics: p50 p90 p99 p99.9 p99.99 max lag (ms, \
            or with us/ms/s), throughput (per second, /s optional), errors (rejected + failed: a \
            count, or a share of sent with %), failed, rejected, sent, accepted, harness (ms), \
            rejected.REASON and failed.CAUSE (an APNs reason or FCM error code, or a failure cause: counts, or shares \
            of sent with %), window(LENGTH).P (the worst LENGTH-long window of latency.hlog after \
            the warm-up, like window(10s).p99; P one of p50 p90 p99 p99.9 p99.99 max); on a \
            sink's folder (fanout sink --output) also fanout (the fan-out time, ms), unread \
            (answers accepted that the provider never acknowledged reading before its connection \
            broke), violations and violations.RULE for each rule of the card \
            (\(ProviderRule.allCases.map(\.rawValue).joined(separator: ", ")); the fleet's three on \
            the card only when the sink has devices, the five broadcast ones only when it saw a \
            channel request, quota-ignored, client-errors, duplicate, access-token and bearer on \
            an FCM sink's card); with the sink's device \
            fleet (--device-… or fanout run --sink-device-…) delivered, discarded.expired, \
            discarded.unregistered, discarded.disabled, forgotten (counts, or a share of those \
            received by APNs with %) and delivered.p50, delivered.p90, delivered.p99, delivered.last \
            (from the fan-out's first request until that share of the delivered, or the last, had \
            reached its device; us/ms/s/m); with broadcasts (fanout send --broadcast, a sink's \
            folder) broadcast.accepted (broadcasts accepted), and on a sink's folder \
            broadcast.delivered (device deliveries at once), broadcast.open (channels left open), \
            broadcast.p99 and broadcast.last (ms from a broadcast's acceptance to its subscribers' \
            delivery at once, p99 and the last), broadcast.last.p99 (each broadcast's time to its \
            last subscriber, at once or from storage, p99 over the broadcasts), \
            broadcast.from_storage (stored updates delivered when their device came back) and \
            broadcast.storage.p99 (ms from a broadcast to those deliveries); with the return wave \
            (--return-to, fanout run --sink-return-to) return.offered, return.answered, \
            return.errors (4xx/5xx answers and requests without one: a count, or a share of those \
            offered with %), return.p50, return.p99, return.max (from each request's due time) and \
            return.peak (the busiest second's requests offered, /s). Comparisons: < <= \
            > >= == !=. A limit is a value or baseline [+|- amount], the amount a value or a \
            percentage of the baseline's value. A folder of repeats (fanout run --repeat N) is \
            gated on the medians. Exit status: 0 every threshold holds, 1 a threshold failed or \
            the run was aborted (--abort-on: it fails whatever its thresholds), 2 \
            the run or the baseline is invalid (generator lag, sender and sink disagree, stopped \
            early or interrupted, nothing measured, credentials refused, "valid": false, figures \
            that contradict each other, a key written twice; it never passes), 64 a usage error \
            (bad option, threshold or folder).
            """
    )

    @Argument(help: ArgumentHelp("The run folder (or folder of repeats) to gate.", valueName: "run-dir"))
    var runDirectory: String

    @Option(
        name: .customLong("threshold"),
        help: ArgumentHelp("A threshold, e.g. 'p99 < 25ms' (repeat it).", valueName: "expr")
    )
    var thresholds: [String] = []

    @Option(
        name: .customLong("thresholds"),
        help: ArgumentHelp("A file of thresholds, one a line, # comments.", valueName: "file")
    )
    var thresholdsFile: String?

    @Option(name: .long, help: ArgumentHelp("The run folder 'baseline' refers to.", valueName: "run-dir"))
    var baseline: String?

    @Option(
        name: .long,
        help: ArgumentHelp("Also write the verdicts as JUnit XML here: one test case per threshold.", valueName: "file")
    )
    var junit: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Also write the verdicts as one HTML page here: each measured value against its limit.",
            valueName: "file"
        )
    )
    var report: String?

    func run() throws {
        let gate: Gate
        // Before anything is written: neither file may go over the thresholds it reads, each
        // other, or a run's own files.
        do {
            try OutputFile.check(
                [junit.map { ("--junit", $0) }, report.map { ("--report", $0) }].compactMap { $0 },
                inputs: (thresholdsFile.map { [("--thresholds", $0)] } ?? [])
                    + OutputFile.runFiles(in: runDirectory, option: "the run's")
                    + (baseline.map { OutputFile.runFiles(in: $0, option: "--baseline's") } ?? [])
            )
        } catch {
            reportError("\(error)")
            throw ExitCode(Gate.Status.usage.rawValue)
        }
        do {
            gate = try Gate(run: runDirectory, baseline: baseline, thresholds: thresholds, file: thresholdsFile)
        } catch let error where error.kind == .results(.malformed) {
            // A run's summary.json that cannot be taken at its word (a key written twice, a
            // field missing or mistyped) is refused: it never passes, as an invalid run does not.
            reportError("\(error)")
            throw ExitCode(Gate.Status.invalid.rawValue)
        } catch {
            reportError("\(error)")
            throw ExitCode(Gate.Status.usage.rawValue)
        }
        let outcome = gate.evaluate()
        StandardStream.output.write((outcome.text + "\n").utf8)
        if let junit { try write(outcome.junit(run: runDirectory), to: junit, for: "--junit") }
        if let report { try write(outcome.html(run: runDirectory), to: report, for: "--report") }
        if outcome.status != .passed { throw ExitCode(outcome.status.rawValue) }
    }

    /// Writes `text` to `path`, given as `option`; a file that cannot be written is a usage
    /// error that names it (never 1, which says a threshold failed).
    private func write(_ text: String, to path: String, for option: String) throws {
        do {
            try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        } catch {
            reportError("cannot write \(option) \(path): \(error.reason)")
            throw ExitCode(Gate.Status.usage.rawValue)
        }
    }
}
