import FanoutAPNs
import FanoutAssembly
import FanoutClient
import FanoutEndpoint
import FanoutFCM
import FanoutFCMAuth
import FanoutFiles
import FanoutHTTP2
import FanoutMeasure
import FanoutNotation
import FanoutPayload
import FanoutPush
import FanoutReport
import FanoutResults
import FanoutTokens
import Foundation
import NIOConcurrencyHelpers
import NIOPosix

/// `fanout send`'s job: a token set's notifications to any APNs-compatible endpoint. It holds
/// names (files, the endpoint) and reads them when it runs, so a problem with one is a
/// `JobError` that names it.
public struct SendJob: Sendable {
    /// Where to send: h2c with prior knowledge, or TLS with ALPN h2.
    public struct Endpoint: Sendable, Hashable, CustomStringConvertible {
        public var tls: Bool
        public var host: String
        public var port: Int

        public init(tls: Bool, host: String, port: Int) {
            self.tls = tls
            self.host = host
            self.port = port
        }

        /// `http://HOST:PORT` or `https://HOST[:PORT]` (443 by default); IPv6 hosts in brackets.
        public init(parsing text: String) throws(JobError) {
            guard let url = URLComponents(string: text), let scheme = url.scheme, ["http", "https"].contains(scheme),
                let host = url.host, !host.isEmpty, url.path.isEmpty || url.path == "/"
            else {
                throw JobError.option(.command, "the endpoint is http://HOST:PORT or https://HOST[:PORT], not \(text)")
            }
            tls = scheme == "https"
            self.host = host.trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
            port = url.port ?? (tls ? 443 : 80)
        }

        public var description: String { "\(tls ? "https" : "http")://\(host):\(port)" }

        /// Apple's APNs host this endpoint names, if it names one.
        public var apple: APNsHost? { APNsHost(host: host) }

        /// Why a send to this endpoint is refused before any socket opens, if it is: synthetic
        /// tokens to Apple's hosts, or Apple's production host without `--production`.
        public func refusal(generatedTokens: Bool, production: Bool) -> String? {
            guard let apple else { return nil }
            if generatedTokens {
                return "--generate makes synthetic device tokens, and \(host) is Apple's APNs: Apple answers every "
                    + "one BadDeviceToken, and floods of rejected requests get a provider's connections closed and "
                    + "throttled. Measure with synthetic tokens against `fanout sink` (or `fanout run`), or send "
                    + "Apple a file of real device tokens with --tokens FILE."
            }
            if apple.isProduction && !production {
                return "\(host) is Apple's production APNs, which delivers to the devices of released apps: add "
                    + "--production to send there (development builds use \(APNsHost.sandbox.rawValue))."
            }
            return nil
        }
    }

    /// TLS files: whom to trust, and a client certificate for certificate auth.
    public struct TLSFiles: Sendable, Hashable {
        public var trustedCertificates: String?
        /// Trust any server certificate (loopback tests only).
        public var insecure = false
        public var certificate: String?
        public var certificateKey: String?

        public init() {}
    }

    /// Token auth: the .p8 key and who it belongs to.
    public struct TokenAuth: Sendable, Hashable {
        public var keyFile: String
        public var keyID: String
        public var teamID: String
        /// Renew the provider token this often (APNs allows 20 to 60 minutes).
        public var refresh = Self.defaultRefresh
        public static let defaultRefresh: Duration = .seconds(50 * 60)

        public init(keyFile: String, keyID: String, teamID: String) {
            self.keyFile = keyFile
            self.keyID = keyID
            self.teamID = teamID
        }
    }

    /// FCM HTTP v1 instead of APNs (`--service fcm`, docs/fcm.md): the project and how the
    /// sender authenticates.
    public struct FCM: Sendable, Hashable {
        /// The project whose `messages:send` every request posts to; `nil`: the service
        /// account's `project_id`.
        public var project: String?
        public var credentials: Credentials

