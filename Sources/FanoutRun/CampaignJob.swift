import FanoutAssembly
import FanoutClient
import FanoutDevices
import FanoutEndpoint
import FanoutFCM
import FanoutFCMAuth
import FanoutFCMSink
import FanoutNotation
import FanoutPush
import FanoutRandom
import FanoutReport
import FanoutResults
import FanoutReturn
import FanoutScenarioTerms
import FanoutSink
import FanoutTokens
import Foundation
import Histogram
import NIOConcurrencyHelpers
import NIOPosix
import NIOSSL

/// A fleet's devices by push service: `apns=55%,fcm=45%`, shares that add up to one.
public struct FleetShares: Sendable, Hashable, CustomStringConvertible {
    public var apns: Double
    public var fcm: Double

    public init(apns: Double, fcm: Double) {
        self.apns = apns
        self.fcm = fcm
    }

    /// `apns=55%,fcm=45%` (either order; a share as everywhere, `55%` or `0.55`); the error says
    /// which part is wrong.
    public init(parsing text: String) throws(JobError) {
        var shares: [String: Double] = [:]
        for part in text.split(separator: ",", omittingEmptySubsequences: false) {
            let pair = part.split(separator: "=", maxSplits: 1)
            guard pair.count == 2, let share = ShareNotation.parse(pair[1]), share >= 0, share <= 1 else {
                throw JobError.option(
                    .option("--fleet"),
                    "'\(part)' is not SERVICE=SHARE (apns=55%), a share from 0 to 100% in '\(text)'"
                )
            }
            let service = pair[0].trimmingCharacters(in: .whitespaces)
            guard ["apns", "fcm"].contains(service) else {
                throw JobError.option(
                    .option("--fleet"),
                    "'\(service)' is not a push service (apns or fcm) in '\(text)'"
                )
            }
            guard shares.updateValue(share, forKey: service) == nil else {
                throw JobError.option(.option("--fleet"), "\(service) is given twice in '\(text)'")
            }
        }
        let apns = shares["apns"] ?? 0
        let fcm = shares["fcm"] ?? 0
        guard abs(apns + fcm - 1) < 1e-9 else {
            throw JobError.option(
                .option("--fleet"),
                "the shares add up to \(ShareNotation.percent(apns + fcm)), not 100%, in '\(text)'"
            )
        }
        self.init(apns: apns, fcm: fcm)
    }

    public var description: String { "apns=\(ShareNotation.percent(apns)),fcm=\(ShareNotation.percent(fcm))" }

    /// Device `index`'s service, drawn from `seed`: APNs for a draw below its share.
    public func isAPNs(device index: UInt64, seed: UInt64) -> Bool {
        let draw = SeededRandom.mix(SeededRandom.mix(seed ^ 0xF1EE_7000_0000_0000) ^ index)
        return Double(draw >> 11) / Double(UInt64(1) << 53) < apns
    }

    /// How many of `count` devices go through APNs: each device's service drawn on its own
    /// (each half then sends that many of its own service's generated tokens),
    /// so the halves are a fleet's, within sampling's spread of the shares (σ of √(n·p·q):
    /// 497 devices of 1,000,000 at 55%), not cut to them exactly.
    public func apnsDevices(of count: UInt64, seed: UInt64) -> UInt64 {
        var apnsCount: UInt64 = 0
        for index in 0..<count where isAPNs(device: index, seed: seed) { apnsCount += 1 }
        return apnsCount
    }
}

