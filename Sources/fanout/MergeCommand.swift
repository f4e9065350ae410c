import ArgumentParser
import FanoutFiles
import FanoutReport
import FanoutRun

/// `fanout merge`: a sharded run's folders as one, and whether they make one result.
struct MergeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "merge",
        abstract: "Combine the run folders of a run's shards (--shard i/N) into one run folder.",
        discussion: """
            Histograms add bucket by bucket (second s of each shard into second s), counts sum, \
            digests combine (a single run over the same tokens has the same digest), and the \
            merge is reconciled when every shard is. The merge is refused — written, marked \
            invalid, the reasons in summary.json's invalid_reasons, so that fanout gate on it \
            exits 2 — when a shard is missing (N comes from the shards' own i/N), did not \
            finish (a folder without summary.json, or a run stopped early), is invalid, was \
            configured unlike the others, or when the shards' first sends lie further apart \
            than --max-skew. --allow-partial merges what is there and marks it partial instead \
            of refusing it for missing or unfinished shards. --output must not be one of the \
            shards, nor a folder another run is writing. Exit status: 0, 2 refused, 64 when a \
            folder does not exist or its files cannot be read or disagree, or --output is one of \
            the shards or in use.
            """
    )

    @Argument(help: ArgumentHelp("The shards' run folders.", valueName: "run-dir"))
    var shards: [String]

    @Option(name: .long, help: ArgumentHelp("Where the merged run folder goes.", valueName: "dir"))
    var output: String

    @Option(
        name: .long,
        help: ArgumentHelp(
            "The most the shards' first sends may lie apart.",
            valueName: "duration"
        )
    )
    var maxSkew = RunMerge.Rules().maxSkew

    @Flag(name: .long, help: "Merge what is there when shards are missing or did not finish, marked partial.")
    var allowPartial = false

    var rules: RunMerge.Rules {
        var rules = RunMerge.Rules()
        rules.allowPartial = allowPartial
        rules.maxSkew = maxSkew
        return rules
    }

    func run() throws {
        let merge: RunMerge
        do {
            merge = try RunMerge(directories: shards, rules: rules)
        } catch {
            reportError("\(error)")
            throw ExitCode(64)
        }
        let folder: RunOutput
        do {
            folder = try RunOutput(preparing: output, inputs: shards, earlierResults: .replace)
        } catch {
            reportError("\(error)")
            throw ExitCode(64)
        }
        defer { withExtendedLifetime(folder) {} }
        do {
            try merge.write(to: output)
        } catch {
            reportError("cannot write \(output): \(error.reason)")
            throw ExitCode(1)
        }
        StandardStream.output.write(
            (merge.text + "\n" + ConsoleSummary.resultsLine(folder: output, files: RunFiles.names) + "\n").utf8
        )
        if !merge.isValid { throw ExitCode(2) }
    }
}