        public enum Credentials: Sendable, Hashable {
            /// A service-account file (`--fcm-credentials`): its key signs the assertion its
            /// `token_uri` exchanges for access tokens, renewed ahead of their expiry and after
            /// a 401. `trust`: a PEM file of certificates the token endpoint's TLS is checked
            /// against (`--fcm-token-trust`; else the endpoint's `--ca-file`, as a sink serves
            /// both; else the system's).
            case serviceAccount(file: String, trust: String?)
            /// One access token for the whole run (`--fcm-bearer`), never renewed.
            case bearer(String)
        }

        public init(project: String?, credentials: Credentials) {
            self.project = project
            self.credentials = credentials
        }
    }

    public var endpoint: Endpoint
    /// FCM HTTP v1 sends instead of APNs notifications; the template is then a send request
    /// (`{"message": {…}}`) and `headers` go unused.
    public var fcm: FCM?
    /// The notification's template file, and how it is read.
    public var template: String
    /// A template given as its JSON instead of a file (`fanout probe`'s default).
    public var inlineTemplate: String?
    /// The template file is a campaign's, both services' notifications in one
    /// (`CampaignTemplate`), and this job sends this service's half of it
    /// (`fanout send --fcm-endpoint`).
    public var templateHalf: PushService?
    public var templateOptions = PayloadTemplate.Options()
    public var headers: NotificationHeaders
    /// The `--scenario` file the headers were read from, recorded in the summary.
    public var scenario: FileUse?
    public var tokens: TokenSet
    /// Connections, streams, timeouts, tries, the load model.
    public var shape = LoadShape()
    /// Event loops.
    public var threads = LoadEngine.defaultEventLoops
    public var tls = TLSFiles()
    public var tokenAuth: TokenAuth?
    /// Where tokens answered 410 are written, one per line.
    public var goneTokens: String?
    /// What each of those lines begins with (a campaign's APNs half: `apns:`).
    var goneTokensLabel: TokenLabel?
    /// Serve the sender's counts in Prometheus' format here while the run lasts (`--metrics`).
    public var metrics: ServedAddress?
    /// Serve the live report here while the run goes, and the final one after (`--serve`).
    public var serve: ServedAddress?
    /// How long the endpoint may take to be reached (`--connect-timeout`).
    public var connectTimeout = APNsEndpoint.defaultConnectTimeout
    /// Broadcasts to channels instead of notifications to tokens (`--broadcast`).
    public var broadcast: Broadcast?
    /// Where the run's events go (listening, progress, its summary): by default nowhere.
    public var reporter: any JobReporter = SilentReporter()

    public init(endpoint: Endpoint, template: String, headers: NotificationHeaders, tokens: TokenSet) {
        self.endpoint = endpoint
        self.template = template
        self.headers = headers
        self.tokens = tokens
    }

    /// Runs the job `repeats` times into `directory` (a `RepeatSet`), with SIGINT, SIGTERM
    /// and SIGHUP stopping it cleanly (`StopSignals`). `directory` is checked and locked before
    /// any traffic (`RunOutput`).
    public func run(into directory: String, repeats: Int) throws -> RunStatus {
        try StopSignals.watch { signals in
            try OutputFile.check(sideOutputs, inputs: inputs, folders: [("--output", directory)])
            let output = try RunOutput(preparing: directory, inputs: files)
            defer { withExtendedLifetime(output) {} }
            let configuration = try loadConfiguration()
            defer {
                configuration.goneTokens?.close()
                configuration.endpoint.authorizations?.stop()
            }
            let live = try serve.map { try LiveReport(at: $0, command: "send", reporter: reporter) }
            defer { live?.close() }
            var set = try RepeatSet(repeats, into: directory, signals: signals, reporter: reporter)
            while let folder = set.next() {
                try set.ended(runOnce(configuration, into: folder, signals: signals, live: live))
            }
            return try set.finish()
        }
    }

