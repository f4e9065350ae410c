import Crypto
import FanoutAPNs
import FanoutAssembly
import FanoutClient
import FanoutEndpoint
import FanoutHTTP2
import FanoutMeasure
import FanoutNotation
import FanoutPayload
import FanoutPush
import FanoutReport
import FanoutResults
import FanoutReturn
import FanoutScenarioTerms
import FanoutSink
import FanoutTokens
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// Fanout's main job: a mock APNs embedded in the process on a loopback port, a synthetic token
/// set fanned out to it with the seed's interactive "poll" notification, and the proof that
/// sender and sink agree on every count.
public struct RunJob: Sendable {
    /// The seed's interactive notification: a poll with two URL actions (fixtures/poll.json).
    public static let poll = #"""
        {"aps":{"alert":{"title":"Poll","body":"Do you like the new design?"},"badge":1,"sound":"default","category":"poll","mutable-content":1},"category-actions":[{"name":"OK","type":"url","value":"https://example.com/ok"},{"name":"NOK","type":"url","value":"https://example.com/nok"}]}
        """#

    /// Synthetic tokens to send; `nil`: as many as the open model's schedule holds, or
    /// `defaultCount` in the closed model.
    public var count: UInt64?
    public var seed = TokenGenerator.defaultSeed
    /// The part of the token set this run sends (shards of one set merge with `fanout merge`).
    public var shard = TokenShard.all
    /// Connections, streams, timeouts, tries, the load model.
    public var shape = LoadShape()
    /// Event loops of the sender, and of the sink.
    public var senderThreads = LoadEngine.defaultEventLoops
    public var sinkThreads = Sink.defaultEventLoops
    public var topic = "com.example.app"
    /// The notification; the poll when `nil`.
    public var template: PayloadTemplate?
    /// The sink's behaviour (latency, errors, faults).
    public var sink = SinkConfiguration()
    /// How the return wave is sent, when the sink's devices engage (`--sink-return-to`).
    public var returnWave = ReturnWaveSettings()
    /// Whether the run speaks as APNs requires: TLS (a self-signed certificate made for the run,
    /// which the sender trusts) and token auth (a P-256 key made for the run; every connection
    /// presents a signed JWT, the sink verifies it). Otherwise h2c without auth.
    public var apnsSecurity = false
    /// Serve the sender's counts in Prometheus' format here while the run lasts (`--metrics`).
    public var metrics: ServedAddress?
    /// Serve the live report here while the run goes, and the final one after (`--serve`).
    public var serve: ServedAddress?
    /// Where the run's events go (listening, progress, its summary): by default nowhere.
    public var reporter: any JobReporter = SilentReporter()

    /// One request in this many carries a timed apns-id: enough for the sink's lateness from the
    /// send (1/8 of a run's answers), at an eighth of the ids' cost (measured: all of them cost
    /// 5–10% of the closed model's throughput).
    public static let timedAPNsIDs = 8

    /// The closed model's token count when none is given.
    public static let defaultCount: UInt64 = 1_000_000

    public init() {}

    /// A campaign's other half (`run --fleet`'s FCM half), whose devices' events this run's
    /// wave sends beside its own sink's: one wave, as one backend sees it.
    var companion: WaveCompanion?

    /// A scaled rehearsal (`--sample 1%`; `CampaignSample`): that share of the campaign's
    /// devices, the fan-out's schedule and the devices' delays compressed by as much, so every
    /// rate (the fan-out's, the return wave's) is the campaign's. `nil`: the campaign itself.
    public var sample: CampaignSample?

    /// The campaign's devices: `count`, the open model's schedule's, or `defaultCount`.
    public var campaignDevices: UInt64 { count ?? shape.model.schedule?.total ?? Self.defaultCount }

    /// The tokens the run sends: the campaign's, or its sample's — never more than the
    /// compressed schedule holds (its total is rounded down: a count rounded to the nearest
    /// could leave one token past its end).
    public var tokenCount: UInt64 {
        guard let sample else { return campaignDevices }
        let sampled = sample.devices(campaignDevices)
        guard let total = (try? sampledShape())?.model.schedule?.total else { return sampled }
        return count == nil ? total : min(sampled, total)
    }

    /// The load's shape in the sample's time: the schedule's stages and the closed model's
    /// duration compressed, rates kept; the network's times (timeouts, back-offs) kept.
    func sampledShape() throws(JobError) -> LoadShape {
        guard let sample else { return shape }
        var shape = self.shape
        do {
            shape.model.schedule = try shape.model.schedule?.compressed(to: sample.share)
        } catch {
            throw .option(.optionValue("--sample", ShareNotation.percent(sample.share)), "\(error)")
        }
        shape.model.duration = shape.model.duration.map(sample.compressed)
        return shape
    }

    /// The sink's configuration in the sample's time (its devices' delays compressed).
    var sampledSink: SinkConfiguration {
        guard let sample else { return sink }
        var sink = self.sink
        sink.scenario.devices = sink.scenario.devices.compressed(by: sample)
        return sink
    }

    /// Runs the job `repeats` times into `directory` (a `RepeatSet`), with SIGINT, SIGTERM
    /// and SIGHUP stopping it cleanly (`StopSignals`): each run's folder is written, its
    /// progress and summary told `reporter`. `directory` is checked and locked before
    /// any traffic (`RunOutput`), and stays locked until the set ends.
    public func run(into directory: String, repeats: Int) throws -> RunStatus {
        try StopSignals.watch { signals in
            let output = try RunOutput(preparing: directory)
            defer { withExtendedLifetime(output) {} }
            let live = try serve.map { try LiveReport(at: $0, command: "run", reporter: reporter) }
            defer { live?.close() }
            var set = try RepeatSet(repeats, into: directory, signals: signals, reporter: reporter)
            while let folder = set.next() {
                try set.ended(runOnce(into: folder, signals: signals, live: live))
            }
            return try set.finish()
        }
    }

    private func runOnce(into directory: String, signals: StopSignals, live: LiveReport?) throws -> RunStatus {
        let display = reporter.progress(total: tokenCount)
        let linger = MetricsLinger()
        // Whatever ends this run, the endpoint closes (a throw included).
        defer { linger.finish() }
        let summary = try run(
            started: { engine in
                live?.follow(engine)
                signals.onStop { engine.interrupt(by: $0) }
            },
            waveStarted: { wave in signals.onStop { _ in wave.interrupt() } },
            progress: live.map { $0.progress(also: display) } ?? display,
            linger: linger
        )
        let status = try summary.finish(into: directory, reporter: reporter)
        try live?.finish(folder: directory)
        // The folder is written: the metrics linger now, and a stop signal ends that.
        signals.onStop { _ in linger.end() }
        return status
    }

    /// Runs the job, blocking; the summary holds the reconciliation. `started` gets the engine
    /// (to cancel it) before it runs.
    public func run(
        started: (LoadEngine) -> Void = { _ in },
        progress: ((RunProgress) -> Void)? = nil
    ) throws -> RunSummary {
        try run(started: started, waveStarted: { _ in }, progress: progress, linger: nil)
    }

    /// `run(started:progress:)`, with the metrics endpoint left to `linger` when there is one.
    func run(
        started: (LoadEngine) -> Void,
        waveStarted: (ReturnWave) -> Void,
        progress: ((RunProgress) -> Void)?,
        linger: MetricsLinger?
    ) throws -> RunSummary {
        let template = try self.template ?? PayloadTemplate(json: Array(Self.poll.utf8), file: "poll")
        let sinkGroup = MultiThreadedEventLoopGroup(numberOfThreads: sinkThreads)
        defer { try? sinkGroup.syncShutdownGracefully() }
        let security = try apnsSecurity ? RunSecurity() : nil
        defer { security?.remove() }
        let shape = try sampledShape()
        try ReturnWaveJob.check(sink.scenario.devices.engagement, returnWave)
        var sinkConfiguration = sampledSink.embedded
        if let security { sinkConfiguration.tokenAuthentication = security.sinkAuthentication }
        let sink = try Sink(
            host: "127.0.0.1",
            port: 0,
            group: sinkGroup,
            transport: security?.serverTransport ?? .cleartext,
            configuration: sinkConfiguration
        )
        defer { sink.drain(grace: .seconds(1)) }
        let port = sink.localAddress.port!
        // The wave shows beside the sender's figures at `--metrics`.
        let waveMetrics = MetricsAdditions()
        let wave = try sink.fleet.flatMap {
            try ReturnWaveJob.start(
                [$0] + (companion.map { [$0.fleet] } ?? []),
                returnWave,
                metrics: waveMetrics,
                reporter: reporter
            )
        }
        // A run that fails stops the wave; one that ends well has finished it (then a no-op).
        defer { wave?.stop() }
        if let wave { waveStarted(wave) }

        let tokens = try TokenSet(
            .generated(TokenGenerator(count: tokenCount, seed: seed)),
            reader: TokenReaderConfiguration(shard: shard)
        ).openForRun(connections: shape.connections)
        var configuration = LoadConfiguration(
            host: "127.0.0.1",
            port: port,
            headers: try NotificationHeaders(topic: topic, pushType: template.options.pushType),
            encoder: PayloadEncoder(template: template),
            shape: shape
        )
        configuration.shape.model.shard = shard
        configuration.endpoint.authority = "api.push.apple.com"
        // The sink shares this process's clock: a timed apns-id tells it a request's send time,
        // and its lateness then covers every queue between the two (the harness account).
        configuration.endpoint.headers.timedAPNsIDs = Self.timedAPNsIDs
        if let security {
            configuration.endpoint.transport = security.clientTransport
            configuration.endpoint.providerTokens = security.providerTokens
        }
        let sender = try SenderEngine(
            configuration: configuration,
            tokens: tokens,
            threads: senderThreads,
            metrics: metrics,
            metricsAdditions: waveMetrics,
            linger: linger,
            reporter: reporter
        )
        defer { sender.close() }
        let engine = sender.engine
        started(engine)
        warnIfLate(configuration.shape.model.startAt, reporter: reporter)
        let sinkCPUAtStart = ThreadCPUClock.perLoop(of: sinkGroup)
        let report = engine.run(progress: progress)
        let sinkLoopCPU = zip(ThreadCPUClock.perLoop(of: sinkGroup), sinkCPUAtStart).map { $0 &- $1 }
        // A campaign's wave is the other half's too: its sink keeps delivering what it stored
        // (and its devices engaging) until the other half has sent everything.
        if wave != nil { companion?.sendsEnded.wait() }
        let sinkSummary = sink.drain(grace: .seconds(1))
        let reconciliation = Reconciliation(
            client: report.snapshot,
            sinkRequests: sinkSummary.requests,
            sinkAccepted: sinkSummary.accepted,
            sinkRejected: PushReason.counts(sinkSummary.rejected),
            sinkDigest: sinkSummary.digest
        )
        var summary = RunSummary(
            report: report,
            endpoint: "the embedded sink at \(security == nil ? "http" : "https")://127.0.0.1:\(port)",
            configuration: configuration,
            tokenSource: "generated: \(tokenCount), seed \(seed)" + (shard == .all ? "" : ", shard \(shard)"),
            reconciliation: reconciliation
        )
        summary.configuredEndpoint = "the embedded sink (\(security == nil ? "h2c" : "TLS"))"
        summary.scenario = self.sink.scenario.file
        if let wave {
            summary.returnWave = try ReturnWaveJob.finish(wave, returnWave, reporter: reporter)
        }
        summary.sample = sample.map {
            SampleSummary(share: $0.share, campaignDevices: campaignDevices, devices: tokenCount)
        }
        summary.delivery = sink.fleet.map { DeliverySummary($0.snapshot()) }
        summary.sinkCPU = .nanoseconds(Int64(sinkLoopCPU.reduce(0, +)))
        // The loops' CPU over the run, not since the sink started.
        var sinkDelays = sinkSummary.ownDelays
        let seconds = report.elapsed.seconds
        sinkDelays.loopUtilisation = sinkLoopCPU.map { seconds > 0 ? Double($0) / 1e9 / seconds : 0 }
        summary.sinkDelays = sinkDelays
        let scenario = self.sink.scenario
        summary.selfMeasurement =
            scenario.latency == nil && scenario.wire == nil && scenario.stall == nil && scenario.tokenRate == nil
        return summary
    }
}

/// TLS and token auth for one run of the main job: a self-signed certificate the sender trusts
/// and a P-256 key the sink verifies JWTs with, made in a temporary folder removed afterwards.
struct RunSecurity {
    static let keyID = "FANOUTRUN1"
    static let teamID = "FANOUTTEAM"
    let folder: String
    let serverTransport: HTTP2Transport
    let clientTransport: HTTP2Transport
    let sinkAuthentication: TokenAuthentication
    let providerTokens: ProviderTokens

    init() throws {
        folder = NSTemporaryDirectory() + "fanout-run-tls-\(UUID().uuidString)"
        let files = try SinkCertificates.writeSelfSigned(into: folder, hosts: ["127.0.0.1", "api.push.apple.com"])
        serverTransport = try .tlsServer(certificateFile: files.certificate, keyFile: files.key)
        clientTransport = try .tlsClient(trustedCertificatesFile: files.certificate)
        let key = P256.Signing.PrivateKey()
        sinkAuthentication = TokenAuthentication(
            keys: [.init(keyID: Self.keyID, teamID: Self.teamID, publicKey: key.publicKey)]
        )
        providerTokens = try ProviderTokens(pem: key.pemRepresentation, keyID: Self.keyID, teamID: Self.teamID)
    }

    func remove() {
        try? FileManager.default.removeItem(atPath: folder)
    }
}
