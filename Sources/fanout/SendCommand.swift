import ArgumentParser
import FanoutAPNs
import FanoutClient
import FanoutEndpoint
import FanoutFiles
import FanoutNotation
import FanoutPayload
import FanoutRun
import FanoutTokens

/// `fanout send`: a token set's notifications to any APNs-compatible endpoint.
struct SendCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "send",
        abstract: "Send a template's notification to every token of a set over HTTP/2.",
        // ArgumentParser's line would show --topic as optional: validate() requires it for APNs.
        usage: """
            fanout send --endpoint <url> (--tokens <file> | --generate <n>) --template <file> --topic <topic> [<options>]
              fanout send --service fcm --endpoint <url> (--tokens <file> | --generate <n>) --template <file> (--fcm-credentials <file> | --fcm-bearer <token> --project <id>) [<options>]
              fanout send --endpoint <url> --fcm-endpoint <url> --tokens <file> --template <file> --topic <topic> (--fcm-credentials <file> | --fcm-bearer <token> --project <id>) [<options>]
              fanout send --broadcast --endpoint <url> --topic <topic> --template <file> (--channels <n> | --channel-ids <file>) [<options>]
            """,
        discussion: """
            http:// endpoints are h2c with prior knowledge, https:// ones TLS with ALPN h2. With \
            --service fcm the requests are FCM HTTP v1 sends (POST /v1/projects/ID/messages:send, \
            the template a send request whose message gets "token": "{{token}}" unless it names a \
            target, tokens FCM registration tokens, an OAuth2 bearer; docs/fcm.md). With \
            --fcm-endpoint it is one campaign to both services: the token file's apns: and \
            unlabelled lines go to --endpoint (APNs), its fcm: lines to --fcm-endpoint, the \
            template {"apns": payload, "fcm": send request}, the two halves sent together, each \
            with --output's apns/ or fcm/ folder, and campaign.json for the whole \
            (docs/load-engine.md, "A campaign from a token file"). Every \
            connection keeps up to --streams requests in flight (and no more than the server \
            allows): the closed model. --rate R (with --duration, or --stage ramps) is the open \
            model: notifications are due on a schedule whatever the server does, and latency \
            counts from each one's due time. Prints five lines (--verbose every line) and writes \
            the run's folder, --output (default: a new folder under results/): summary.json, \
            summary.md, report.html, latency.hgrm, latency.hlog; a live progress \
            line shows on a terminal; --output must not hold an earlier run's results nor be in \
            use by another run (checked before any traffic). SIGINT (Ctrl-C), SIGTERM or SIGHUP \
            stops the run within a second: what is in flight is answered, tokens read ahead are \
            counted as never sent, and the folder is written marked interrupted (invalid); a \
            second signal exits at once. A token line found bad part-way ends the run there, the \
            folder marked invalid with the place. Exit status: 0 when every notification was \
            accepted or rejected by the server, 3 when some failed (no answer after every try), \
            4 when the run is invalid (fewer answers measured than --min-measured, the \
            generator fell behind its schedule by more than --max-lag, a wait for a stream past --max-backlog, a bad token part-way, a \
            --gone-tokens file that could not be written, no answer at all from a server that \
            took the requests), 5 when it could not reach the endpoint (no connection got as far \
            as HTTP/2, or each was closed, sent GOAWAY or answered 403 before any other answer: \
            the cause is on standard error and in summary.json's failed reasons), 6 when an \
            --abort-on condition stopped it (the folder says which, over which window, when), \
            130, 143 or 129 when SIGINT, SIGTERM or SIGHUP stopped it, 1 on an error, 64 on a \
            usage error.
            """
    )

    @Option(
        name: .long,
        help: ArgumentHelp("Where to send: http://host:port or https://host[:port].", valueName: "url")
    )
    var endpoint: String

    @OptionGroup var tokenOptions: TokenInputOptions

    @OptionGroup var broadcasting: BroadcastOptions

    @OptionGroup var templateOptions: TemplateOptions

    @OptionGroup var target: EndpointOptions

    @OptionGroup(title: "FCM") var fcm: FCMSendOptions

    @OptionGroup var shape: ShapeOptions

    @OptionGroup var threads: ThreadOptions

    @OptionGroup var metricsOption: MetricsOption

    @OptionGroup var serveOption: ServeOption

    @Option(
        name: .long,
        help: ArgumentHelp("Write tokens answered 410 (FCM: 404 UNREGISTERED) here, one per line.", valueName: "file")
    )
    var goneTokens: String?

    @OptionGroup var repeating: RepeatOptions

    @OptionGroup(title: "What it prints") var console: ConsoleOptions

    @Option(
        name: .long,
        help: ArgumentHelp(
            "The run's folder (by default a new one under results/): summary.json, summary.md, report.html, latency.hgrm and latency.hlog, and answer-ids.json (a sample of the answers' ids; not with --broadcast); with --repeat, repeat-1/… and repeats.json inside it; with --fcm-endpoint, campaign.json, apns/ and fcm/.",
            valueName: "dir"
        )
    )
    var output: String?

    func validate() throws {
        if fcm.service == .fcm { try validateFCM() }
        if fcm.fcmEndpoint != nil { try validateCampaign() }
        if broadcasting.broadcast {
            try validateBroadcast()
            if let connections = shape.connection.connections, connections > 1 {
                reportWarning(
                    "--broadcast over \(connections) connections: a channel's later update can overtake an earlier one (one connection, the default, keeps their order)"
                )
            }
        } else {
            try tokenOptions.requireSet()
        }
        try target.checkApple(endpoint, generatedTokens: tokenOptions.generate != nil)
        try shape.connection.checkRanges(threads: threads.threads)
        if repeating.repeats > 1 && shape.load.startAt != nil {
            throw ValidationError("--start-at is one moment: it does not go with --repeat.")
        }
        if repeating.repeats > 1 && tokenOptions.tokens == "-" {
            throw ValidationError("--repeat reads the tokens again each time: give a file, not standard input.")
        }
        if repeating.repeats > 1, let path = tokenOptions.tokens, !TokenSource.file(path).isRereadable {
            throw ValidationError(
                "--repeat reads the tokens again each time: --tokens \(path) is a pipe or a device, read once; give a regular file."
            )
        }
    }

    /// `--service fcm`'s rules: a token set, and none of the options that only APNs takes.
    private func validateFCM() throws {
        var apnsOnly: [String] = []
        let named: [(String, Any?)] = [
            ("--topic", target.topic), ("--scenario", target.scenario), ("--priority", target.priority),
            ("--expiration", target.expiration), ("--collapse-id", target.collapseId), ("--apns-id", target.apnsId),
            ("--cert", target.cert), ("--cert-key", target.certKey), ("--push-type", templateOptions.pushType),
            ("--size-limit", templateOptions.sizeLimit),
        ]
        for (name, value) in named where value != nil { apnsOnly.append(name) }
        if target.tokenKey.isGiven { apnsOnly.append("--key-file, --key-id, --team-id") }
        if target.tokenRefresh != SendJob.TokenAuth.defaultRefresh { apnsOnly.append("--token-refresh") }
        if target.production { apnsOnly.append("--production") }
        if templateOptions.allowUnknownAPSKeys { apnsOnly.append("--allow-unknown-aps-keys") }
        if broadcasting.broadcast { apnsOnly.append("--broadcast") }
        if !apnsOnly.isEmpty {
            throw ValidationError(
                "--service fcm does not take \(apnsOnly.joined(separator: ", ")): \(apnsOnly.count == 1 ? "it is" : "they are") APNs's (docs/fcm.md)."
            )
        }
    }

    /// `--fcm-endpoint`'s rules: a labelled text file both halves read, and none of the options
    /// that one run of the two would share (a side file, an address, the repeats).
    private func validateCampaign() throws {
        guard let path = tokenOptions.tokens, path != "-", TokenSource.file(path).isRereadable else {
            throw ValidationError(
                "--fcm-endpoint sends a campaign's token set, read once a half: give --tokens FILE, a regular text file of apns: and fcm: lines (not --generate, standard input or a pipe; fanout run --fleet generates both)."
            )
        }
        let shared: [(String, Bool)] = [
            ("--broadcast", broadcasting.broadcast),
            ("--rejects", tokenOptions.rejects != nil), ("--metrics", metricsOption.metrics != nil),
            ("--serve", serveOption.serve != nil), ("--repeat", repeating.repeats > 1),
        ]
        let given = shared.filter(\.1).map(\.0)
        if !given.isEmpty {
            throw ValidationError(
                "--fcm-endpoint's campaign does not take \(given.joined(separator: ", ")): each half would have its own (send each service on its own with them)."
            )
        }
    }

    /// `--broadcast`'s rules: channels, not tokens; the app's bundle id; Apple's guard on the
    /// channel-management host too.
    private func validateBroadcast() throws {
        if tokenOptions.tokens != nil || tokenOptions.generate != nil {
            throw ValidationError(
                "--broadcast sends to channels, not tokens: --tokens and --generate do not go with it."
            )
        }
        guard let app = try broadcastApp() else {
            throw ValidationError(
                "--broadcast needs the app's bundle id: --topic com.example.app (or topic in --scenario)."
            )
        }
        if broadcasting.storagePolicy == 0, let expiration = target.expiration, expiration != 0 {
            throw ValidationError(
                "--expiration of a broadcast to channels that store nothing (--storage-policy 0) is 0, not \(expiration) (docs/apns.md)."
            )
        }
        guard let parsed = try? SendJob.Endpoint(parsing: endpoint) else { return }
        let management = try broadcasting.job(app: app, endpoint: parsed).management
        try target.checkApple(management.description, generatedTokens: false)
    }

    /// The bundle id a broadcast goes to: the topic without a Live Activity suffix.
    private func broadcastApp() throws -> String? {
        var topic = target.topic
        if topic == nil, let scenario = target.scenario {
            do { topic = try HeaderSettings(contentsOfFile: scenario).topic } catch {
                throw ValidationError("\(error).")
            }
        }
        guard var app = topic, !app.isEmpty else { return nil }
        let suffix = "\(APNsPushType.liveactivity.topicSuffix)"
        if app.hasSuffix(suffix) { app.removeLast(suffix.count) }
        return app
    }

    /// The campaign the options describe (`--fcm-endpoint`); `nil` for one service's send.
    func campaign() throws -> CampaignSendJob? {
        guard let fcmEndpoint = fcm.fcmEndpoint, let fcmJob = fcm.job else { return nil }
        // TLS's options are for whichever endpoints are https: one in cleartext leaves them to
        // the other (both in cleartext, each half says they need https).
        var (apnsTarget, fcmTarget) = (target, target)
        let (apnsTLS, fcmTLS) = (
            try EndpointOptions.parsedEndpoint(endpoint).tls, try SendJob.Endpoint(parsing: fcmEndpoint).tls
        )
        if !fcmTLS && apnsTLS { (fcmTarget.caFile, fcmTarget.insecure) = (nil, false) }
        if !apnsTLS && fcmTLS { (apnsTarget.caFile, apnsTarget.insecure) = (nil, false) }
        var apns = try apnsTarget.job(
            endpoint: endpoint,
            template: templateOptions.template,
            templateOptions: templateOptions.options,
            pushType: templateOptions.pushType,
            tokens: tokenOptions.input
        )
        apns.shape = try shape.shape()
        var fcmHalf = try fcmTarget.fcmJob(
            endpoint: fcmEndpoint,
            template: templateOptions.template,
            fieldNames: templateOptions.options.fieldNames,
            fcm: fcmJob,
            tokens: tokenOptions.input
        )
        fcmHalf.shape = try shape.shape()
        // Each half's --gone-tokens is the campaign's one file, each line labelled with its service.
        return CampaignSendJob(apns: try shaped(apns, apple: apns.endpoint.apple != nil), fcm: try shaped(fcmHalf))
    }

    /// The job the options describe (one service's; `campaign()` for both).
    func job() throws -> SendJob {
        if fcm.service == .fcm, let fcmJob = fcm.job {
            var job = try target.fcmJob(
                endpoint: endpoint,
                template: templateOptions.template,
                fieldNames: templateOptions.options.fieldNames,
                fcm: fcmJob,
                tokens: tokenOptions.input
            )
            job.shape = try shape.shape()
            return try shaped(job)
        }
        var target = self.target
        var pushType = templateOptions.pushType
        var templateSettings = templateOptions.options
        let app = broadcasting.broadcast ? try broadcastApp() : nil
        let tokens =
            app == nil
            ? tokenOptions.input : TokenSet(.channels(ChannelRounds(channels: [], rounds: 0, firstTimestamp: 0)))
        if let app {
            // A broadcast is a Live Activity update (docs/apns.md, "Broadcast channels"); its
            // channels stand where tokens do, read when the run starts (`SendJob.broadcastOnce`).
            target.topic = app + "\(APNsPushType.liveactivity.topicSuffix)"
            // APNs stores a policy-1 channel's update unless told 0 ("deliver once"): left out
            // there; 0 for channels that store nothing and for given ids (their policy unknown).
            let stores = broadcasting.storagePolicy == 1 && broadcasting.channelIds == nil
            if target.expiration == nil && target.scenario == nil && !stores { target.expiration = 0 }
            pushType = .liveactivity
            templateSettings = templateOptions.options(pushType: .liveactivity)
        }
        var job = try target.job(
            endpoint: endpoint,
            template: templateOptions.template,
            templateOptions: templateSettings,
            pushType: pushType,
            tokens: tokens
        )
        if let app { job.broadcast = try broadcasting.job(app: app, endpoint: job.endpoint) }
        job.shape = try shape.shape()
        // One connection unless told: a channel's updates then reach APNs in the order they were
        // sent; spread over connections, a later update can overtake an earlier one, which the
        // device takes as a timestamp going backwards (docs/load-engine.md, "Broadcasts").
        if app != nil && shape.connection.connections == nil { job.shape.connections = 1 }
        // Apple's hosts without a rate of the user's: a campaign's pace, said in the summary.
        return try shaped(job, apple: job.endpoint.apple != nil)
    }

    /// `job` with the run's shape, threads and outputs; a run to Apple's hosts paced unless told.
    private func shaped(_ job: SendJob, apple: Bool = false) throws -> SendJob {
        var job = job
        if apple && job.shape.model.schedule == nil {
            job.shape.model.schedule = try ArrivalSchedule(
                rate: APNsHost.conservativeRate,
                duration: job.shape.model.duration
            )
            job.shape.model.duration = nil
            job.shape.model.rateNote =
                "capped at \(Int(APNsHost.conservativeRate))/s: Apple's APNs without --rate or --stage (give one to choose the pace)"
        }
        job.threads = threads.threads
        job.goneTokens = goneTokens
        job.metrics = try metricsOption.address()
        job.serve = try serveOption.address()
        return job
    }

    func run() throws {
        ConsoleReporter.shared.style = console.style
        if var campaign = try campaign() {
            campaign.reporter = ConsoleReporter.shared
            try campaign.run(into: output ?? RunFolder.new()).exit()
            return
        }
        var job = try job()
        job.reporter = ConsoleReporter.shared
        try job.run(into: output ?? RunFolder.new(), repeats: repeating.repeats).exit()
    }
}

