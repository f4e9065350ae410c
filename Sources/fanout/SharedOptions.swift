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
