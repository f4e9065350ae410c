import ArgumentParser
import FanoutTokens

// Options more than one command takes, each a group of its own.

/// `--seed S`: the seed of generated tokens (`fanout run`'s and `--generate`'s).
struct SeedOption: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("The seed of generated tokens.", valueName: "seed"))
    var seed = TokenGenerator.defaultSeed
}

/// `--shard i/N`: only shard i of N of the tokens (shards of one set merge with `fanout merge`).
struct ShardOption: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp("Only shard i of N of the tokens, 1 ≤ i ≤ N (see fanout merge).", valueName: "i/N")
    )
    var shard: String?

    func validate() throws { _ = try parsed() }

    /// The shard, `.all` when none is given.
    func parsed() throws -> TokenShard {
        guard let shard else { return .all }
        do { return try TokenShard(parsing: shard) } catch { throw ValidationError("--shard: \(error).") }
    }
}

/// `--quiet`, `--json`, `--verbose`: what `fanout run` and `fanout send` print when a run's
/// folder is written (`ConsoleReporter.Style`); at most one of them.
struct ConsoleOptions: ParsableArguments {
    @Flag(
        name: .long,
        help: "Print no summary and no progress: warnings and errors only (standard error); the folder holds the run."
    )
    var quiet = false

    @Flag(
        name: .long,
        help: ArgumentHelp(
            "Print each run's summary.json on standard output (every other line goes to standard error).",
            discussion: "Several repeats print a document each, one after another (jq -s reads them as one array)."
        )
    )
    var json = false

    @Flag(
        name: .long,
        help:
            "Print every line of the summary: each reason's count, the open model's pacing, the harness's parts, the devices and the return wave (five lines without it)."
    )
    var verbose = false

    func validate() throws {
        let chosen = [("--quiet", quiet), ("--json", json), ("--verbose", verbose)].filter(\.1).map(\.0)
        guard chosen.count <= 1 else {
            throw ValidationError("\(chosen.joined(separator: " and ")) cannot be given together: choose one")
        }
    }

    var style: ConsoleReporter.Style {
        quiet ? .quiet : json ? .json : verbose ? .verbose : .brief
    }
}