/// `fanout run --fleet apns=55%,fcm=45%`: one campaign across both push services, each in this
/// process behind its own mock, started together:
///
/// ```
///   devices ──► drawn by the shares ──┬─► APNs half: the main job (`RunJob`) ──► the APNs sink
///                                     └─► FCM half: `SendJob`, OAuth2 ──► the FCM sink
///   each half's run folder (apns/, fcm/) ─► campaign.json: per service and the campaign's
///   fan-out time to the last device of either
/// ```
///
/// The FCM half sends the seed's poll as an FCM send (`PlanJob.fcmPoll`) over the run's
/// connections with FCM's 100 streams each, with a service account whose tokens the FCM sink
/// grants, to a sink holding FCM's default quota (600,000 a minute: a larger FCM half meets it
/// as a real one would). Both halves take the run's wire (`--sink-rtt`), its sink latency
/// (`--sink-latency`), TLS (`--tls`), connections and threads; each is reconciled with its own sink, counts and digest.
///
/// With the open model (`--rate`, `--stage`) the schedule is the campaign's: the devices arrive
/// at its rate and each half sends its own at its part of it (`ArrivalSchedule.scaled(by:)`,
/// the half's devices over the campaign's), so that 4,000/s over `apns=55%,fcm=45%` is about
/// 2,200/s to APNs and 1,800/s to FCM, together 4,000/s. Each half's schedule starts when its
/// half does; the halves are started together (`Campaign.run`), a few milliseconds apart.
public struct CampaignJob: Sendable {
    /// The APNs half as the options describe the main job; its count and seed are the
    /// campaign's.
    public var run: RunJob
    public var fleet: FleetShares
    public var reporter: any JobReporter = SilentReporter()

    public init(run: RunJob, fleet: FleetShares) {
        self.run = run
        self.fleet = fleet
    }

    /// The project the FCM half's sink serves.
    static let project = "fanout-campaign"

    /// Runs the campaign into `directory` (checked and locked before any traffic): `apns/`
    /// and `fcm/` are the halves' run folders, `campaign.json` the whole. SIGINT, SIGTERM and
    /// SIGHUP stop both halves cleanly. The status is the worse half's.
    public func run(into directory: String) throws -> RunStatus {
        try Campaign.run(into: directory, reporter: reporter) { signals in
            try campaign(into: directory, signals: signals)
        }
    }

    /// Both halves, sent together; their folders written, the campaign's document made.
    func campaign(into directory: String, signals: StopSignals?) throws -> (CampaignDocument, RunStatus) {
        // A scaled rehearsal is a campaign of the sample's devices in the sample's time
        // (`RunJob.sample`), each half then its share of that; every folder says so.
        let sampled = try sampledCampaign()
        let run = sampled.run
        let count = run.tokenCount
        let apnsCount = fleet.apnsDevices(of: count, seed: run.seed)
        let fcmCount = count - apnsCount
        var apns = run
        apns.count = apnsCount
        apns.shape.model.schedule = try Self.part(of: run.shape.model.schedule, devices: apnsCount, of: count)
        // One return wave for the campaign's devices, as one backend sees them: the APNs half's
        // run sends the FCM half's events too (the FCM half's own when it is the only one).
        let fcmHalf =
            fcmCount > 0 ? try FCMHalf(campaign: sampled, devices: fcmCount, ownsWave: apnsCount == 0) : nil
        defer { fcmHalf?.stop() }
        let companion = fcmHalf?.sink.service.fleet.map(WaveCompanion.init)
        apns.companion = companion
        let apnsHalf = apns
        let sample = self.run.sample
        /// A half's summary, said to be its part of the rehearsal when it is one.
        @Sendable func rehearsed(_ summary: RunSummary, devices: UInt64) -> RunSummary {
            var summary = summary
            summary.sample = sample.map { $0.summary(devices: devices) }
            return summary
        }
        var halves: [Campaign.Half] = []
        if apnsCount > 0 {
            halves.append(
                Campaign.Half(service: .apns, devices: apnsCount) { engines in
                    let summary = try apnsHalf.run(
                        started: engines.add,
                        waveStarted: engines.add,
                        progress: nil,
                        linger: nil
                    )
                    return rehearsed(summary, devices: apnsCount)
                }
            )
        }
        if let fcmHalf {
            halves.append(
                Campaign.Half(service: .fcm, devices: fcmCount) { engines in
                    defer { companion?.sendsEnded.ended() }
                    return rehearsed(try fcmHalf.run(engines), devices: fcmCount)
                }
            )
        }
        var (document, status) = try Campaign.run(
            halves,
            fleet: ["apns": fleet.apns, "fcm": fleet.fcm],
            into: directory,
            signals: signals,
            reporter: reporter
        )
        document.sample = sample.map {
            SampleSummary(share: $0.share, campaignDevices: self.run.campaignDevices, devices: count)
        }
        return (document, status)
    }