    /// The files the job reads or writes beside its folder: the results must not go over one.
    var files: [String] {
        var paths: [String] = []
        if case .file(let path) = tokens.source { paths.append(path) }
        if inlineTemplate == nil { paths.append(template) }
        if let path = tokens.reader.rejectsPath { paths.append(path) }
        if let goneTokens { paths.append(goneTokens) }
        if case .file(let path) = broadcast?.channels { paths.append(path) }
        return paths
    }

    /// The files it reads, by option.
    var inputs: [OutputFile.Named] {
        var named: [OutputFile.Named] = []
        if case .file(let path) = tokens.source { named.append(("--tokens", path)) }
        if inlineTemplate == nil { named.append(("--template", template)) }
        if case .file(let path) = broadcast?.channels { named.append(("--channel-ids", path)) }
        if let tokenAuth { named.append(("--key-file", tokenAuth.keyFile)) }
        if case .serviceAccount(let file, let trust) = fcm?.credentials {
            named.append(("--fcm-credentials", file))
            if let trust { named.append(("--fcm-token-trust", trust)) }
        }
        return named
    }

    /// The files it writes beside its folder, by option.
    var sideOutputs: [OutputFile.Named] {
        var named: [OutputFile.Named] = []
        if let path = tokens.reader.rejectsPath { named.append(("--rejects", path)) }
        if let goneTokens { named.append(("--gone-tokens", goneTokens)) }
        return named
    }

    /// The engine's configuration, with the files read. An FCM send's access token is fetched
    /// here, before any send (`FCMBearerTokens`), and kept fresh while the run goes.
    public func loadConfiguration() throws -> LoadConfiguration {
        let template = try loadTemplate()
        var configuration = LoadConfiguration(
            host: endpoint.host,
            port: endpoint.port,
            transport: try transport(),
            headers: headers,
            encoder: PayloadEncoder(template: template),
            shape: shardShape
        )
        configuration.endpoint.connectTimeout = connectTimeout
        configuration.endpoint.broadcastApp = broadcast?.app
        // A send to devices keeps a sample of the answers' ids in its folder (answer-ids.json);
        // a broadcast's answers name channels, and its folder has none.
        configuration.samplesAnswerIDs = broadcast == nil
        if let tokenAuth {
            do {
                configuration.endpoint.providerTokens = try ProviderTokens(
                    pem: try String(contentsOfFile: tokenAuth.keyFile, encoding: .utf8),
                    keyID: tokenAuth.keyID,
                    teamID: tokenAuth.teamID,
                    refreshInterval: tokenAuth.refresh
                )
            } catch {
                throw JobError.holdsNo(
                    .optionValue("--key-file", tokenAuth.keyFile),
                    "P-256 private key (.p8): \(error)"
                )
            }
        }
        if let goneTokens {
            do {
                configuration.goneTokens = try TokenLineWriter(path: goneTokens, label: goneTokensLabel)
            } catch {
                throw JobError.input(.option("--gone-tokens"), "\(error)")
            }
        }
        // Last: a token fetched is kept fresh on a timer from here, until the run stops it.
        if let fcm {
            do {
                let (authorizations, project) = try fcmAuthorizations(fcm)
                configuration.endpoint.fcm = FCMDestination(project: project, authorizations: authorizations)
            } catch {
                configuration.goneTokens?.close()
                throw error
            }
        }
        return configuration
    }

    /// The template: an APNs payload, or with `fcm` a send request, one device's rendering of
    /// which is checked as FCM checks a send (`FCMSendCheck`) so that a template FCM would
    /// refuse for every device stops here, with FCM's words.
    private func loadTemplate() throws -> PayloadTemplate {
        var options = templateOptions
        options.pushType = headers.pushType
        let json = inlineTemplate.map { Array($0.utf8) }
        do {
            if let templateHalf {
                let campaign = try CampaignTemplate(contentsOf: template, apnsOptions: options)
                guard templateHalf == .fcm else { return campaign.apns }
                try Self.checkFCMSample(of: campaign.fcm, file: template)
                return campaign.fcm
            }
            guard fcm != nil else {
                if let json { return try PayloadTemplate(json: json, options: options) }
                return try PayloadTemplate(contentsOf: self.template, options: options)
            }
            let template =
                if let json {
                    try PayloadTemplate(fcmSend: json, fieldNames: options.fieldNames)
                } else {
                    try PayloadTemplate(fcmSendContentsOf: self.template, fieldNames: options.fieldNames)
                }
            try Self.checkFCMSample(of: template, file: inlineTemplate == nil ? self.template : "the template")
            return template
        } catch let error as JobError {
            throw error
        } catch {
            throw JobError.input(.command, "\(error)")
        }
    }

