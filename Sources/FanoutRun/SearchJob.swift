import FanoutAssembly
import FanoutClient
import FanoutMeasure
import FanoutReport
import FanoutTokens
import Foundation
import NIOConcurrencyHelpers

/// `fanout search`: the highest rate at which an endpoint keeps a set of objectives (`p99 <
/// 50ms`, `errors < 0.1%`), found by measurement. Each step is an open-model run at one rate
/// (`warmUp` then `stepDuration`) kept as a run folder, `step-NN/` under `output`; `RateSearch`
/// decides the rates, `SearchStep` judges each run, `SearchReport` writes `search.json` and
/// `report.html` as the search goes (a stopped search keeps what it measured).
public struct SearchJob: Sendable {
    public enum Target: Sendable {
        /// The embedded sink, as `fanout run` starts it (its latency, scenario, TLS).
        case embedded(RunJob)
        /// An endpoint, as `fanout send` reaches it. Its token set is read again from the start
        /// by every step; `nil` tokens: each step generates as many as its schedule holds.
        case endpoint(SendJob, tokens: TokenSet?)
    }

    public var target: Target
    public var objectives: [Threshold]
    public var bounds = RateSearch.Bounds()
    public var stepDuration = Self.defaultStepDuration
    public var warmUp = Self.defaultWarmUp
    public static let defaultStepDuration: Duration = .seconds(10)
    public static let defaultWarmUp: Duration = .seconds(2)
    /// Where the step folders, `search.json` and `report.html` go.
    public var output: String
    /// Where the search's events go (its table's rows, its answer): by default nowhere.
    public var reporter: any JobReporter = SilentReporter()

    public init(target: Target, objectives: [Threshold], output: String) {
        self.target = target
        self.objectives = objectives
        self.output = output
    }

    /// What a step may fall short of its offered rate by and still pass: the search's precision.
    var shortfall: Double { bounds.precision }

    /// `bounds`, with the search going no lower than the rate whose steps measure a run's
    /// minimum of answers (`MinimumMeasured`): a step below it is invalid whatever the endpoint
    /// does, so the search ends there saying no rate passed, rather than halving on.
    var measurableBounds: RateSearch.Bounds {
        var bounds = bounds
        bounds.floor = max(bounds.floor, Double(MinimumMeasured.default) / stepDuration.seconds)
        return bounds
    }

    /// Runs the search, blocking; each step's line goes to `log` as it ends. `output` is
    /// checked and locked before the first step sends anything (`RunOutput`: not a file, none
    /// of the inputs, no other command writing it, no earlier run's or search's results in it).
    /// SIGINT, SIGTERM or SIGHUP (a CI runner's cancel) stops the step under way and the search
    /// with it: search.json and report.html say how far it got (`answer` stays `nil`, the
    /// signal named), as they do after every step.
    public func run() throws -> SearchReport {
        for objective in objectives where objective.needsBaseline {
            throw JobError.option(
                .optionValue("--slo", objective.text),
                "a search has no baseline; give a limit, like p99 < 50ms"
            )
        }
        let taken = try RunOutput(preparing: output, earlierResults: .refuse, results: .search)
        defer { withExtendedLifetime(taken) {} }
        var report = SearchReport(
            target: targetDescription,
            objectives: objectives,
            bounds: bounds,
            stepDuration: stepDuration,
            warmUp: warmUp
        )
        let engine = NIOLockedValueBox<LoadEngine?>(nil)
        let stopped = NIOLockedValueBox<StopSignal?>(nil)
        try StopSignals.watch { signals in
            signals.onStop { signal in
                stopped.withLockedValue { $0 = signal }
                // The step under way drains and is written marked interrupted, as a run is.
                engine.withLockedValue { $0?.interrupt(by: signal) }
            }
            reporter.report(.searchStarted)
            var search = RateSearch(measurableBounds)
            var action = search.start()
            while case .measure(let rate, let purpose) = action {
                let number = report.steps.count + 1
                let folder = output + String(format: "/step-%02d", number)
                let summary = try measure(rate, into: folder) { started in
                    engine.withLockedValue { $0 = started }
                    if let signal = stopped.withLockedValue({ $0 }) { started.interrupt(by: signal) }
                }
                if summary.report.cancelled && summary.report.abandoned == nil { break }
                // No step can measure an endpoint that cannot be reached.
                if let failure = summary.report.unreachable {
                    throw Unreachable(
                        line: RunSummary.unreachableLine(
                            failure,
                            host: summary.configuration.endpoint.host,
                            port: summary.configuration.endpoint.port
                        )
                    )
                }
                let run: RunSet
                do {
                    run = try RunSet.load(folder)
                } catch {
                    throw JobError.cannotRead(.part("step \(number)"), "\(error)")
                }
                let step = SearchStep(
                    number: number,
                    offered: rate,
                    purpose: purpose,
                    folder: folder,
                    achieved: summary.throughput,
                    p50: summary.latency(at: 50),
                    p99: summary.latency(at: 99),
                    invalidReasons: summary.invalidReasons,
                    run: run,
                    objectives: objectives,
                    shortfall: shortfall
                )
                report.steps.append(step)
                reporter.report(.searchStep(step))
                try write(report)
                action = search.finished(step.outcome)
            }
            if case .finished(let answer) = action { report.answer = answer }
        }
        report.stoppedBy = stopped.withLockedValue { $0 }?.name
        try write(report)
        reporter.report(.searchEnded(report))
        return report
    }

