import ArgumentParser
import FanoutMachine
import FanoutReport
import FanoutRun

/// `fanout ab`: two builds side by side, alternately, judged pair by pair.
struct ABCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ab",
        abstract: "Run two fanout builds alternately with the same options and compare them pair by pair.",
        discussion: """
            Runs BASELINE and CANDIDATE, --repeat pairs (A B, B A, A B …: each pair's order \
            swapped), each with the options after \
            `--` (`run …` or `send …`) into --output/pair-N/a and …/b. Each metric's ratio B ÷ A \
            is taken pair by pair; the table shows the medians, the median ratio and its 95% \
            interval (bootstrap over the pairs), and a verdict: WORSE or BETTER when the whole \
            interval lies beyond 1 ± --min-effect, else within noise; under 3 pairs, noise \
            unknown (no verdict: one or two pairs cannot measure the noise). Pairs cancel what the \
            machine did meanwhile. \
            Exit status (package-benchmark's): 0 within noise or noise unknown, 2 a metric WORSE, 4 BETTER and \
            none worse, 1 a run that did not end cleanly, 64 a usage error; 130, 143 or 129 when \
            SIGINT, SIGTERM or SIGHUP stopped it (passed on to the run going on, which writes its \
            folder marked interrupted). Each run is in a process group of its own, which \
            --run-timeout stops whole (a wrapper script and what it started).
            """
    )

    @Argument(help: ArgumentHelp("The baseline build of fanout (A).", valueName: "baseline"))
    var baseline: String

    @Argument(help: ArgumentHelp("The candidate build of fanout (B).", valueName: "candidate"))
    var candidate: String

    @Option(
        name: .customLong("repeat"),
        parsing: .unconditional,
        help: ArgumentHelp("Pairs to run.", valueName: "n")
    )
    var pairs = ABJob.defaultPairs

    @Option(
        name: .customLong("metric"),
        help: ArgumentHelp(
            "Compare this metric (repeat it; default: throughput, p50, p99, errors).",
            valueName: "metric"
        )
    )
    var metrics: [RunMetric] = []

    @Option(
        name: .long,
        help: ArgumentHelp(
            "How far beyond 1 a ratio's interval must lie for a verdict (N% or 0.N).",
            valueName: "share"
        )
    )
    var minEffect = Share(ABJob.defaultMinimumEffect)

    @Option(name: .long, help: ArgumentHelp("The longest one run may take.", valueName: "duration"))
    var runTimeout = ABJob.defaultRunTimeout

    @Option(name: .long, help: ArgumentHelp("Where the pairs' run folders and ab.txt go.", valueName: "dir"))
    var output: String?

    @Argument(
        parsing: .postTerminator,
        help: ArgumentHelp("What both builds run: run … or send … (without --output).", valueName: "run-options")
    )
    var runOptions: [String] = []

    func job(output: String) throws -> ABJob {
        try MachineLimits.repeats("--repeat").validate(pairs)
        guard let command = runOptions.first, ["run", "send"].contains(command) else {
            throw ValidationError("After -- comes what both builds run: run … or send ….")
        }
        // Written `--repeat 2` or `--repeat=2` (issue 61, review: the second form got through).
        let given = { (name: String) in runOptions.contains { $0 == name || $0.hasPrefix(name + "=") } }
        if given("--output") || given("--repeat") {
            throw ValidationError(
                "ab gives each run its --output and runs the pairs itself: leave out --output and --repeat."
            )
        }
        // Standard input is one stream: the first run would read it all and each other none
        // (issue 61, review: 300 piped tokens went to no run's count).
        let readsStandardInput = runOptions.indices.contains { index in
            runOptions[index] == "--tokens=-"
                || (runOptions[index] == "--tokens" && runOptions.dropFirst(index + 1).first == "-")
        }
        if readsStandardInput {
            throw ValidationError(
                "--tokens - reads standard input, which only the first of ab's runs would see: give a token file."
            )
        }
        var job = ABJob(baseline: baseline, candidate: candidate, arguments: runOptions, output: output)
        job.pairs = pairs
        if !metrics.isEmpty { job.metrics = metrics }
        job.runTimeout = try runTimeout.positive("--run-timeout")
        guard minEffect.fraction >= 0, minEffect.fraction < 1 else {
            throw ValidationError(
                "--min-effect is a share from 0% to below 100%, like 5%; not \(minEffect.defaultValueDescription)."
            )
        }
        job.minimumEffect = minEffect.fraction
        return job
    }

    func run() throws {
        let output = output ?? RunFolder.new(kind: "ab")
        var job = try job(output: output)
        job.reporter = ConsoleReporter.shared
        let comparison: PairedComparison
        do {
            comparison = try StopSignals.watch { signals in
                job.stopSignals = signals
                return try job.run()
            }
        } catch let stopped as ABJob.Stopped {
            printError(stopped.line)
            throw ExitCode(stopped.signal.exitStatus)
        }
        StandardStream.output.write((comparison.text + "\nresults: \(output)/ (ab.txt, pair-N/a, pair-N/b)\n").utf8)
        if comparison.regressed { throw ExitCode(2) }
        if comparison.improved { throw ExitCode(4) }
    }
}