    /// One rendering of an FCM send `template` (a sample token, fields left empty), checked as
    /// FCM checks a send. A template whose fields a sample cannot fill is left to the service.
    static func checkFCMSample(of template: PayloadTemplate, file: String) throws {
        let token = Array("fanout-sample-token:APA91b".utf8)
        let encoder = PayloadEncoder(template: template)
        var buffer = PayloadBuffer(byteCount: template.sizeLimit + 64)
        let outcome: Result<FCMSend, FCMError>? = token.withUnsafeBytes { token in
            let input = NotificationInput(token: token, sequence: 0, tokenIsValidatedHex: true)
            guard let body = try? encoder.encode(input, into: &buffer) else { return nil }
            return FCMSendCheck.check(body)
        }
        if case .failure(let refusal) = outcome {
            throw JobError.input(.file(file), "FCM would refuse every send of it: \(refusal)")
        }
    }

    /// Where each FCM request's bearer comes from: a fixed token, or the service account's,
    /// the first fetched before this returns (three tries, as google-auth makes); and the
    /// project sent to.
    private func fcmAuthorizations(_ fcm: FCM) throws -> (any AuthorizationSource, project: String) {
        switch fcm.credentials {
        case .bearer(let token):
            guard let project = fcm.project else { throw JobError.option(.command, "--fcm-bearer needs --project") }
            return (FixedAuthorization("Bearer " + token), project)
        case .serviceAccount(let file, let trust):
            let account: FCMServiceAccount
            do {
                account = try FCMServiceAccount(file: file)
            } catch {
                throw JobError.read("--fcm-credentials", error)
            }
            guard let tokenURI = account.tokenURI else {
                throw JobError.input(
                    .optionValue("--fcm-credentials", file),
                    "no \"token_uri\" string, which says where access tokens come from"
                )
            }
            let request: FCMTokenRequest
            do {
                request = try FCMTokenRequest(
                    tokenURI: tokenURI,
                    trustedCertificatesFile: trust ?? tls.trustedCertificates
                )
            } catch {
                throw JobError.input(.optionValue("--fcm-credentials", file), "\(error)")
            }
            let tokens = FCMBearerTokens(
                account: account,
                request: request,
                loop: MultiThreadedEventLoopGroup.singleton.next()
            )
            // A future of the token's loop, waited for here: no task of Swift's cooperative pool
            // is needed, which this thread may be one of (`FCMBearerTokens.started`).
            do {
                try tokens.started().wait()
            } catch {
                throw JobError.resource(.part("an FCM access token for \(account.clientEmail)"), "none came: \(error)")
            }
            let project = fcm.project ?? account.projectID
            if let problem = FCMDestination.problem(inProject: project) {
                tokens.stop()
                throw JobError.input(.optionValue("--fcm-credentials", file), "project_id: \(problem)")
            }
            return (tokens, project)
        }
    }

    private func transport() throws -> HTTP2Transport {
        guard endpoint.tls else { return .cleartext }
        do {
            return try .tlsClient(
                trustedCertificatesFile: tls.trustedCertificates,
                insecure: tls.insecure,
                certificateFile: tls.certificate,
                keyFile: tls.certificateKey
            )
        } catch {
            throw JobError.input(.part("TLS with the files given"), "it cannot be set up: \(error)")
        }
    }

