import ArgumentParser
import FanoutReport
import FanoutRun

/// `fanout compare`: two runs side by side.
struct CompareCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "compare",
        abstract: "Show two runs (or two folders of repeats) side by side, with differences judged against noise.",
        discussion: """
            Each metric's median, its change, the noise (the larger spread of the two sets' \
            repeats), and whether the change is within noise, better or WORSE beyond it; with one \
            run on a side the noise is unknown. Exit status: 0; with --fail-on-regression, 1 when \
            a compared metric is WORSE beyond noise; 64 when a folder is not a run or a metric is \
            unknown.
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

    @Flag(name: .long, help: "Exit with status 1 when a compared metric is worse beyond the noise.")
    var failOnRegression = false

    func run() throws {
        let comparison: RunComparison
        do {
            comparison = RunComparison(
                baseline: try RunSet.load(baseline),
                current: try RunSet.load(current),
                metrics: metrics.isEmpty ? RunComparison.defaultMetrics : metrics
            )
        } catch {
            printError("fanout compare: \(error)")
            throw ExitCode(64)
        }
        StandardStream.output.write((comparison.text + "\n").utf8)
        if failOnRegression && comparison.regressed {
            StandardStream.output.write("compare: WORSE beyond noise\n".utf8)
            throw ExitCode(1)
        }
    }
}
