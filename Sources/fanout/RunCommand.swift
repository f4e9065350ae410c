import ArgumentParser
import FanoutAPNs
import FanoutClient
import FanoutReport
import FanoutRun
import FanoutTokens
import Foundation
import NIOConcurrencyHelpers

/// `fanout run`: the main job.
struct RunCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Fan the poll notification out to synthetic tokens through a mock APNs in this process.",
        discussion: """
            Starts the sink on a loopback port, sends every token's notification to it, prints \
            throughput, latency percentiles and outcomes, and checks that sender and sink agree on \
            every count and on the digest of what was accepted. Writes summary.json and \
            latency.hgrm to --output (default: a new folder under results/). Ctrl-C stops the run \
            and still writes what was done (exit status 130). A live progress line shows on a \
            terminal. --rate (or --stage) switches to the open model. Exit status: 0 when \
            sender and sink agree and every notification was accepted or rejected by the sink, 3 \
            when they disagree or notifications failed, 4 when the run is invalid (the open \
            model's generator fell behind by more than --max-lag), 1 on an error.
            """
    )

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Synthetic device tokens to send (default: 1,000,000, or as many as the schedule holds).",
            valueName: "n"
        )
    )
    var count: UInt64?

    @Option(name: .long, help: ArgumentHelp("The seed of the tokens.", valueName: "seed"))
    var seed: UInt64 = 1

    @Option(
        name: .long,
        help: ArgumentHelp("Send only shard i of N of the tokens (see fanout merge).", valueName: "i/N")
    )
    var shard: String?

    @Option(name: .long, help: ArgumentHelp("HTTP/2 connections to the sink.", valueName: "c"))
    var connections = 4

    @Option(name: .long, help: ArgumentHelp("Most streams in flight per connection.", valueName: "m"))
    var streams = 1000

    @Option(name: .long, help: ArgumentHelp("Event loops of the sender.", valueName: "n"))
    var threads = 1

    @Option(name: .long, help: ArgumentHelp("Event loops of the sink.", valueName: "n"))
    var sinkThreads = 1

    @OptionGroup var retry: RetryOptions

    @OptionGroup var load: LoadModelOptions

    @OptionGroup var repeating: RepeatOptions

    @Option(name: .long, help: ArgumentHelp("Where summary.json and latency.hgrm go.", valueName: "dir"))
    var output: String?

    func validate() throws {
        if let count, count < 1 { throw ValidationError("--count must be at least 1.") }
        if connections < 1 { throw ValidationError("--connections must be at least 1.") }
        if streams < 1 { throw ValidationError("--streams must be at least 1.") }
        if threads < 1 || sinkThreads < 1 { throw ValidationError("--threads and --sink-threads must be at least 1.") }
        if let shard {
            do { _ = try TokenShard(parsing: shard) } catch { throw ValidationError("--shard: \(error).") }
        }
    }

    func run() throws {
        var options = MainJob.Options()
        options.model = try load.model()
        options.count = count ?? options.model.schedule?.total ?? 1_000_000
        options.seed = seed
        options.shard = try shard.map { try TokenShard(parsing: $0) } ?? .all
        options.connections = connections
        options.streamTimeout = try retry.streamTimeout()
        options.maxAttempts = retry.attempts
        options.streamsPerConnection = streams
        options.senderThreads = threads
        options.sinkThreads = sinkThreads
        let directory = output ?? RunFolder.new()
        let status = try repeating.run(into: directory) { folder in try runOnce(options, writingTo: folder) }
        if status != 0 { throw ExitCode(status) }
    }

    /// One run into `directory`; its exit status.
    private func runOnce(_ options: MainJob.Options, writingTo directory: String) throws -> Int32 {
        let engine = NIOLockedValueBox<LoadEngine?>(nil)
        let summary = try onInterrupt(
            { engine.withLockedValue { $0?.cancel() } },
            during: {
                try MainJob.run(
                    options,
                    started: { started in engine.withLockedValue { $0 = started } },
                    progress: ProgressDisplay.make(total: options.count)
                )
            }
        )
        ProgressDisplay.clear()
        do {
            try summary.write(to: directory)
        } catch {
            throw RunCommandError("cannot write the results to \(directory): \(error.localizedDescription)")
        }
        StandardStream.output.write(
            (summary.text + "\nresults: \(directory)/ (\(RunSummary.files.joined(separator: ", ")))\n").utf8
        )
        if summary.report.cancelled && summary.report.abandoned == nil { return interruptedStatus }
        if !summary.report.invalidReasons.isEmpty { return invalidRunStatus }
        let clean = summary.reconciliation?.agrees == true && summary.report.snapshot.failed.isEmpty
        return clean ? 0 : 3
    }
}

/// A new run folder under results/, named by the time: results/run-20261122-045800.
enum RunFolder {
    static func new() -> String {
        let formatter = DateFormatter()
        formatter.dateFormat = "yyyyMMdd-HHmmss"
        formatter.timeZone = TimeZone(identifier: "UTC")
        var name = "results/run-" + formatter.string(from: Date())
        var suffix = 2
        while FileManager.default.fileExists(atPath: name) {
            name = "results/run-\(formatter.string(from: Date()))-\(suffix)"
            suffix += 1
        }
        return name
    }
}

/// A problem running the job, said in one line.
struct RunCommandError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
