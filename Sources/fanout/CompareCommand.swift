import ArgumentParser
import FanoutReport

/// `fanout compare`: two runs side by side.
struct CompareCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "compare",
        abstract: "Show two runs (or two folders of repeats) side by side, with differences judged against noise.",
        discussion: """
            Each metric's median, its change, the noise (the larger spread of the two sets' \
            repeats), and whether the change is within noise, better or WORSE beyond it; with one \
            run on a side the noise is unknown. Exit status: 0 (compare informs; fanout gate \
            decides), 64 when a folder is not a run.
            """
    )

    @Argument(help: ArgumentHelp("The baseline run folder.", valueName: "baseline"))
    var baseline: String

    @Argument(help: ArgumentHelp("The run folder to compare with it.", valueName: "current"))
    var current: String

    func run() throws {
        let comparison: RunComparison
        do {
            comparison = RunComparison(baseline: try RunSet.load(baseline), current: try RunSet.load(current))
        } catch {
            printError("fanout compare: \(error)")
            throw ExitCode(64)
        }
        StandardStream.output.write((comparison.text + "\n").utf8)
    }
}