    /// The campaign as its halves send it: itself, or for a scaled rehearsal (`--sample`) one
    /// of the sample's devices with the schedule, the run's duration and the devices' delays
    /// compressed (`RunJob.sampledShape`, `sampledSink`), no sample left to apply again.
    func sampledCampaign() throws(JobError) -> CampaignJob {
        guard run.sample != nil else { return self }
        var campaign = self
        campaign.run.shape = try run.sampledShape()
        campaign.run.sink = run.sampledSink
        campaign.run.count = run.tokenCount
        campaign.run.sample = nil
        return campaign
    }

    /// A half's part of the campaign's open-model schedule: `devices` of its `count` arrivals.
    static func part(
        of schedule: ArrivalSchedule?,
        devices: UInt64,
        of count: UInt64
    ) throws(JobError)
        -> ArrivalSchedule?
    {
        guard let schedule, devices > 0 else { return schedule }
        do {
            return try schedule.scaled(by: Double(devices) / Double(count))
        } catch {
            throw JobError.option(
                .option("--fleet"),
                "\(devices) of \(count) devices' part of the schedule \(schedule) holds no whole arrival (\(error)): give more arrivals (--rate, --duration) or fewer devices (--count)"
            )
        }
    }
}

extension CampaignSample {
    /// The terms of a rehearsal part of `devices` (a campaign's half): the campaign's part is
    /// as many over the share.
    func summary(devices: UInt64) -> SampleSummary {
        SampleSummary(share: share, campaignDevices: UInt64((Double(devices) / share).rounded()), devices: devices)
    }
}

/// The FCM half of a campaign: its sink (started here, with a service account its token
/// endpoint trusts), and the send to it.
struct FCMHalf: Sendable {
    let local: LocalFCMSink
    let folder: String
    let job: SendJob
    let configuration: LoadConfiguration
    /// The wave the half sends itself, when there is no APNs half (whose run sends both halves'
    /// otherwise: `RunJob.companion`); `nil`: none.
    let wave: ReturnWaveSettings?
    let reporter: any JobReporter
    /// The FCM sink answers at once: no hold, no wire (`HarnessAccount.selfMeasurement`).
    let answersAtOnce: Bool

    var sink: FCMSink { local.sink }

