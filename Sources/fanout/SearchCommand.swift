import ArgumentParser
import FanoutClient
import FanoutMeasure
import FanoutNotation
import FanoutPayload
import FanoutReport
import FanoutRun
import FanoutTokens

/// `fanout search`: the highest rate that keeps an SLO, found by measurement.
struct SearchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "search",
        abstract: "Find the highest rate at which an endpoint keeps an SLO, by measuring.",
        // ArgumentParser's line would show --slo as optional: validate() requires one.
        usage: """
            fanout search --slo <objective> [--slo <objective> ...] [--endpoint <url> --template <file> --topic <topic>] [<options>]
            """,
        discussion: """
            Runs open-model steps against --endpoint (options as `fanout send` takes them) or, \
            without it, the embedded sink (options as `fanout run` takes them): --from, doubling \
            until a step fails, then bisecting between the highest pass and the lowest failure \
            until they are within --precision; the answer is measured once more to confirm it. \
            A step passes when the run is valid, it achieved at least (1 − precision) of the \
            offered rate, and every --slo holds (the language of `fanout gate`: p50 … p99.99, \
            max, errors, failed, rejected; no baseline). A step whose generator fell behind its \
            schedule by more than --max-lag measured the generator, not the endpoint: the search \
            says so. Each step is a run folder (step-01/ …) under --output (default: a new \
            results/search-… folder; one holding an earlier run's or search's results, or in use \
            by another command, is refused before any traffic), with search.json and report.html \
            (written after each step; achieved against \
            offered rate; p50 and p99 against offered rate, the knee, with each latency --slo \
            as a line). Exit status: 0 with an \
            answer, 3 when no rate kept the SLO or --max-steps ran out, 4 when the answer is the \
            generator's limit, 5 when the endpoint could not be reached (the search stops at that \
            step; the cause on standard error), 130, 143 or 129 after SIGINT, SIGTERM or SIGHUP \
            (search.json says how far it got and which signal stopped it), 1 on an error, 64 on a \
            usage error.
            """
    )

    @Option(
        name: .customLong("slo"),
        help: ArgumentHelp(
            "An objective every passing step keeps, like 'p99 < 50ms' or 'errors < 0.1%' (repeat for several).",
            valueName: "objective"
        )
    )
    var objectives: [String] = []

    @Option(name: .long, help: ArgumentHelp("The first rate tried, per second (N or N/WINDOW).", valueName: "rate"))
    var from = EventRate(count: RateSearch.Bounds().from)

    @Option(name: .long, help: ArgumentHelp("The highest rate tried, per second (N or N/WINDOW).", valueName: "rate"))
    var to = EventRate(count: RateSearch.Bounds().to)

    @Option(
        name: .long,
        help: ArgumentHelp("How long each step measures, after its warm-up (like 10s).", valueName: "duration")
    )
    var stepDuration = SearchJob.defaultStepDuration

    @Option(
        name: .long,
        help: ArgumentHelp("How long each step runs first, left out of its figures (like 2s).", valueName: "duration")
    )
    var warmUp = SearchJob.defaultWarmUp

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Stop bisecting when the highest pass and the lowest failure are this close (N% or 0.N).",
            valueName: "share"
        )
    )
    var precision = Share(RateSearch.Bounds().precision)

    @Option(
        name: .long,
        parsing: .unconditional,
        help: ArgumentHelp("The most steps the search runs.", valueName: "n")
    )
    var maxSteps = RateSearch.Bounds().maxSteps

    @Option(
        name: .long,
        help: ArgumentHelp(
            "A step whose generator falls further behind its schedule than this measured the generator.",
            valueName: "duration"
        )
    )
    var maxLag = LoadModel().maxLag

    @Option(
        name: .long,
        help: ArgumentHelp(
            "A step in which a notification waited longer than this for a stream is cut there and fails (the endpoint did not keep up).",
            valueName: "duration"
        )
    )
    var maxBacklog = LoadModel().maxBacklog

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Search this endpoint, http://host:port or https://host[:port]; without it, the embedded sink.",
            valueName: "url"
        )
    )
    var endpoint: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "With --endpoint, a token file every step reads from its start (default: each step generates its own).",
            valueName: "file"
        )
    )
    var tokens: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "The notification template, a JSON file: needed with --endpoint; against the embedded sink, the poll by default.",
            valueName: "file"
        )
    )
    var template: String?

    @OptionGroup var target: EndpointOptions

    @OptionGroup var sink: EmbeddedSinkOptions

    @OptionGroup var connection: ConnectionOptions

    @OptionGroup var threads: ThreadOptions

    @Option(
        name: .long,
        help: ArgumentHelp("Where the step folders, search.json and report.html go.", valueName: "dir")
    )
    var output: String?

    /// The job the options describe, writing to `output`.
    func job(output: String) throws -> SearchJob {
        guard !objectives.isEmpty else { throw ValidationError("Give at least one --slo, like --slo 'p99 < 50ms'.") }
        var parsed: [Threshold] = []
        for text in objectives {
            let objective: Threshold
            do {
                objective = try Threshold(parsing: text)
            } catch {
                throw ValidationError("--slo \(text): \(error).")
            }
            if objective.needsBaseline {
                throw ValidationError("--slo \(text): a search has no baseline; give a limit, like p99 < 50ms.")
            }
            parsed.append(objective)
        }
        var bounds = RateSearch.Bounds(from: try rate(from, "--from"), to: try rate(to, "--to"))
        guard bounds.to >= bounds.from else { throw ValidationError("--to (\(to)) is below --from (\(from)).") }
        guard precision.fraction > 0, precision.fraction < 1 else {
            throw ValidationError(
                "--precision is a share above 0% and below 100%, like 5%; not \(precision.defaultValueDescription)."
            )
        }
        bounds.precision = precision.fraction
        guard maxSteps >= 1 else { throw ValidationError("--max-steps must be at least 1.") }
        bounds.maxSteps = maxSteps

        try connection.checkRanges(
            threads: threads.threads,
            otherEventLoops: endpoint == nil ? sink.sinkThreads : 0,
            filesEach: endpoint == nil ? 2 : 1
        )
        var shape = try connection.shape()
        shape.model.maxLag = try maxLag.positive("--max-lag")
        shape.model.maxBacklog = try maxBacklog.positive("--max-backlog")
        let stepDuration = try stepDuration.positive("--step-duration")
        // A step measures what starts after its warm-up: at --from, fewer than a run's minimum
        // would make every step invalid, and the search read that as the endpoint failing.
        let measured = bounds.from * stepDuration.seconds
        guard measured >= Double(MinimumMeasured.default) else {
            throw ValidationError(
                "--from \(from) over a --step-duration of \(DurationNotation.format(stepDuration)) measures about "
                    + "\(Int(measured.rounded())) answers a step, fewer than the \(MinimumMeasured.default) a run needs "
                    + "(--min-measured's default): a higher --from or a longer --step-duration."
            )
        }
        var job = SearchJob(target: try target(shape: shape), objectives: parsed, output: output)
        job.bounds = bounds
        job.stepDuration = stepDuration
        job.warmUp = warmUp
        return job
    }

    private func target(shape: LoadShape) throws -> SearchJob.Target {
        guard let endpoint else {
            if tokens != nil {
                throw ValidationError("--tokens goes with --endpoint; the embedded sink's are generated.")
            }
            if target.isGiven {
                throw ValidationError(
                    "TLS, auth and header options go with --endpoint; the embedded sink takes --tls, --sink-latency, --sink-scenario."
                )
            }
            var job = RunJob()
            job.shape = shape
            job.senderThreads = threads.threads
            if let topic = target.topic { job.topic = topic }
            if let template { job.template = try readTemplate(template) }
            try sink.apply(to: &job)
            return .embedded(job)
        }
        if sink.isGiven {
            throw ValidationError(
                "--tls, --sink-latency, --sink-scenario and --sink-threads are for the embedded sink, not --endpoint."
            )
        }
        guard let template else {
            throw ValidationError("--endpoint needs --template: the notification to send.")
        }
        try target.checkApple(endpoint, generatedTokens: tokens == nil)
        if tokens == "-" { throw ValidationError("--tokens: every step reads the tokens again; give a file, not -.") }
        let tokenSet = tokens.map { TokenSet(.file($0)) }
        var job = try target.job(
            endpoint: endpoint,
            template: template,
            templateOptions: PayloadTemplate.Options(),
            pushType: nil,
            tokens: tokenSet ?? TokenSet(.generated(TokenGenerator(count: 1, seed: TokenGenerator.defaultSeed)))
        )
        job.shape = shape
        job.threads = threads.threads
        return .endpoint(job, tokens: tokenSet)
    }

    private func readTemplate(_ path: String) throws -> PayloadTemplate {
        do {
            return try PayloadTemplate(contentsOf: path, options: PayloadTemplate.Options())
        } catch {
            throw ValidationError("--template: \(error)")
        }
    }

    private func rate(_ rate: EventRate, _ option: String) throws -> Double {
        guard rate.count > 0 else { throw ValidationError("\(option): \(rate) is not a rate above 0.") }
        do {
            return try ArrivalSchedule.perSecond(rate, what: option)
        } catch {
            throw ValidationError("\(error).")
        }
    }

    func run() throws {
        let output = output ?? RunFolder.new(kind: "search")
        // Unbuffered: each step's line shows as it ends, on a terminal or through a pipe.
        let say = { (line: String) in StandardStream.output.write((line + "\n").utf8) }
        var job = try job(output: output)
        job.reporter = ConsoleReporter.shared
        let report: SearchReport
        do {
            report = try job.run()
        } catch let unreachable as SearchJob.Unreachable {
            printError(unreachable.line)
            throw ExitCode(RunStatus.unreachable.rawValue)
        }
        say("results: \(output)/ (\(SearchReport.files.joined(separator: ", ")), step-NN/)")
        switch report.answer {
        case nil:
            let signal = report.stoppedBy.flatMap { name in StopSignal.allCases.first { $0.name == name } }
            throw ExitCode(RunStatus(signal ?? .interrupt).rawValue)
        case .found, .atLeast: break
        case .generatorLimit: throw ExitCode(RunStatus.invalid.rawValue)
        case .noRate, .stepsExhausted: throw ExitCode(RunStatus.failed.rawValue)
        }
    }
}
