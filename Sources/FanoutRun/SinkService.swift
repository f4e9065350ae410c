import FanoutAPNs
import FanoutAssembly
import FanoutFiles
import FanoutHTTP2
import FanoutInstrument
import FanoutListening
import FanoutMachine
import FanoutMeasure
import FanoutNotation
import FanoutPush
import FanoutReport
import FanoutResults
import FanoutReturn
import FanoutSink
import FanoutTokens
import Foundation
import NIOCore
import NIOPosix
import ServiceLifecycle

/// What `fanout sink` serves: where, over what, with which files. It holds names and reads
/// them when it starts, so a problem with one is a `JobError` that names it.
public struct SinkJob: Sendable {
    /// How connections are secured.
    public enum TLS: Sendable, Hashable {
        /// h2c with prior knowledge.
        case none
        /// TLS with ALPN h2 and this certificate chain and key (PEM).
        case files(certificate: String, key: String)
        /// TLS with a new self-signed certificate, written to DIR/cert.pem and DIR/key.pem.
        case selfSigned(directory: String)
    }

    /// Token auth's key (a .p8 or a public key in PEM) and who it belongs to.
    public struct TokenKey: Sendable, Hashable {
        public var file: String
        public var keyID: String
        public var teamID: String

        public init(file: String, keyID: String, teamID: String) {
            self.file = file
            self.keyID = keyID
            self.teamID = teamID
        }
    }

    public var host = "127.0.0.1"
    public var port = 2197
    /// Event loops serving connections.
    public var threads = Sink.defaultEventLoops
    public var tls = TLS.none
    /// Certificate auth: ask TLS clients for a certificate issued by these CAs (PEM).
    public var clientCertificateAuthorities: String?
    public var tokenKey: TokenKey?
    /// Where `/stats` and `/metrics` are served, if anywhere.
    public var admin: (host: String, port: Int)?
    /// Where the live report is served (`--serve`), if anywhere.
    public var serve: ServedAddress?
    /// Where received notifications are written, and which.
    public var capture: (path: String, selection: SinkCapture.Selection)?
    /// The APNs rules, limits and scenario.
    public var configuration = SinkConfiguration()
    /// When the sink ends by itself, and what it measures of the provider under test.
    public var ending = Ending()
    public var instrument: Instrument?
    /// How the return wave is sent, when the devices engage (`--return-to`).
    public var returnWave = ReturnWaveSettings()
    /// Where the sink's events go (where it listens, what it says as it serves, its counts at
    /// the end): by default nowhere.
    public var reporter: any JobReporter = SilentReporter()

    public init() {}

    /// When the sink stops by itself (besides SIGINT and SIGTERM).
    public struct Ending: Sendable, Hashable {
        /// Once this many notifications were accepted.
        public var expect: Int?
        /// This long after it started listening.
        public var duration: Duration?
        /// This long after the last request (within a second: counts reach the statistics
        /// at least once a second).
        public var idleExit: Duration?
        /// With `idleExit`: how long it waits for a first request before it stops, never less
        /// than `idleExit` (a provider started after the sink needs the time to come).
        public var firstRequestWithin: Duration = .seconds(60)

        public init() {}

        /// What ended a run: summary.json's `provider.ended_by`.
        public enum Reason: String, Sendable {
            case expect
            case expectTokens = "expect-tokens"
            case duration
            case idleExit = "idle-exit"
            /// `--idle-exit` given and no request within `--first-request-within`.
            case noRequest = "no-request"
            /// SIGINT or SIGTERM.
            case signal
        }
    }

    /// `--output DIR`: the provider under test measured, written to DIR when the sink stops.
    public struct Instrument: Sendable, Hashable {
        public var output: String
        /// `--expect-tokens FILE`: stop once every token of it was accepted. Read when the
        /// job is made (`TokenList(expecting:)`), before the sink watches for signals.
        public var expectTokens: TokenList?
        /// `--trigger CMD`: run with `/bin/sh -c` once listening; the start mark.
        public var trigger: String?
        /// `--plan-rtt`: the round trip the capacity line speaks of.
        public var planRTT: Duration = .milliseconds(80)
        /// `--min-measured`: a folder whose sink received fewer requests is invalid.
        public var minMeasured = MinimumMeasured.default
        /// `--liveactivity-priority-budget`: priority-10 broadcasts a channel may carry per
        /// window before the card counts them (`liveactivity-over-budget`).
        public var priorityBudget = ProviderRule.Broadcast.priorityBudget
        public var priorityWindow = ProviderRule.Broadcast.priorityWindow

