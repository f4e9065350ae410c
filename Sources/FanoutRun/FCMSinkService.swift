import FanoutAssembly
import FanoutFCM
import FanoutFCMAuth
import FanoutFCMSink
import FanoutFiles
import FanoutInstrument
import FanoutListening
import FanoutMachine
import FanoutNotation
import FanoutResults
import FanoutReturn
import FanoutSink
import FanoutTokens
import FanoutWire
import Foundation
import NIOCore
import NIOPosix
import NIOSSL
import ServiceLifecycle

/// What `fanout sink --service fcm` serves: a mock FCM HTTP v1 (docs/fcm.md) on one port,
/// HTTP/2 and HTTP/1.1, with its token endpoint and, for SDKs, the service-account file that
/// points at it. It holds names and reads them when it starts, so a problem with one is a
/// `JobError` that names it.
public struct FCMSinkJob: Sendable {
    public var host = "127.0.0.1"
    public var port = 2197
    /// Event loops serving connections.
    public var threads = 1
    public var tls = SinkJob.TLS.none
    public var configuration = FCMSinkConfiguration()
    /// `--fcm-credentials FILE`: the service account whose key the token endpoint trusts;
    /// without it the sink makes one.
    public var credentials: String?
    /// `--fcm-credentials-out DIR`: where `service-account.json` is written, its `token_uri`
    /// this sink's token endpoint.
    public var credentialsOut: String?
    /// `--rtt`, `--bandwidth`, `--sink-bandwidth`: a path in front of every connection.
    public var wire: SinkWire?
    /// `--unregistered-tokens FILE`: FCM registration tokens, in the lines `fanout send
    /// --service fcm` reads, each answered 404 UNREGISTERED (`FCMSinkConfiguration
    /// .unregisteredTokens`).
    public var unregisteredTokens: String?
    /// Where that path was given, for its error: `--unregistered-tokens` or a scenario file's
    /// `FILE:LINE`.
    public var unregisteredTokensGiven = "--unregistered-tokens"
    /// The scenario file the settings came from (`--scenario`), recorded in the folder.
    public var scenarioFile: FileUse?
    /// Where `/stats` and `/metrics` are served (`--admin`), if anywhere.
    public var admin: (host: String, port: Int)?
    /// Where the live page is served (`--serve`), if anywhere: the sends accepted and refused
    /// (by FCM's errorCode) each second and the connections open, then, with `--output`, the
    /// folder's report.
    public var serve: ServedAddress?
    /// When the sink ends by itself (`--expect`, `--duration`, `--idle-exit`,
    /// `--first-request-within`): `--expect` counts sends accepted for a device (delivered or
    /// held; `FCMSinkStatistics.Outcome.isAccepted`).
    public var ending = SinkJob.Ending()
    /// `--output DIR` (with `--plan-rtt`, `--min-measured`): the sink as the provider's
    /// instrument, its folder written when it stops (`FCMProviderMeasurements`).
    public var instrument: SinkJob.Instrument?
    /// How the return wave is sent, when the fleet's devices engage (`--return-to`).
    public var returnWave = ReturnWaveSettings()
    public var reporter: any JobReporter = SilentReporter()

    public init() {}

    /// The file `credentialsOut` holds.
    public static let credentialsFile = "service-account.json"
}

extension SinkJob.TokenList {
    /// Reads `path`: FCM registration tokens, in the lines `fanout send --service fcm` reads,
    /// looked up by `FCMTokenFate.hash` of their text as it is (FCM tokens are not hex, and their
    /// case counts), as the FCM sink hashes each send's token.
    public init(expectingFCM path: String) throws(JobError) {
        let tokens = try Self.tokens(at: path, format: .fcm)
        self.init(path: path, expected: ExpectedTokens(hashes: tokens.map(FCMTokenFate.hash)))
    }
}

/// The FCM sink as a ServiceLifecycle service: it says where it listens and where its
/// credentials are, serves until SIGINT, SIGTERM, SIGHUP or one of its own ends (`SinkJob.Ending`), then drains (GOAWAY
/// on HTTP/2, `connection: close` on HTTP/1.1) and says what it answered.
public struct FCMSinkService: Service {
    public let job: FCMSinkJob

    public init(_ job: FCMSinkJob) { self.job = job }

