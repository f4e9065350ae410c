import ArgumentParser
import FanoutMachine
import FanoutPayload
import FanoutRun
import FanoutScenarioTerms
import FanoutSink
import FanoutTokens

/// `fanout run`: the main job.
struct RunCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Fan the poll notification out to synthetic tokens through a mock APNs in this process.",
        discussion: """
            Starts the sink on a loopback port, sends every token's notification to it, prints \
            throughput, latency percentiles and outcomes, and checks that sender and sink agree on \
            every count and on the digest of what was accepted. Writes summary.json, summary.md, \
            report.html, latency.hgrm and latency.hlog to --output (default: a new folder under \
            results/), which must not hold \
            an earlier run's results nor be in use by another run: it is checked before any \
            traffic. SIGINT (Ctrl-C), SIGTERM or SIGHUP stops the run within a second: what is \
            in flight is answered, and the folder is written marked interrupted (invalid); a \
            second signal exits at once. A live progress line shows on a terminal. --rate (or \
            --stage) switches to the open model. Exit status: 0 when sender and sink agree and \
            every notification was accepted or rejected by the sink, 3 when they disagree or \
            notifications failed, 4 when the run is invalid (fewer answers measured than \
            --min-measured, the open model's generator fell \
            behind by more than --max-lag, or a notification waited for a stream longer than \
            --max-backlog and the schedule was cut), 5 when no connection to the embedded sink got as \
            far as an answer (its connections closed, or answered 403 for the credentials, before \
            any other answer: the cause is on standard error), 6 when an --abort-on condition \
            stopped it, 130, 143 or 129 when SIGINT, SIGTERM or SIGHUP stopped it, 1 on an error, \
            64 on a usage error.
            """
    )

    @Option(
        name: .long,
        parsing: .unconditional,
        help: ArgumentHelp(
            "Synthetic device tokens to send (default: \(RunJob.defaultCount), or as many as the schedule holds); with --sample, the campaign's.",
            valueName: "n"
        ),
        transform: Count.reading
    )
    var count: Count?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "A scaled rehearsal: this share of the campaign's devices with its time compressed as much (the schedule's stages, the closed model's --duration, the devices' delays to deliver, come back and open), so every rate, the return wave's peak too, is the campaign's; the reports say so first.",
            valueName: "share"
        ),
        transform: { text in
            do { return try CampaignSample(parsing: text) } catch { throw ValidationError("--sample: \(error)") }
        }
    )
    var sample: CampaignSample?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "The notification, a JSON template, instead of the seed's interactive poll (fixtures/poll.json, mutable-content: engaging devices download its media at delivery).",
            valueName: "file"
        )
    )
    var template: String?

    @OptionGroup var seeding: SeedOption

    @OptionGroup var sharding: ShardOption

    @OptionGroup var shape: ShapeOptions

    @OptionGroup var threads: ThreadOptions

    @OptionGroup var metricsOption: MetricsOption

    @OptionGroup var serveOption: ServeOption

    @OptionGroup var sink: EmbeddedSinkOptions

    @OptionGroup(title: "The return wave") var returnWave: ReturnWaveOptions

    @OptionGroup var repeating: RepeatOptions

    @OptionGroup(title: "What it prints") var console: ConsoleOptions

    @Option(
        name: .long,
        help: ArgumentHelp(
            "The run's folder (by default a new one under results/): summary.json, summary.md, report.html, latency.hgrm and latency.hlog; with --repeat, repeat-1/… and repeats.json inside it; with --fleet, campaign.json, apns/ and fcm/.",
            valueName: "dir"
        )
    )
    var output: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "One campaign across both push services: each device drawn to APNs or FCM by these shares (apns=55%,fcm=45%), each half sent to its own mock in this process, together; writes apns/, fcm/ and campaign.json.",
            valueName: "apns=SHARE,fcm=SHARE"
        )
    )
    var fleet: String?

    func validate() throws {
        if repeating.repeats > 1 && shape.load.startAt != nil {
            throw ValidationError("--start-at is one moment: it does not go with --repeat.")
        }
        if let count { try MachineLimits.tokenCount("--count").validate(count.value) }
        // The embedded sink holds the other end of each connection, and its loops, here.
        try shape.connection.checkRanges(threads: threads.threads, otherEventLoops: sink.sinkThreads, filesEach: 2)
        if fleet != nil {
            let refused: [(String, Bool)] = [
                ("--repeat", repeating.repeats > 1), ("--shard", sharding.shard != nil),
                ("--serve", serveOption.serve != nil), ("--metrics", metricsOption.metrics != nil),
                ("--start-at", shape.load.startAt != nil),
                ("--template", template != nil),
            ]
            let given = refused.filter(\.1).map(\.0)
            if !given.isEmpty {
                throw ValidationError(
                    "--fleet runs one campaign across both services: it does not take \(given.joined(separator: ", "))."
                )
            }
            do { _ = try FleetShares(parsing: fleet!) } catch { throw ValidationError("\(error).") }
        }
    }

    /// The job the options describe.
    func job() throws -> RunJob {
        var job = RunJob()
        job.count = count?.value
        job.sample = sample
        if let template {
            do {
                job.template = try PayloadTemplate(contentsOf: template)
            } catch {
                throw ValidationError("--template \(template): \(error)")
            }
        }
        job.seed = seeding.seed
        job.shard = try sharding.parsed()
        job.shape = try shape.shape()
        job.senderThreads = threads.threads
        job.metrics = try metricsOption.address()
        job.serve = try serveOption.address()
        try sink.apply(to: &job)
        job.returnWave = try returnWave.settings()
        return job
    }

    func run() throws {
        var job = try job()
        ConsoleReporter.shared.style = console.style
        job.reporter = ConsoleReporter.shared
        if let fleet {
            var campaign = CampaignJob(run: job, fleet: try FleetShares(parsing: fleet))
            campaign.reporter = ConsoleReporter.shared
            try campaign.run(into: output ?? RunFolder.new()).exit()
            return
        }
        try job.run(into: output ?? RunFolder.new(), repeats: repeating.repeats).exit()
    }
}

