import ArgumentParser
import FanoutReport
import FanoutRun
import FanoutSettings

/// `fanout merge`: shards' run folders as one.
struct MergeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "merge",
        abstract: "Combine the run folders of a run's shards (--shard i/N) into one run folder.",
        discussion: """
            Histograms add bucket by bucket (second s of each shard into second s), counts sum, \
            digests combine (a single run over the same tokens has the same digest), and the \
            merge is reconciled when every shard is. Exit status: 0, 3 when a shard was not \
            reconciled or is invalid, 64 when a folder cannot be read or the shards do not belong \
            together.
            """
    )

    @Argument(help: ArgumentHelp("The shards' run folders.", valueName: "run-dir"))
    var shards: [String]

    @Option(name: .long, help: ArgumentHelp("Where the merged run folder goes.", valueName: "dir"))
    var output: String

    func run() throws {
        let merge: RunMerge
        do {
            merge = try RunMerge(directories: shards)
        } catch {
            printError("fanout merge: \(error)")
            throw ExitCode(64)
        }
        do {
            try merge.write(to: output)
        } catch {
            printError("fanout merge: cannot write \(output): \(error.reason)")
            throw ExitCode(1)
        }
        StandardStream.output.write((merge.text + "\nresults: \(output)/\n").utf8)
        let json = merge.json
        if json["reconciled"] as? Bool == false || json["valid"] as? Bool == false { throw ExitCode(3) }
    }
}