    public func run() async throws {
        try ReturnWaveJob.check(job.configuration.devices.engagement, job.returnWave)
        let output = try job.instrument.map { try OutputFolder(prepare: $0.output) }
        let expected = job.instrument?.expectTokens?.expected
        let instrument = job.instrument.map { settings in
            ProviderInstrument(startMark: settings.trigger == nil ? .firstRequest : .explicit, expected: expected)
        }
        let started = Date()
        let running: Running
        do {
            running = try await NIOThreadPool.singleton.runIfActive { try start(instrument: instrument) }
        } catch {
            output?.discard()
            throw error
        }
        let wave: ReturnWave?
        do {
            wave = try running.sink.service.fleet.flatMap {
                try ReturnWaveJob.start([$0], job.returnWave, metrics: running.admin?.additions, reporter: job.reporter)
            }
        } catch {
            try await NIOThreadPool.singleton.runIfActive {
                running.stop()
                running.live?.close()
            }
            output?.discard()
            throw error
        }
        let statistics = running.sink.service.statistics
        let trigger: TriggerProcess?
        do {
            trigger = try job.instrument?.trigger.flatMap { command in
                guard let output, let instrument else { return nil }
                instrument.markStart(at: NIODeadline.now().uptimeNanoseconds)
                return try TriggerProcess(
                    command: command,
                    log: output.path + "/" + TriggerProcess.logName,
                    sinkPort: running.sink.localAddress.port,
                    ended: { statistics.changes.signal() }
                )
            }
        } catch {
            wave?.stop()
            try await NIOThreadPool.singleton.runIfActive {
                running.stop()
                running.live?.close()
            }
            output?.discard()
            throw error
        }
        let endedBy: SinkJob.Ending.Reason
        do {
            endedBy = try await withThrowingTaskGroup(of: SinkJob.Ending.Reason.self) { tasks in
                tasks.addTask {
                    try? await gracefulShutdown()
                    return .signal
                }
                tasks.addTask {
                    let reporter = job.reporter
                    let watch = SinkEndingWatch(
                        ending: job.ending,
                        activity: statistics,
                        expected: expected,
                        trigger: trigger,
                        triggerFailed: { reporter.report(.sink(.serving($0))) }
                    )
                    guard let live = running.live else { return try await watch.wait(on: running.group.next()) }
                    var seconds = SinkLiveSeconds<FCMErrorCode>()
                    return try await watch.wait(on: running.group.next()) { elapsed in
                        live.update(
                            seconds.close(
                                elapsed: elapsed,
                                accepted: statistics.acceptedCount,
                                rejected: statistics.rejectedByCode,
                                connections: running.sink.openConnections
                            )
                        )
                    }
                }
                let first = try await tasks.next()!
                tasks.cancelAll()
                return first
            }
        } catch {
            trigger?.stop()
            wave?.stop()
            try await NIOThreadPool.singleton.runIfActive {
                running.stop()
                running.live?.close()
            }
            output?.discard()
            throw error
        }
        let returnWave = try await ReturnWaveJob.finish(
            wave,
            job.returnWave,
            stoppedBySignal: endedBy == .signal,
            reporter: job.reporter,
            draining: { running.sink.drain() }
        )
        try await NIOThreadPool.singleton.runIfActive {
            defer { running.live?.close() }
            running.stop()
            trigger?.stop()
            let sink = running.sink
            let delivery = sink.service.fleet.map { DeliverySummary($0.snapshot()).lines(for: .fcm) } ?? []
            job.reporter.report(
                .sinkStopped(
                    lines: FCMSinkSummary(sink.service.statistics).lines + delivery + (returnWave?.lines ?? [])
                )
            )
            if let output {
                try write(
                    output,
                    sink,
                    listen: running.address,
                    started: started,
                    endedBy: endedBy,
                    trigger: trigger,
                    returnWave: returnWave
                )
            }
            try running.live?.finish(folder: output?.path)
        }
    }

    /// A started FCM sink and what serves beside it.
    private struct Running: Sendable {
        var group: MultiThreadedEventLoopGroup
        var sink: FCMSink
        var admin: FCMSinkAdmin?
        var live: LiveReport?
        /// Where it listened (`host:port`), kept: the address goes with the listening socket.
        var address: String

        /// Drains the sink (GOAWAY on HTTP/2, `connection: close` on HTTP/1.1), closes the
        /// admin endpoint and stops the loops.
        func stop() {
            sink.drain()
            admin?.close()
            try? group.syncShutdownGracefully()
        }
    }