        public init(output: String) {
            self.output = output
        }
    }

    /// `--expect-tokens FILE`'s tokens, read whole when the job is made: before the sink's
    /// `ServiceGroup` takes SIGINT and SIGTERM for its drain. Read inside the service, a FIFO
    /// with no writer held it in open() with both signals caught and unanswered (issue 61,
    /// review); read here, the signal ends the command as it would any other.
    public struct TokenList: Sendable, Hashable {
        public var path: String
        /// The set, hashed: the tokens' text is not kept (a list near 1 GiB would stay
        /// resident for the whole run beside its index).
        public let expected: ExpectedTokens

        /// Reads `path`: device tokens in hex (an FCM sink's list: `init(expectingFCM:)`).
        public init(expecting path: String) throws(JobError) {
            self.init(path: path, expected: ExpectedTokens(try Self.tokens(at: path, format: .default)))
        }

        init(path: String, expected: ExpectedTokens) {
            self.path = path
            self.expected = expected
        }

        /// The tokens of `path` in `format`, at least one.
        static func tokens(at path: String, format: DeviceTokenFormat) throws(JobError) -> [String] {
            let tokens: [String]
            do { tokens = try TokenListFile.tokens(at: path, format: format) } catch {
                throw error.line == nil
                    ? JobError.cannotRead(.optionValue("--expect-tokens", path), error.message)
                    : JobError.read("--expect-tokens", error)
            }
            guard !tokens.isEmpty else { throw JobError.holdsNo(.optionValue("--expect-tokens", path), "token") }
            return tokens
        }

        /// One list is another when it read the same file into the same set (by identity: a
        /// set counts what was accepted, so two readings are two sets).
        public static func == (left: TokenList, right: TokenList) -> Bool {
            left.path == right.path && left.expected === right.expected
        }

        public func hash(into hasher: inout Hasher) {
            hasher.combine(path)
            hasher.combine(ObjectIdentifier(expected))
        }
    }
}

/// The sink as a ServiceLifecycle service: it tells its job's reporter where it listens once it
/// does (`listening on HOST:PORT` on the console), and on graceful shutdown (SIGINT or SIGTERM
/// through a `ServiceGroup`) drains — new requests get 503 Shutdown, every connection GOAWAY —
/// and tells its summary.
public struct SinkService: Service {
    public let job: SinkJob

    public init(_ job: SinkJob) {
        self.job = job
    }

