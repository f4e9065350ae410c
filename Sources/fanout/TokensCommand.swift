import ArgumentParser
import FanoutAPNs
import FanoutClient
import FanoutTokens

/// `fanout tokens`: device-token sets.
struct TokensCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tokens",
        abstract: "Generate, convert and check device-token sets.",
        subcommands: [Generate.self, Convert.self, Count.self]
    )
}

extension TokenFileFormat: ExpressibleByArgument {}

/// Options that say which tokens to read, shared by every command that reads a set.
struct TokenInputOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("A token file, text or binary; - for standard input.", valueName: "file"))
    var tokens: String?

    @Option(name: .long, help: ArgumentHelp("Generate this many tokens instead of reading a file.", valueName: "n"))
    var generate: UInt64?

    @Option(name: .long, help: ArgumentHelp("The seed of generated tokens.", valueName: "seed"))
    var seed: UInt64 = 1

    @Option(name: .long, help: ArgumentHelp("Bytes per generated token.", valueName: "bytes"))
    var length: Int = 32

    @Option(name: .long, help: ArgumentHelp("Read only shard i of N (1 ≤ i ≤ N).", valueName: "i/N"))
    var shard: String?

    @Flag(name: .long, help: "Skip lines that are not valid tokens instead of stopping at the first.")
    var skipInvalid = false

    @Option(name: .long, help: ArgumentHelp("With --skip-invalid, write skipped lines here.", valueName: "file"))
    var rejects: String?

    func validate() throws {
        if (tokens == nil) == (generate == nil) {
            throw ValidationError("Give either --tokens FILE or --generate N.")
        }
        if let shard {
            do { _ = try TokenShard(parsing: shard) } catch { throw ValidationError("--shard: \(error).") }
        }
        if rejects != nil && !skipInvalid { throw ValidationError("--rejects goes with --skip-invalid.") }
        if length < 1 { throw ValidationError("--length must be at least 1 byte.") }
    }

    var source: TokenSource {
        if let generate { return .generated(TokenGenerator(count: generate, seed: seed, length: length)) }
        return tokens == "-" ? .standardInput : .file(tokens!)
    }

    /// Where the tokens come from, for the results.
    var sourceDescription: String {
        var text = generate.map { "generated: \($0), seed \(seed)" } ?? "file: \(tokens ?? "-")"
        if let shard { text += ", shard \(shard)" }
        return text
    }

    /// How many notifications a run over these tokens makes, when that is known ahead: the
    /// generated count, or fewer if the schedule ends first.
    func expectedCount(schedule: ArrivalSchedule?) -> UInt64? {
        let tokens = shard == nil ? generate : nil
        guard let planned = schedule?.total else { return tokens }
        return tokens.map { min($0, planned) } ?? planned
    }

    var readerConfiguration: TokenReaderConfiguration {
        TokenReaderConfiguration(
            shard: shard.map { try! TokenShard(parsing: $0) } ?? .all,
            invalidTokens: skipInvalid ? .skip : .fail,
            rejectsPath: rejects
        )
    }
}

extension TokensCommand {
    /// `fanout tokens generate`.
    struct Generate: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write a synthetic token set; the same seed gives the same file, byte for byte."
        )

        @Option(name: .long, help: ArgumentHelp("How many tokens.", valueName: "n"))
        var count: UInt64

        @Option(name: .long, help: ArgumentHelp("The seed.", valueName: "seed"))
        var seed: UInt64 = 1

        @Option(name: .long, help: ArgumentHelp("The file to write.", valueName: "file"))
        var output: String

        @Option(name: .long, help: ArgumentHelp("text (one hex token per line) or binary.", valueName: "format"))
        var format: TokenFileFormat = .text

        @Option(name: .long, help: ArgumentHelp("Bytes per token.", valueName: "bytes"))
        var length: Int = 32

        func validate() throws {
            if length < 1 || length > 32767 { throw ValidationError("--length must be from 1 to 32767 bytes.") }
        }

        func run() throws {
            let generator = TokenGenerator(count: count, seed: seed, length: length)
            do {
                let writer = try TokenSetWriter(path: output, format: format)
                let raw = UnsafeMutableRawBufferPointer.allocate(byteCount: length, alignment: 8)
                defer { raw.deallocate() }
                for index in 0..<count {
                    generator.writeToken(index, to: raw.baseAddress!)
                    try writer.append(raw: UnsafeRawBufferPointer(raw), line: Int(index) + 1)
                }
                try writer.finish()
            } catch {
                printError("error: \(error)")
                throw ExitCode.failure
            }
        }
    }

    /// `fanout tokens convert`.
    struct Convert: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Convert a token set from text to binary (or back); binary has no room for fields."
        )

        @OptionGroup var input: TokenInputOptions

        @Option(name: .long, help: ArgumentHelp("The file to write.", valueName: "file"))
        var output: String

        @Option(name: .long, help: ArgumentHelp("text or binary.", valueName: "format"))
        var format: TokenFileFormat = .binary

        func run() throws {
            do {
                let stream = try TokenStream(input.source, configuration: input.readerConfiguration)
                let writer = try TokenSetWriter(path: output, format: format)
                var failure: TokenSetError?
                while let batch = stream.next() {
                    for index in 0..<batch.count where failure == nil {
                        let token = batch[index]
                        do {
                            try writer.append(hex: token.token, fields: token.fields, line: token.line)
                        } catch {
                            // Name the line in the input, not in the file being written.
                            failure = TokenSetError(error.message, source: input.source.name, line: token.line)
                        }
                    }
                    stream.recycle(batch)
                    if failure != nil { stream.cancel() }
                }
                if let failure { throw failure }
                if let error = stream.waitForSummary(timeout: .seconds(10))?.error { throw error }
                try writer.finish()
            } catch {
                printError("error: \(error)")
                throw ExitCode.failure
            }
        }
    }

    /// `fanout tokens count`.
    struct Count: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Read a token set as a run would, check every token, and print what it holds."
        )

        @OptionGroup var input: TokenInputOptions

        func run() throws {
            let summary: TokenStreamSummary
            do {
                let stream = try TokenStream(input.source, configuration: input.readerConfiguration)
                while let batch = stream.next() { stream.recycle(batch) }
                guard let finished = stream.waitForSummary(timeout: .seconds(10)) else {
                    printError("error: the reader did not finish")
                    throw ExitCode.failure
                }
                summary = finished
            } catch let error as TokenSetError {
                printError("error: \(error)")
                throw ExitCode.failure
            }
            if let error = summary.error {
                printError("error: \(error)")
                throw ExitCode.failure
            }
            var report = "tokens: \(summary.tokens)"
            if let shard = input.shard { report += " (shard \(shard) of \(summary.validTokens))" }
            report += "\nlines: \(summary.lines)\nskipped: \(summary.skipped)"
            if let rejects = input.rejects, summary.skipped > 0 { report += " (written to \(rejects))" }
            StandardStream.output.write((report + "\n").utf8)
        }
    }
}
