import ArgumentParser
import FanoutFiles
import FanoutReport
import FanoutRun

/// `fanout compare`: two runs side by side.
struct CompareCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "compare",
        abstract: "Show two runs (or two folders of repeats) side by side, with differences judged against noise.",
        discussion: """
            Each metric's median, its change, the noise (the larger spread of the two sets' \
            repeats), the 95% interval of the change (repeats on both sides), and one verdict \
            rule: WORSE or better when what is known of the change lies wholly beyond \
            --min-effect on that side — its interval; with repeats but no interval, the change ± \
            the noise; with one run on a side (noise unknown), the change itself — else within \
            noise. A warning names what the two sides differ in (model, schedule, endpoint, \
            tokens, connections, streams, scenario, notifications sent). --report writes the same \
            as a page: each change with its interval against the --min-effect band. The metrics \
            are fanout gate's (lag: the open model's worst generator lag; fanout gate --help lists \
            them). Exit status: 0; with \
            --fail-on-regression, 1 when a compared metric is WORSE and 2 when a side is invalid \
            (interrupted, nothing measured, generator lag, …: no verdict stands); 64 when a \
            folder is not a run, a metric is unknown or --report cannot be written.
            """
    )

    @Argument(help: ArgumentHelp("The baseline run folder.", valueName: "baseline"))
    var baseline: String

    @Argument(help: ArgumentHelp("The run folder to compare with it.", valueName: "current"))
    var current: String

    @Option(
        name: .customLong("metric"),
        help: ArgumentHelp("Compare only this metric (repeat it), e.g. throughput, p99.", valueName: "metric")
    )
    var metrics: [RunMetric] = []

    @Flag(
        name: .long,
        help: "Exit with status 1 when a compared metric is WORSE, 2 when a side is invalid."
    )
    var failOnRegression = false

    @Option(
        name: .long,
        help: ArgumentHelp(
            "The smallest change a verdict names, as a share.",
            valueName: "share"
        )
    )
    var minEffect = Share(RunComparison.defaultMinimumEffect)

    @Option(
        name: .long,
        help: ArgumentHelp("Also write the comparison as one HTML page here.", valueName: "file")
    )
    var report: String?

    func validate() throws {
        guard minEffect.fraction >= 0, minEffect.fraction < 1 else {
            throw ValidationError(
                "--min-effect is a share from 0% to below 100%, like 5%; not \(minEffect.defaultValueDescription)."
            )
        }
    }

    func run() throws {
        let comparison: RunComparison
        do {
            try OutputFile.check(
                report.map { [("--report", $0)] } ?? [],
                inputs: OutputFile.runFiles(in: baseline, option: "the baseline's")
                    + OutputFile.runFiles(in: current, option: "the current run's")
            )
            comparison = RunComparison(
                baseline: try RunSet.load(baseline),
                current: try RunSet.load(current),
                metrics: metrics.isEmpty ? RunComparison.defaultMetrics : metrics,
                minimumEffect: minEffect.fraction
            )
        } catch {
            reportError("\(error)")
            throw ExitCode(64)
        }
        StandardStream.output.write((comparison.text + "\n").utf8)
        if let report {
            do { try ComparisonReport(comparison: comparison).write(to: report) } catch {
                // 64, as `fanout gate` says it: 1 under --fail-on-regression means WORSE.
                reportError("cannot write --report \(report): \(error.reason)")
                throw ExitCode(64)
            }
            StandardStream.output.write("wrote \(report)\n".utf8)
        }
        guard failOnRegression else { return }
        if !comparison.valid {
            StandardStream.output.write("compare: a side is invalid: no verdict stands\n".utf8)
            throw ExitCode(2)
        }
        if comparison.regressed {
            StandardStream.output.write("compare: WORSE\n".utf8)
            throw ExitCode(1)
        }
    }
}