    /// The run folder of what the drained sink measured of the provider.
    private func write(
        _ output: OutputFolder,
        _ sink: FCMSink,
        listen: String,
        started: Date,
        endedBy: SinkJob.Ending.Reason,
        trigger: TriggerProcess?,
        returnWave: ReturnWaveSummary?
    ) throws {
        guard let settings = job.instrument,
            var measurements = FCMProviderMeasurements.read(
                sink,
                listen: listen,
                started: started,
                job: job,
                settings: settings,
                endedBy: endedBy.rawValue,
                trigger: trigger
            )
        else { return }
        measurements.returnWave = returnWave
        let report = SinkRunReport(measurements)
        try output.write(report, telling: job.reporter)
    }

    /// The sink's configuration with the files it names read, and its connection limits
    /// where none was given: the APNs sink's defaults (three quarters of the descriptors the
    /// open-file limit leaves, at most `ConnectionFaults.mostConnectionsByDefault`; a quarter
    /// of that default from one address, whatever total is given, and a quarter of that idle:
    /// `ConnectionAdmission.peerLimits`).
    func configuration() throws -> FCMSinkConfiguration {
        var configuration = job.configuration
        let defaultTotal = ConnectionFaults.defaultMaxConnections(.current(), eventLoops: job.threads)
        if configuration.maxConnections == nil { configuration.maxConnections = defaultTotal }
        let peerLimits = ConnectionAdmission<Int>.peerLimits(
            perPeer: configuration.maxConnectionsPerPeer,
            idlePerPeer: configuration.maxIdleConnectionsPerPeer,
            defaultTotal: defaultTotal
        )
        configuration.maxConnectionsPerPeer = peerLimits.perPeer
        configuration.maxIdleConnectionsPerPeer = peerLimits.idlePerPeer
        if let path = job.unregisteredTokens {
            do {
                configuration.unregisteredTokens = Set(
                    try TokenListFile.tokens(at: path, format: .fcm).map(FCMTokenFate.hash)
                )
            } catch {
                throw JobError.input(.file(job.unregisteredTokensGiven), "\(error)")
            }
        }
        return configuration
    }

    private func start(instrument: ProviderInstrument?) throws -> Running {
        let account = try account()
        let reporter = job.reporter
        let service = FCMService(
            configuration: try configuration(),
            account: account,
            instrument: instrument,
            wireRoundTrip: job.wire?.roundTrip.largest ?? 0
        ) { line in
            reporter.report(.sink(.serving(line)))
        }
        let context = try tlsContext()
        let group = MultiThreadedEventLoopGroup(numberOfThreads: job.threads)
        let sink: FCMSink
        do {
            sink = try FCMSink(
                host: job.host,
                port: job.port,
                group: group,
                tls: context,
                wire: job.wire,
                service: service
            )
        } catch {
            try? group.syncShutdownGracefully()
            throw JobError.cannotListen(.address(nil, host: job.host, port: job.port), error)
        }
        var admin: FCMSinkAdmin?
        var live: LiveReport?
        do {
            live = try job.serve.map { try LiveReport(at: $0, command: "sink", reporter: job.reporter) }
            if let address = job.admin {
                do {
                    admin = try FCMSinkAdmin(sink: sink, host: address.host, port: address.port)
                } catch {
                    throw JobError.cannotListen(.address("--admin", host: address.host, port: address.port), error)
                }
            }
            try announce(sink, admin: admin, account: account, tls: context != nil)
        } catch {
            admin?.close()
            live?.close()
            sink.drain(grace: .zero)
            try? group.syncShutdownGracefully()
            throw error
        }
        return Running(
            group: group,
            sink: sink,
            admin: admin,
            live: live,
            address: Sink.describe(sink.localAddress)
        )
    }

    /// Says where the sink listens and writes the credentials that name its token endpoint.
    private func announce(_ sink: FCMSink, admin: FCMSinkAdmin?, account: FCMServiceAccount?, tls: Bool) throws {
        let reporter = job.reporter
        let service = sink.service
        let address = Sink.describe(sink.localAddress)
        // An SDK reaches the token endpoint by this address: a wildcard listen is reached on loopback.
        let reachable =
            ["0.0.0.0", "::", ""].contains(job.host) ? "127.0.0.1:\(sink.localAddress.port ?? job.port)" : address
        service.tokenURI = "\(tls ? "https" : "http")://\(reachable)/token"
        reporter.report(.listening(.sink, address: address))
        if let admin { reporter.report(.listening(.admin, address: Sink.describe(admin.localAddress))) }
        // Connection limits lowered by the open-file limit: said, as the APNs sink says them.
        if job.configuration.maxConnections == nil, let total = service.configuration.maxConnections,
            total < ConnectionFaults.mostConnectionsByDefault
        {
            reporter.report(
                .sink(
                    .connectionLimit(
                        connections: total,
                        openFiles: MachineLimits.current().openFiles,
                        perPeer: service.configuration.maxConnectionsPerPeer ?? total
                    )
                )
            )
        }
        if let wire = job.wire { reporter.report(.sink(.wire(wire.description))) }
        if case .selfSigned(let directory) = job.tls { reporter.report(.sink(.selfSigned(directory: directory))) }
        if let account, let directory = job.credentialsOut {
            let path = try write(account, into: directory, tokenURI: service.tokenURI!)
            reporter.report(.sink(.fcmCredentials(path: path, tokenURI: service.tokenURI!)))
        }
        if account == nil { reporter.report(.sink(.fcmAnyBearer)) }
    }