    init(campaign: CampaignJob, devices: UInt64, ownsWave: Bool) throws {
        let run = campaign.run
        wave = ownsWave ? run.returnWave : nil
        answersAtOnce = run.sink.scenario.latency == nil && run.sink.scenario.wire == nil
        reporter = campaign.reporter
        folder = NSTemporaryDirectory() + "fanout-campaign-fcm-\(UUID().uuidString)"
        var sinkConfiguration = FCMSinkConfiguration()
        sinkConfiguration.project = CampaignJob.project
        // The run's sink latency is both sinks' (`--sink-latency`), as the wire is, and so are
        // its devices (`--sink-device-…`; the FCM sink keeps each message, has no background
        // budget and keeps a message without ttl four weeks: `FCMService`).
        sinkConfiguration.latency = run.sink.scenario.latency
        sinkConfiguration.devices = run.sink.scenario.devices
        sinkConfiguration.seed = run.sink.scenario.seed
        let account: FCMServiceAccount
        let headers: NotificationHeaders
        do {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            account = try FCMServiceAccount.generated(project: CampaignJob.project)
            headers = try NotificationHeaders(topic: "fcm")
            local = try LocalFCMSink(
                "the FCM half's sink",
                configuration: sinkConfiguration,
                account: account,
                tls: run.apnsSecurity,
                wire: run.sink.scenario.wire,
                threads: run.sinkThreads,
                folder: folder
            )
        } catch {
            try? FileManager.default.removeItem(atPath: folder)
            throw error as? JobError ?? JobError.resource(.part("the FCM half's sink"), "it cannot be set up: \(error)")
        }
        let (sink, certificate, port) = (local.sink, local.certificate, local.port)
        let service = sink.service
        let tokenURI = "\(certificate == nil ? "http" : "https")://127.0.0.1:\(port)/token"
        service.tokenURI = tokenURI
        let credentials = folder + "/" + FCMSinkJob.credentialsFile
        var job = SendJob(
            endpoint: SendJob.Endpoint(tls: certificate != nil, host: "127.0.0.1", port: port),
            template: "fcm-poll",
            headers: headers,
            tokens: TokenSet(
                .generated(TokenGenerator(count: devices, seed: run.seed &+ 1)),
                reader: .init(format: .fcm)
            )
        )
        job.inlineTemplate = PlanJob.fcmPoll
        job.fcm = SendJob.FCM(project: nil, credentials: .serviceAccount(file: credentials, trust: certificate))
        job.tls.trustedCertificates = certificate
        job.shape = run.shape
        job.shape.model.schedule = try CampaignJob.part(
            of: run.shape.model.schedule,
            devices: devices,
            of: run.tokenCount
        )
        // Google's front end grants 100 streams a connection.
        job.shape.streamsPerConnection = min(
            run.shape.streamsPerConnection,
            Int(FCMSinkConfiguration().maxConcurrentStreams)
        )
        job.threads = run.senderThreads
        do {
            try account.json(tokenURI: tokenURI).write(toFile: credentials, atomically: true, encoding: .utf8)
            self.job = job
            configuration = try job.loadConfiguration()
        } catch {
            local.stop()
            try? FileManager.default.removeItem(atPath: folder)
            throw error as? JobError ?? JobError.resource(.part("the FCM half"), "it cannot start: \(error)")
        }
    }

    /// Sends the half, blocking; the summary holds its reconciliation with the FCM sink.
    func run(_ engines: Campaign.Engines) throws -> RunSummary {
        let wave = try self.wave.flatMap { settings in
            try sink.service.fleet.flatMap { try ReturnWaveJob.start([$0], settings, reporter: reporter) }
        }
        // A half that fails stops its wave; one that ends well has finished it (then a no-op).
        defer { wave?.stop() }
        // A stop signal, or the other half failing, ends its wait for what is still due.
        if let wave { engines.add(wave) }
        var summary = try job.run(configuration, started: engines.add)
        sink.drain(grace: .seconds(1))
        if let wave, let settings = self.wave {
            summary.returnWave = try ReturnWaveJob.finish(wave, settings, reporter: reporter)
        }
        summary.reconciliation = Reconciliation(client: summary.report.snapshot, fcmSink: sink.service.statistics)
        summary.delivery = sink.service.fleet.map { DeliverySummary($0.snapshot()) }
        summary.endpoint = "the embedded FCM sink at \(job.endpoint)"
        summary.selfMeasurement = answersAtOnce
        return summary
    }

    func stop() {
        configuration.endpoint.authorizations?.stop()
        local.stop()
        try? FileManager.default.removeItem(atPath: folder)
    }
}

extension Reconciliation {
    /// A sender's counts against an FCM sink's (over HTTP/2: the token endpoint's requests are
    /// HTTP/1.1): every 200 (delivered, held, validated), each refusal by FCM's code, and the
    /// digest of the token sends answered 200.
    init(client: LoadSnapshot, fcmSink statistics: FCMSinkStatistics) {
        self.init(
            client: client,
            sinkRequests: statistics.requests(over: .http2),
            sinkAccepted: statistics[.delivered] + statistics[.held] + statistics[.validated],
            sinkRejected: statistics.rejected,
            sinkDigest: statistics.digest
        )
    }
}