    public func run() async throws {
        try ReturnWaveJob.check(job.configuration.scenario.devices.engagement, job.returnWave)
        let output = try job.instrument.map { try OutputFolder(prepare: $0.output) }
        let expected = job.instrument?.expectTokens?.expected
        let instrument = job.instrument.map { settings in
            ProviderInstrument(
                startMark: settings.trigger == nil ? .firstRequest : .explicit,
                expected: expected,
                priorityBudget: settings.priorityBudget,
                priorityWindow: settings.priorityWindow
            )
        }
        let running: Running
        do {
            running = try await NIOThreadPool.singleton.runIfActive { try start(instrument: instrument) }
        } catch {
            output?.discard()
            throw error
        }
        let wave: ReturnWave?
        do {
            wave = try running.sink.fleet.flatMap {
                try ReturnWaveJob.start([$0], job.returnWave, metrics: running.admin?.additions, reporter: job.reporter)
            }
        } catch {
            try await NIOThreadPool.singleton.runIfActive {
                running.stop(telling: nil)
                running.live?.close()
            }
            output?.discard()
            throw error
        }
        let trigger: TriggerProcess?
        do {
            trigger = try job.instrument?.trigger.flatMap { command in
                guard let output, let instrument else { return nil }
                instrument.markStart(at: NIODeadline.now().uptimeNanoseconds)
                let changes = running.sink.statistics.changes
                return try TriggerProcess(
                    command: command,
                    log: output.path + "/" + TriggerProcess.logName,
                    sinkPort: running.sink.localAddress.port,
                    ended: { changes.signal() }
                )
            }
        } catch {
            wave?.stop()
            try await NIOThreadPool.singleton.runIfActive {
                running.stop(telling: nil)
                running.live?.close()
            }
            output?.discard()
            throw error
        }
        let endedBy: SinkJob.Ending.Reason
        do {
            endedBy = try await withThrowingTaskGroup(of: SinkJob.Ending.Reason.self) { group in
                group.addTask {
                    try? await gracefulShutdown()
                    return .signal
                }
                group.addTask {
                    try await watch(
                        running.sink,
                        on: running.group.next(),
                        instrument: instrument,
                        trigger: trigger,
                        live: running.live
                    )
                }
                let first = try await group.next()!
                group.cancelAll()
                return first
            }
        } catch {
            trigger?.stop()
            wave?.stop()
            try await NIOThreadPool.singleton.runIfActive {
                running.stop(telling: nil)
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
            running.stop(telling: job.reporter, returnWave: returnWave)
            trigger?.stop()
            if let output, let instrument {
                try write(output, running, instrument, endedBy: endedBy, trigger: trigger, returnWave: returnWave)
            }
            try running.live?.finish(folder: output?.path)
        }
    }

    /// The run folder of what the drained sink measured.
    private func write(
        _ output: OutputFolder,
        _ running: Running,
        _ instrument: ProviderInstrument,
        endedBy: SinkJob.Ending.Reason,
        trigger: TriggerProcess?,
        returnWave: ReturnWaveSummary?
    ) throws {
        guard let settings = job.instrument else { return }
        var measurements = ProviderMeasurements.read(
            running.sink,
            listen: running.address,
            instrument: instrument,
            job: job,
            settings: settings,
            endedBy: endedBy.rawValue,
            trigger: trigger
        )
        measurements.returnWave = returnWave
        try output.write(SinkRunReport(measurements), telling: job.reporter)
    }

    /// Waits for the first of the job's ends (`SinkEndingWatch`); once a second it gives `live`
    /// the second's figures.
    private func watch(
        _ sink: Sink,
        on loop: any EventLoop,
        instrument: ProviderInstrument?,
        trigger: TriggerProcess?,
        live: LiveReport?
    ) async throws -> SinkJob.Ending.Reason {
        let reporter = job.reporter
        let watch = SinkEndingWatch(
            ending: job.ending,
            activity: sink.statistics,
            expected: instrument?.expected,
            trigger: trigger,
            triggerFailed: { reporter.report(.sink(.serving($0))) }
        )
        guard let live else { return try await watch.wait(on: loop) }
        var seconds = SinkLiveSeconds<APNsReason>()
        return try await watch.wait(on: loop) { elapsed in
            let summary = sink.statistics.summary
            live.update(
                seconds.close(
                    elapsed: elapsed,
                    accepted: summary.accepted,
                    rejected: summary.rejected,
                    connections: sink.statistics.openConnections.count
                )
            )
        }
    }

    /// A started sink and what serves beside it.
    private struct Running: Sendable {
        var group: MultiThreadedEventLoopGroup
        var sink: Sink
        var admin: SinkAdmin?
        var live: LiveReport?
        /// Where it listened (`host:port`), kept: the address goes with the listening socket.
        var address: String

        /// Drains and stops the sink; tells `reporter`, when there is one, the sink's counts.
        func stop(telling reporter: (any JobReporter)?, returnWave: ReturnWaveSummary? = nil) {
            let summary = sink.drain()
            admin?.close()
            if let reporter {
                let delivery = sink.fleet.map { DeliverySummary($0.snapshot()).lines } ?? []
                let broadcast = sink.broadcastRecords.map { [$0.counts.line] } ?? []
                let wave = returnWave?.lines ?? []
                reporter.report(.sinkStopped(lines: [summary.text] + delivery + broadcast + wave))
            }
            try? group.syncShutdownGracefully()
        }
    }

    private func start(instrument: ProviderInstrument?) throws -> Running {
        var configuration = job.configuration
        configuration.instrument = instrument
        if let key = job.tokenKey {
            let pem: String
            do {
                pem = try String(contentsOfFile: key.file, encoding: .utf8)
            } catch {
                throw JobError.cannotRead(.optionValue("--key-file", key.file), error.reason)
            }
            do {
                let key = try TokenAuthentication.Key(keyID: key.keyID, teamID: key.teamID, pem: pem)
                var authentication = TokenAuthentication(keys: [key])
                // Which claim was wrong, and how: what a 403 InvalidProviderToken cannot say.
                authentication.faults = TokenFaults { [reporter = job.reporter] line in
                    reporter.report(.sink(.serving(line)))
                }
                configuration.tokenAuthentication = authentication
            } catch {
                throw JobError.holdsNo(.optionValue("--key-file", key.file), "P-256 key in PEM: \(error)")
            }
        }
        configuration.limitLog = { [reporter = job.reporter] line in reporter.report(.sink(.serving(line))) }
        let transport = try transport()
        configuration.certificateAuthentication = job.clientCertificateAuthorities != nil
        if let capture = job.capture {
            do {
                configuration.capture = try SinkCapture(path: capture.path, selection: capture.selection)
            } catch {
                throw JobError.output(.option("--capture"), "\(error)")
            }
        }

        let group = MultiThreadedEventLoopGroup(numberOfThreads: job.threads)
        let sink: Sink
        do {
            sink = try Sink(
                host: job.host,
                port: job.port,
                group: group,
                transport: transport,
                configuration: configuration
            )
        } catch {
            try? group.syncShutdownGracefully()
            throw JobError.cannotListen(.address(nil, host: job.host, port: job.port), error)
        }
        var admin: SinkAdmin?
        if let address = job.admin {
            do {
                admin = try SinkAdmin(sink: sink, host: address.host, port: address.port)
            } catch {
                sink.drain(grace: .zero)
                try? group.syncShutdownGracefully()
                throw JobError.cannotListen(.address("--admin", host: address.host, port: address.port), error)
            }
        }
        let live: LiveReport?
        do {
            live = try job.serve.map { try LiveReport(at: $0, command: "sink", reporter: job.reporter) }
        } catch {
            admin?.close()
            sink.drain(grace: .zero)
            try? group.syncShutdownGracefully()
            throw error
        }
        let reporter = job.reporter
        reporter.report(.listening(.sink, address: Sink.describe(sink.localAddress)))
        if let admin { reporter.report(.listening(.admin, address: Sink.describe(admin.localAddress))) }
        if case .selfSigned(let directory) = job.tls { reporter.report(.sink(.selfSigned(directory: directory))) }
        if let wire = configuration.scenario.wire { reporter.report(.sink(.wire(wire.description))) }
        if configuration.scenario.faults.maxConnections == nil
            && sink.maxConnections < ConnectionFaults.mostConnectionsByDefault
        {
            reporter.report(
                .sink(
                    .connectionLimit(
                        connections: sink.maxConnections,
                        openFiles: MachineLimits.current().openFiles,
                        perPeer: sink.maxConnectionsPerPeer
                    )
                )
            )
        }
        if configuration.tokenAuthentication == nil && !configuration.certificateAuthentication {
            reporter.report(.sink(.authenticationOff))
        }
        return Running(group: group, sink: sink, admin: admin, live: live, address: Sink.describe(sink.localAddress))
    }

    private func transport() throws -> HTTP2Transport {
        let certificate: String
        let key: String
        switch job.tls {
        case .none:
            return .cleartext
        case .files(let certificateFile, let keyFile):
            (certificate, key) = (certificateFile, keyFile)
        case .selfSigned(let directory):
            do {
                let files = try SinkCertificates.writeSelfSigned(into: directory, hosts: [job.host])
                (certificate, key) = (files.certificate, files.key)
            } catch {
                throw JobError.cannotWrite(
                    .optionValue("--tls-self-signed", directory),
                    "a self-signed certificate: \(error)"
                )
            }
        }
        do {
            return try .tlsServer(
                certificateFile: certificate,
                keyFile: key,
                clientCertificateAuthorities: job.clientCertificateAuthorities
            )
        } catch {
            let files = [certificate, key] + (job.clientCertificateAuthorities.map { [$0] } ?? [])
            throw JobError.input(
                .part("the TLS files \(files.joined(separator: ", "))"),
                "they cannot be used: \(error)"
            )
        }
    }
}