    /// The service account the token endpoint trusts: read from `--fcm-credentials`, or new.
    private func account() throws -> FCMServiceAccount? {
        guard job.configuration.authentication == .serviceAccount else { return nil }
        guard let path = job.credentials else {
            do { return try FCMServiceAccount.generated(project: job.configuration.project) } catch {
                throw JobError.resource(.part("a service account's RSA key"), "it cannot be made: \(error)")
            }
        }
        let account: FCMServiceAccount
        do { account = try FCMServiceAccount(file: path) } catch {
            throw JobError.read("--fcm-credentials", error)
        }
        guard account.projectID == job.configuration.project else {
            throw JobError.input(
                .optionValue("--fcm-credentials", path),
                "its project_id is \(account.projectID), the sink serves --project \(job.configuration.project)"
            )
        }
        return account
    }

    private func write(_ account: FCMServiceAccount, into directory: String, tokenURI: String) throws -> String {
        let path = directory + "/" + FCMSinkJob.credentialsFile
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            // A private key: created its owner's to read (open(2) with mode 0600; Foundation's
            // createFile writes first and sets the mode after), never readable by others for a
            // moment. A file already there is replaced, not rewritten with its old mode.
            try? FileManager.default.removeItem(atPath: path)
            let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
            guard descriptor >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
            let file = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
            try file.write(contentsOf: Data(account.json(tokenURI: tokenURI).utf8))
            try file.close()
        } catch {
            throw JobError.cannotWrite(.optionValue("--fcm-credentials-out", path), error.localizedDescription)
        }
        return path
    }

    private func tlsContext() throws -> NIOSSLContext? {
        let certificate: String
        let key: String
        switch job.tls {
        case .none:
            return nil
        case .files(let certificateFile, let keyFile):
            (certificate, key) = (certificateFile, keyFile)
        case .selfSigned(let directory):
            do {
                // FCM's own host names too: an SDK as shipped reaches the sink through the hosts file.
                let files = try SinkCertificates.writeSelfSigned(
                    into: directory,
                    hosts: [job.host, "fcm.googleapis.com", "oauth2.googleapis.com"]
                )
                (certificate, key) = (files.certificate, files.key)
            } catch {
                throw JobError.cannotWrite(
                    .optionValue("--tls-self-signed", directory),
                    "a self-signed certificate: \(error)"
                )
            }
        }
        do {
            return try FCMSink.tlsContext(certificateFile: certificate, keyFile: key)
        } catch {
            throw JobError.input(.part("the TLS files \(certificate), \(key)"), "they cannot be used: \(error)")
        }
    }
}

/// What an FCM sink answered, in lines for the console.
///
/// ```
///   fcm sink: 1,020 requests (h2 500, http/1.1 520) over 3 connections
///     delivered 900 · validated 20 · unregistered 50 · sender_id_mismatch 40 · quota_exceeded 10
///     tokens issued 2
/// ```
public struct FCMSinkSummary: Sendable {
    public var lines: [String]

    public init(_ statistics: FCMSinkStatistics) {
        let transports = FCMSinkStatistics.Transport.allCases
        let requests = transports.map { "\($0.name) \(statistics.requests(over: $0).grouped)" }
        let connections = transports.reduce(0) { $0 + statistics.connections(over: $1) }
        let answers = FCMSinkStatistics.Outcome.allCases.filter { $0 != .tokenIssued && $0 != .tokenRefused }
            .filter { statistics[$0] > 0 || $0 == .delivered }
            .map { "\($0.name) \(statistics[$0].grouped)" }
        lines = [
            "fcm sink: \(statistics.totalRequests.grouped) requests (\(requests.joined(separator: ", "))) over \(connections.grouped) connection\(connections == 1 ? "" : "s")",
            "  " + answers.joined(separator: " · "),
            "  tokens issued \(statistics[.tokenIssued].grouped), refused \(statistics[.tokenRefused].grouped)",
        ]
    }
}