    /// One step: the open model at `rate` for the warm-up and the step, written to `folder`.
    private func measure(
        _ rate: Double,
        into folder: String,
        started: (LoadEngine) -> Void
    ) throws -> RunSummary {
        let schedule: ArrivalSchedule
        do {
            schedule = try ArrivalSchedule(rate: rate, duration: warmUp + stepDuration)
        } catch {
            throw JobError.outcome(.part("step at \(rate)/s"), "\(error)")
        }
        let total = schedule.total ?? 0
        func shaped(_ shape: LoadShape) -> LoadShape {
            var shape = shape
            shape.model = LoadModel(schedule: schedule, warmUp: warmUp)
            shape.model.maxLag = self.shape.model.maxLag
            // A bound on the step: an endpoint that stops answering ends it as failed.
            shape.deadline = (warmUp + stepDuration) * 3 + .seconds(30)
            return shape
        }
        let summary: RunSummary
        switch target {
        case .embedded(var job):
            job.count = nil
            job.shape = shaped(job.shape)
            summary = try job.run(started: started)
        case .endpoint(var job, let tokens):
            job.shape = shaped(job.shape)
            job.tokens =
                tokens ?? TokenSet(.generated(TokenGenerator(count: total, seed: TokenGenerator.defaultSeed)))
            let configuration = try job.loadConfiguration()
            defer { configuration.goneTokens?.close() }
            summary = try job.run(configuration, started: started)
            if tokens != nil, !summary.report.cancelled, UInt64(summary.report.snapshot.sent) < total {
                throw JobError.input(
                    .part("step at \(Int(rate.rounded()))/s"),
                    "needs \(total) tokens and the token set holds fewer: "
                        + "give a larger set, or no --tokens (each step then generates its own)"
                )
            }
        }
        do {
            try summary.write(to: folder)
        } catch {
            throw JobError.cannotWrite(.file(folder), error.reason)
        }
        return summary
    }

    private var shape: LoadShape {
        switch target {
        case .embedded(let job): job.shape
        case .endpoint(let job, _): job.shape
        }
    }

    private var targetDescription: String {
        switch target {
        case .embedded(let job):
            "the embedded sink (\(job.apnsSecurity ? "TLS, token auth" : "h2c")), "
                + "\(job.shape.connections) connections × \(job.shape.streamsPerConnection) streams"
        case .endpoint(let job, _):
            "\(job.endpoint), \(job.shape.connections) connections × \(job.shape.streamsPerConnection) streams"
        }
    }

    private func write(_ report: SearchReport) throws {
        do {
            try report.write(to: output)
        } catch {
            throw JobError.cannotWrite(.file(output), error.reason)
        }
    }
}

extension SearchJob {
    /// A step could not reach the endpoint: the search stops there (exit 5), `line` says why.
    public struct Unreachable: Error, Sendable {
        public var line: String
    }
}