/// The embedded sink's options, shared by `fanout run` and `fanout search`.
struct EmbeddedSinkOptions: ParsableArguments {
    @Option(
        name: .long,
        parsing: .unconditional,
        help: ArgumentHelp("Event loops of the sink.", valueName: "n")
    )
    var sinkThreads = RunJob().sinkThreads

    @Option(
        name: .long,
        help: ArgumentHelp(
            "The embedded sink's scenario file (latency, errors, faults; see fixtures/scenarios/): rehearse against APNs-like round trips.",
            valueName: "file"
        )
    )
    var sinkScenario: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "The embedded sink's answer latency, as `fanout sink --latency` takes it (fixed:80ms, lognormal:80ms,0.3, …); over the scenario's.",
            valueName: "distribution"
        ),
        transform: { try SinkScenario.Setting("latency", $0) }
    )
    var sinkLatency: SinkScenario.Setting?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "A path of this round trip in front of the embedded sink, as `fanout sink --rtt` takes it (80ms, normal:80ms,5ms); over the scenario's.",
            valueName: "duration"
        ),
        transform: { try SinkScenario.Setting("rtt", $0) }
    )
    var sinkRtt: SinkScenario.Setting?

    @Flag(
        name: .long,
        help:
            "Speak as APNs requires: TLS (a certificate made for the run) and token auth (a JWT signed with a key made for the run)."
    )
    var tls = false

    @Option(
        name: .long,
        help: ArgumentHelp(
            "The share of its hold an embedded sink's drawn answer may move to go out with others, as `fanout sink --coalesce` (default: \(Share(SinkConfiguration.defaultCoalescingShare).defaultValueDescription)).",
            valueName: "share"
        )
    )
    var sinkCoalesce: Share?

    @OptionGroup var devices: SinkDeviceOptions

    func validate() throws {
        try MachineLimits.current().eventLoops("--sink-threads").validate(sinkThreads)
    }

    /// Whether any is given (`fanout search --endpoint` takes none).
    var isGiven: Bool {
        sinkScenario != nil || sinkLatency != nil || sinkRtt != nil || tls || sinkThreads != RunJob().sinkThreads
            || sinkCoalesce != nil || !devices.given.isEmpty
    }

    func apply(to job: inout RunJob) throws {
        job.sinkThreads = sinkThreads
        job.apnsSecurity = tls
        if let sinkCoalesce {
            job.sink.coalescing.share = try sinkCoalesce.checked("--sink-coalesce")
        }
        if let sinkScenario {
            do {
                job.sink.scenario = try SinkScenario(contentsOfFile: sinkScenario)
            } catch {
                throw ValidationError("--sink-scenario: \(error)")
            }
        }
        // Read as ArgumentParser took them, in the scenario file's grammar.
        for setting in [sinkLatency, sinkRtt].compactMap({ $0 }) + devices.given.map(SinkScenario.Setting.device) {
            job.sink.scenario.apply(setting)
        }
        do {
            try job.sink.scenario.validate()
        } catch {
            throw ValidationError("the embedded sink's scenario: \(error)")
        }
    }
}