/// Whom `fanout send` and `fanout search --endpoint` speak to and how: the request headers,
/// TLS and the two kinds of auth.
struct EndpointOptions: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp(
            "apns-topic: the bundle id plus the push type's suffix; APNs requires it, unless --scenario names it.",
            valueName: "topic"
        )
    )
    var topic: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "A scenario file of request headers (topic, push-type, priority, expiration, collapse-id, apns-id = NAME = VALUE lines); options win.",
            valueName: "file"
        )
    )
    var scenario: String?

    @Option(name: .long, help: ArgumentHelp("apns-priority: 10, 5 or 1.", valueName: "n"))
    var priority: Int?

    @Option(name: .long, help: ArgumentHelp("apns-expiration, UNIX seconds (0: deliver once).", valueName: "seconds"))
    var expiration: Int?

    @Option(name: .long, help: ArgumentHelp("apns-collapse-id, at most 64 bytes.", valueName: "id"))
    var collapseId: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "apns-id: random (a UUID v4 per notification, kept on its retries), timed (a UUID v8 per try carrying its send time, so that a `fanout sink` on this host counts the time before it read the request in its own lateness) or none (APNs makes one; the default).",
            valueName: "policy"
        )
    )
    var apnsId: APNsIDPolicy?

    @Option(name: .long, help: ArgumentHelp("CA certificates (PEM) to trust the server with.", valueName: "file"))
    var caFile: String?

    @Flag(name: .long, help: "Trust any server certificate (loopback tests only).")
    var insecure = false

    @Option(name: .long, help: ArgumentHelp("Certificate auth: the client certificate (PEM).", valueName: "file"))
    var cert: String?

    @Option(name: .long, help: ArgumentHelp("Certificate auth: its private key (PEM).", valueName: "file"))
    var certKey: String?

    @OptionGroup var tokenKey: TokenKeyOptions

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Renew the provider token this often, 20m to 60m.",
            valueName: "duration"
        )
    )
    var tokenRefresh = SendJob.TokenAuth.defaultRefresh

    @Option(
        name: .long,
        help: ArgumentHelp(
            "How long to try reaching the endpoint: refused and timed-out connects are tried again until then; then the run ends with exit status 5.",
            valueName: "duration"
        )
    )
    var connectTimeout = APNsEndpoint.defaultConnectTimeout

    @Flag(
        name: .long,
        help: "Allow sending to Apple's production APNs (api.push.apple.com), which delivers to real devices."
    )
    var production = false

    func validate() throws {
        if (cert == nil) != (certKey == nil) { throw ValidationError("--cert and --cert-key go together.") }
        if connectTimeout <= .zero { throw ValidationError("--connect-timeout must be more than 0s.") }
    }

    /// Whether an option only an endpoint takes is given (all but --topic).
    var isGiven: Bool {
        let given: [Any?] = [
            scenario, priority, expiration, collapseId, apnsId, caFile, cert, certKey,
        ]
        return insecure || production || tokenKey.isGiven || tokenRefresh != SendJob.TokenAuth.defaultRefresh
            || connectTimeout != APNsEndpoint.defaultConnectTimeout || given.contains { $0 != nil }
    }

    static func parsedEndpoint(_ text: String) throws -> SendJob.Endpoint {
        do { return try SendJob.Endpoint(parsing: text) } catch { throw ValidationError("--endpoint: \(error).") }
    }

    /// Apple's hosts' rules, checked before anything opens a socket (`SendJob.Endpoint.refusal`).
    func checkApple(_ endpoint: String, generatedTokens: Bool) throws {
        guard let endpoint = try? SendJob.Endpoint(parsing: endpoint) else { return }
        if let refusal = endpoint.refusal(generatedTokens: generatedTokens, production: production) {
            throw ValidationError(refusal)
        }
    }

    /// The request headers: the options, then `--scenario`'s lines, then the defaults; and the
    /// scenario file read, for the summary.
    func headers(pushType: APNsPushType?) throws -> (NotificationHeaders, FileUse?) {
        var file = HeaderSettings()
        if let scenario {
            do { file = try HeaderSettings(contentsOfFile: scenario) } catch { throw ValidationError("\(error).") }
        }
        guard let topic = topic ?? file.topic else {
            throw ValidationError("Give the apns-topic: --topic, or topic in --scenario.")
        }
        // The library holds APNs's rules (NotificationHeaders): the option or line that broke
        // one is named with it.
        var headers: NotificationHeaders
        do {
            headers = try NotificationHeaders(
                topic: topic,
                pushType: pushType ?? file.pushType ?? .alert,
                priority: priority ?? file.priority,
                expiration: expiration ?? file.expiration,
                collapseID: collapseId ?? file.collapseID
            )
        } catch {
            let option = [
                "apns-topic": "--topic", "apns-priority": "--priority", "apns-expiration": "--expiration",
                "apns-collapse-id": "--collapse-id",
            ][error.header, default: error.header]
            throw ValidationError("\(option)\(scenario.map { " (or \($0))" } ?? ""): \(error).")
        }
        (apnsId ?? file.apnsID)?.apply(to: &headers)
        return (headers, file.file)
    }

    /// An FCM send job to `endpoint` (`--service fcm`): its TLS options and connect timeout, and
    /// FCM registration tokens read as such; the caller adds the shape and threads. The APNs
    /// headers go unused (`SendJob.fcm`).
    func fcmJob(
        endpoint: String,
        template: String,
        fieldNames: [String],
        fcm: SendJob.FCM,
        tokens: TokenSet
    ) throws -> SendJob {
        let endpoint = try Self.parsedEndpoint(endpoint)
        if !endpoint.tls && (caFile != nil || insecure) {
            throw ValidationError("--ca-file and --insecure need an https:// endpoint.")
        }
        var tokens = tokens
        tokens.reader.format = .fcm
        var job = SendJob(
            endpoint: endpoint,
            template: template,
            headers: try NotificationHeaders(topic: "fcm"),
            tokens: tokens
        )
        job.fcm = fcm
        job.templateOptions.fieldNames = fieldNames
        job.tls.trustedCertificates = caFile
        job.tls.insecure = insecure
        job.connectTimeout = connectTimeout
        return job
    }

    /// A job to `endpoint` with these options; the caller adds the shape and threads.
    func job(
        endpoint: String,
        template: String,
        templateOptions: PayloadTemplate.Options,
        pushType: APNsPushType?,
        tokens: TokenSet
    ) throws -> SendJob {
        let endpoint = try Self.parsedEndpoint(endpoint)
        if !endpoint.tls && (caFile != nil || insecure || cert != nil) {
            throw ValidationError("--ca-file, --insecure and --cert need an https:// endpoint.")
        }
        let (headers, scenarioFile) = try headers(pushType: pushType)
        var job = SendJob(endpoint: endpoint, template: template, headers: headers, tokens: tokens)
        job.scenario = scenarioFile
        job.templateOptions = templateOptions
        job.tls.trustedCertificates = caFile
        job.tls.insecure = insecure
        job.tls.certificate = cert
        job.tls.certificateKey = certKey
        job.connectTimeout = connectTimeout
        guard ProviderTokens.allowedRefresh.contains(tokenRefresh) else {
            throw ValidationError(
                "--token-refresh must be from 20m to 60m (APNs' rule), not \(DurationNotation.format(tokenRefresh))."
            )
        }
        if let (file, id, team) = tokenKey.key {
            job.tokenAuth = SendJob.TokenAuth(keyFile: file, keyID: id, teamID: team)
            job.tokenAuth?.refresh = tokenRefresh
        }
        return job
    }
}
