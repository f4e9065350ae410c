import ArgumentParser
import FanoutAPNs
import FanoutClient
import FanoutMachine
import FanoutRun
import FanoutTokens
import Foundation

/// `fanout tokens`: device-token sets.
struct TokensCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tokens",
        abstract: "Generate, convert and check device-token sets.",
        subcommands: [Generate.self, Convert.self, Count.self]
    )

    /// What a written set's line adds when `path` held a file already (a set written over
    /// another said nothing of it, newcomer pass 4): its size, so a person sees what went.
    /// Only a regular file is named (a link is followed; a device such as /dev/stdout is not a
    /// file replaced).
    static func replacing(_ path: String) -> String {
        let target = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: target),
            attributes[.type] as? FileAttributeType == .typeRegular, let size = attributes[.size] as? UInt64
        else { return "" }
        return " (replacing the \(size.grouped)-byte file there)"
    }
}

/// The count notation's value, by another name where `TokensCommand.Count` (the subcommand) hides it.
typealias CountValue = Count

/// Options that say which tokens to read, shared by every command that reads a set.
struct TokenInputOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("A token file, text or binary; - for standard input.", valueName: "file"))
    var tokens: String?

    @Option(
        name: .long,
        parsing: .unconditional,
        help: ArgumentHelp("Generate this many tokens instead of reading a file: 20000, 1M.", valueName: "n"),
        transform: Count.reading
    )
    var generate: Count?

    @OptionGroup var seeding: SeedOption

    @Option(name: .long, help: ArgumentHelp("Bytes per generated token.", valueName: "bytes"))
    var length = TokenGenerator.defaultLength

    @OptionGroup var sharding: ShardOption

    @Flag(name: .long, help: "Skip lines that are not valid tokens instead of stopping at the first.")
    var skipInvalid = false

    @Option(name: .long, help: ArgumentHelp("With --skip-invalid, write skipped lines here.", valueName: "file"))
    var rejects: String?

    func validate() throws {
        if tokens != nil && generate != nil {
            throw ValidationError("Give either --tokens FILE or --generate N.")
        }
        if rejects != nil && !skipInvalid { throw ValidationError("--rejects goes with --skip-invalid.") }
        if length < 1 { throw ValidationError("--length must be at least 1 byte.") }
        if let generate { try MachineLimits.tokenCount("--generate").validate(generate.value) }
    }

    /// One of --tokens and --generate is given (each command that reads a set asks: `fanout
    /// send --broadcast` reads none).
    func requireSet() throws {
        if tokens == nil && generate == nil { throw ValidationError("Give either --tokens FILE or --generate N.") }
    }

    var source: TokenSource {
        if let generate { return .generated(TokenGenerator(count: generate.value, seed: seeding.seed, length: length)) }
        return tokens == "-" ? .standardInput : .file(tokens!)
    }

    /// The tokens as a run reads them.
    var input: TokenSet { TokenSet(source, reader: readerConfiguration) }

    var readerConfiguration: TokenReaderConfiguration {
        TokenReaderConfiguration(
            shard: (try? sharding.parsed()) ?? .all,
            invalidTokens: skipInvalid ? .skip : .fail,
            rejectsPath: rejects
        )
    }
}