    /// The shape with the load model told which shard of the schedule is this run's: the
    /// shard of the tokens.
    var shardShape: LoadShape {
        var shape = shape
        shape.model.shard = tokens.reader.shard
        return shape
    }

    /// One run of the token set into `directory`.
    private func runOnce(
        _ configuration: LoadConfiguration,
        into directory: String,
        signals: StopSignals,
        live: LiveReport?
    ) throws -> RunStatus {
        if let broadcast {
            return try broadcastOnce(broadcast, configuration, into: directory, signals: signals, live: live)
        }
        let display = reporter.progress(total: tokens.expectedCount(planned: shardShape.model.shardSchedule?.total))
        let engine = NIOLockedValueBox<LoadEngine?>(nil)
        let linger = MetricsLinger()
        // Whatever ends this run, the endpoint closes (a throw included).
        defer { linger.finish() }
        let summary = try run(
            configuration,
            started: { started in
                engine.withLockedValue { $0 = started }
                live?.follow(started)
                signals.onStop { started.interrupt(by: $0) }
            },
            progress: live.map { $0.progress(also: display) } ?? display,
            linger: linger
        )
        // The answers' ids first, so that the line naming the folder's files names theirs.
        let sample = engine.withLockedValue { $0?.statistics.answerIDs }
        if let sample { try Self.write(sample, into: directory) }
        let status = try summary.finish(
            into: directory,
            alsoWritten: sample == nil ? [] : [AnswerIDDocument.fileName],
            reporter: reporter
        )
        try live?.finish(folder: directory)
        // The folder is written: the metrics linger now, and a stop signal ends that.
        signals.onStop { _ in linger.end() }
        return status
    }

    /// Writes the sample of the answers' ids (`AnswerIDDocument`) into `directory`.
    static func write(_ sample: AnswerIDSample, into directory: String) throws {
        let document = AnswerIDDocument(
            lookedAtEvery: AnswerIDSample.every,
            capacity: AnswerIDSample.capacity,
            answersSeen: sample.answersSeen,
            ids: sample.ids.map { .init(apnsID: $0.apnsID, uniqueID: $0.uniqueID) }
        )
        do {
            // A repeat's folder (`repeat-2/`) is made here when the sample comes first.
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            try document.write(in: directory)
        } catch {
            throw JobError.cannotWrite(.file("\(directory)/\(AnswerIDDocument.fileName)"), error.reason)
        }
    }

    /// One run of the token set with `configuration` (from `loadConfiguration()`), blocking.
    /// `started` gets the engine (to cancel it) before it runs.
    public func run(
        _ configuration: LoadConfiguration,
        started: (LoadEngine) -> Void = { _ in },
        progress: ((RunProgress) -> Void)? = nil
    ) throws -> RunSummary {
        try run(configuration, started: started, progress: progress, linger: nil)
    }

    /// `run(_:started:progress:)`, with the metrics endpoint left to `linger` when there is one.
    func run(
        _ configuration: LoadConfiguration,
        started: (LoadEngine) -> Void,
        progress: ((RunProgress) -> Void)?,
        linger: MetricsLinger?
    ) throws -> RunSummary {
        let stream: TokenStream
        do {
            stream = try tokens.openForRun(connections: configuration.shape.connections)
        } catch {
            throw JobError.input(.command, "\(error)")
        }
        let sender = try SenderEngine(
            configuration: configuration,
            tokens: stream,
            threads: threads,
            metrics: metrics,
            linger: linger,
            reporter: reporter
        )
        defer { sender.close() }
        let engine = sender.engine
        started(engine)
        warnIfLate(configuration.shape.model.startAt, reporter: reporter)
        // A token set that turns out bad part-way (a malformed line, a truncated file) ends the
        // run there: what was sent stays counted, and the report holds it invalid with the place.
        let report = engine.run(progress: progress)
        var summary = RunSummary(
            report: report,
            endpoint: endpoint.description,
            configuration: configuration,
            tokenSource: tokens.description
        )
        summary.scenario = scenario
        return summary
    }
}