extension TokensCommand {
    /// `fanout tokens generate`.
    struct Generate: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write a synthetic token set; the same seed gives the same file, byte for byte.",
            discussion: "Exit status: 0 with the file written, 1 when it cannot be, 64 on a usage error."
        )

        @Option(
            name: .long,
            parsing: .unconditional,
            help: ArgumentHelp("How many tokens: 2000, 1M.", valueName: "n"),
            transform: CountValue.reading
        )
        var count: CountValue

        @Option(name: .long, help: ArgumentHelp("The seed.", valueName: "seed"))
        var seed = TokenGenerator.defaultSeed

        @Option(name: .long, help: ArgumentHelp("The file to write.", valueName: "file"))
        var output: String

        @Option(name: .long, help: ArgumentHelp("text (one hex token per line) or binary.", valueName: "format"))
        var format: TokenFileFormat = .text

        @Option(name: .long, help: ArgumentHelp("Bytes per token.", valueName: "bytes"))
        var length = TokenGenerator.defaultLength

        func validate() throws {
            if length < 1 || length > 32767 { throw ValidationError("--length must be from 1 to 32767 bytes.") }
            try MachineLimits.tokenCount("--count").validate(count.value)
        }

        func run() throws {
            let replacing = TokensCommand.replacing(output)
            try reportingErrors { () throws(TokenSetError) in
                try TokenSetWriter(path: output, format: format).write(
                    TokenGenerator(count: count.value, seed: seed, length: length)
                )
            }
            // Every command that writes a file says what it wrote, and what it replaced.
            StandardStream.output.write(
                "\(output): \(count.value.grouped) tokens of \(length) bytes, \(format.rawValue), seed \(seed)\(replacing)\n"
                    .utf8
            )
        }
    }

    /// `fanout tokens convert`.
    struct Convert: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Convert a token set from text to binary (or back); binary has no room for fields.",
            // ArgumentParser's line would show both sources as optional: one is required.
            usage: "fanout tokens convert (--tokens <file> | --generate <n>) --output <file> [<options>]",
            discussion: """
                Exit status: 0 with the file written, 1 when a token is bad (its file, line and \
                what is wrong on standard error) or a file cannot be read or written, 64 on a \
                usage error.
                """
        )

        @OptionGroup var input: TokenInputOptions

        func validate() throws { try input.requireSet() }

        @Option(name: .long, help: ArgumentHelp("The file to write.", valueName: "file"))
        var output: String

        @Option(name: .long, help: ArgumentHelp("text or binary.", valueName: "format"))
        var format: TokenFileFormat = .binary

        func run() throws {
            let replacing = TokensCommand.replacing(output)
            let summary = try reportingErrors { () throws(TokenSetError) in
                try TokenStream(input.source, configuration: input.readerConfiguration)
                    .copy(to: TokenSetWriter(path: output, format: format), sourceName: input.source.name)
            }
            // As `tokens generate` says what it wrote (convert said nothing, newcomer pass).
            let written = summary.tokens
            StandardStream.output.write(
                "\(output): \(written.formatted()) tokens, \(format.rawValue), from \(input.source.name)\(replacing)\n"
                    .utf8
            )
        }
    }

    /// `fanout tokens count`.
    struct Count: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Read a token set as a run would, check every token, and print what it holds.",
            // ArgumentParser's line would show both sources as optional: one is required.
            usage: "fanout tokens count (--tokens <file> | --generate <n>) [<options>]",
            discussion: """
                Exit status: 0 when every token is good (or --skip-invalid skipped the bad ones), 1 \
                when one is bad (its file, line and what is wrong on standard error) or the file \
                cannot be read, 64 on a usage error.
                """
        )

        @OptionGroup var input: TokenInputOptions

        func validate() throws { try input.requireSet() }

        func run() throws {
            let summary = try reportingErrors { () throws(TokenSetError) in
                try TokenStream(input.source, configuration: input.readerConfiguration).count()
            }
            var report = "tokens: \(summary.tokens)"
            if let shard = input.sharding.shard { report += " (shard \(shard) of \(summary.validTokens))" }
            // A text set's lines, a binary set's records, a generator's tokens (it said "lines" of all).
            report += "\n\(summary.unit.rawValue): \(summary.lines)\nskipped: \(summary.skipped)"
            if let rejects = input.rejects, summary.skipped > 0 { report += " (written to \(rejects))" }
            StandardStream.output.write((report + "\n").utf8)
        }
    }
}

/// Runs `body`; a token set's error is printed as `error: …` and ends the command with status 1.
private func reportingErrors<Result>(_ body: () throws(TokenSetError) -> Result) throws -> Result {
    do {
        return try body()
    } catch {
        reportError("\(error)")
        throw ExitCode.failure
    }
}
