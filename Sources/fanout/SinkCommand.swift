import ArgumentParser
import FanoutAPNs
import FanoutFCMSink
import FanoutMachine
import FanoutMeasure
import FanoutNotation
import FanoutRun
import FanoutSink
import Foundation
import Logging
import ServiceLifecycle

/// `fanout sink`: a mock APNs on HTTP/2.
struct SinkCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sink",
        abstract: "Run a mock APNs that validates, authenticates and counts notifications like APNs.",
        discussion: """
            Prints "listening on HOST:PORT" when ready. SIGINT, SIGTERM or SIGHUP drains it: new \
            requests get 503 Shutdown, every connection gets GOAWAY, the summary is printed, and \
            --output's folder is written. Exit status: 0 once drained, whether a signal or its own \
            end (--expect, --duration, --idle-exit) stopped it: a signal is a server's normal stop, \
            and --output's folder says whether what was expected came (fanout gate judges it); 1 \
            on an error (an address it cannot listen on, a folder it cannot write, a trigger that \
            cannot start); 64 for options that cannot be used.
            """
    )

    @Option(name: .long, help: ArgumentHelp("Where to listen; port 0 picks a free one.", valueName: "host:port"))
    var listen = "\(SinkJob().host):\(SinkJob().port)"

    @Option(
        name: .long,
        parsing: .unconditional,
        help: ArgumentHelp("Event loops (threads) serving connections.", valueName: "n")
    )
    var threads = SinkJob().threads

    @Option(name: .long, help: ArgumentHelp("TLS certificate chain (PEM); serves h2 over TLS.", valueName: "file"))
    var tlsCert: String?

    @Option(name: .long, help: ArgumentHelp("TLS private key (PEM), with --tls-cert.", valueName: "file"))
    var tlsKey: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Serve TLS with a new self-signed certificate, written to DIR/cert.pem (trust it) and DIR/key.pem.",
            valueName: "dir"
        )
    )
    var tlsSelfSigned: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Certificate auth: ask TLS clients for a certificate issued by these CAs (PEM); its UID names the bundle.",
            valueName: "file"
        )
    )
    var clientCa: String?

    @Option(
        name: .long,
        help: ArgumentHelp("Serve statistics: GET /stats (JSON) and GET /metrics (Prometheus).", valueName: "host:port")
    )
    var admin: String?

    @OptionGroup var serveOption: ServeOption

    @Option(
        name: .long,
        help: ArgumentHelp("Write received notifications to FILE, one JSON object a line.", valueName: "file")
    )
    var capture: String?

    @Option(name: .long, help: ArgumentHelp("Capture only the first N notifications.", valueName: "n"))
    var captureFirst: Int?

    @Option(name: .long, help: ArgumentHelp("Capture this share of notifications, e.g. 1%.", valueName: "share"))
    var captureSample: Share?

    @OptionGroup var scenario: SinkScenarioOptions

    @OptionGroup(title: "Devices behind the sink") var devices: DeviceOptions

    @OptionGroup(title: "The return wave") var returnWave: ReturnWaveOptions

    @OptionGroup var tokenKey: TokenKeyOptions

    @OptionGroup(title: "FCM") var fcm: FCMSinkOptions

    @Flag(name: .long, help: "Accept requests without token auth (the default when no key is given).")
    var noAuth = false

    @Option(
        name: .long,
        help: ArgumentHelp("A bundle id whose topics are accepted; repeat for more (default: any).", valueName: "id")
    )
    var topic: [String] = []

    @Option(name: .long, help: ArgumentHelp("Accepted token lengths in hex digits.", valueName: "min-max"))
    var tokenLengths =
        "\(DeviceTokenFormat.default.hexLengths.lowerBound)-\(DeviceTokenFormat.default.hexLengths.upperBound)"

    @Option(
        name: .long,
        help: ArgumentHelp("MAX_CONCURRENT_STREAMS before the first accepted request.", valueName: "n")
    )
    var initialStreams = SinkConfiguration().initialMaxConcurrentStreams

    @Option(name: .long, help: ArgumentHelp("MAX_CONCURRENT_STREAMS after it.", valueName: "n"))
    var maxStreams = SinkConfiguration().maxConcurrentStreams

    @Flag(name: .long, help: "Drop to --initial-streams after a rejection, rise after the next success.")
    var throttleAfterRejection = false

    @Option(
        name: .long,
        help: ArgumentHelp(
            "GOAWAY IdleTimeout to a connection idle this long, or off.",
            valueName: "duration"
        )
    )
    var idleTimeout = DurationOrOff(SinkConfiguration.defaultIdleTimeout)

    @Option(
        name: .long,
        help: ArgumentHelp(
            "GOAWAY ENHANCE_YOUR_CALM when the start of a frame waits this long for its rest, or off.",
            valueName: "duration"
        )
    )
    var frameTimeout = DurationOrOff(SinkConfiguration().incompleteFrameTimeout)

    @Option(
        name: .long,
        help: ArgumentHelp(
            "RST_STREAM CANCEL a stream whose request has not arrived whole this long after its HEADERS, or off.",
            valueName: "duration"
        )
    )
    var requestTimeout = DurationOrOff(SinkConfiguration.defaultRequestTimeout)

    @Option(
        name: .long,
        help: ArgumentHelp(
            "A hold drawn from a spread (--latency lognormal, normal, uniform, empirical) may move this share of itself, at most \(DurationNotation.format(SinkConfiguration.longestCoalescing)), to go out with others drawn close to it; 0 for exact times.",
            valueName: "share"
        )
    )
    var coalesce = Share(SinkConfiguration.defaultCoalescingShare)

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Refuse connections from one address beyond this many at once (default: a quarter of the default --max-connections, 256 of 1024).",
            valueName: "n"
        )
    )
    var maxConnectionsPerPeer: Int?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Once half of --max-connections is open, refuse connections from one address beyond this many at once that have not sent an authenticated request (one refused before its provider proved who it is counts as none; default: a quarter of --max-connections-per-peer, 64 of 256).",
            valueName: "n"
        )
    )
    var maxIdleConnectionsPerPeer: Int?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Evict a connection that has sent no authenticated request this long for a newcomer from its own address, when the address is at --max-connections-per-peer or --max-idle-connections-per-peer; off refuses the newcomer instead.",
            valueName: "duration"
        )
    )
    var idleGrace = DurationOrOff(SinkConfiguration.defaultIdleGrace)

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Measure the provider under test and write a run folder to DIR when the sink stops: delivery times, stream use, the conformance card.",
            valueName: "dir"
        )
    )
    var output: String?

    @Option(
        name: .long,
        parsing: .unconditional,
        help: ArgumentHelp("Stop once N notifications were accepted.", valueName: "n"),
        transform: Count.reading
    )
    var expect: Count?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Stop once every token of FILE (one a line) was accepted; needs --output.",
            valueName: "file"
        )
    )
    var expectTokens: String?

    @Option(name: .long, help: ArgumentHelp("Stop this long after listening.", valueName: "duration"))
    var duration: Duration?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Stop this long after the last request (within a second), or after --first-request-within if none came.",
            valueName: "duration"
        )
    )
    var idleExit: Duration?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "With --idle-exit: stop if no request came this long after listening (never sooner than --idle-exit; default: 60s).",
            valueName: "duration"
        )
    )
    var firstRequestWithin: Duration?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Run CMD with /bin/sh -c once listening (the provider, or a curl to its broadcast API); the fan-out counts from its launch. Needs --output; its output goes to DIR/trigger.log.",
            valueName: "cmd"
        )
    )
    var trigger: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "The round trip the report's capacity line speaks of (default: 80ms); needs --output.",
            valueName: "duration"
        )
    )
    var planRtt: Duration?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "A folder whose sink received fewer requests than this is invalid: too few for a fan-out time or a rate (default: \(MinimumMeasured.default)); needs --output.",
            valueName: "count"
        )
    )
    var minMeasured: Int?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Priority-10 broadcasts a channel may carry per window before the card counts them (default: 12/h, Fanout's: Apple gives no number); needs --output.",
            valueName: "n/window"
        )
    )
    var liveactivityPriorityBudget: EventRate?

    func validate() throws {
        if let expect { try MachineLimits.tokenCount("--expect").validate(expect.value) }
        if (tlsCert == nil) != (tlsKey == nil) { throw ValidationError("--tls-cert and --tls-key go together.") }
        if fcm.service == .fcm { return try validateFCM() }
        let fcmOnly = fcm.givenForFCMOnly
        if !fcmOnly.isEmpty {
            throw ValidationError(
                "\(fcmOnly.joined(separator: ", ")) \(fcmOnly.count == 1 ? "is" : "are") FCM's: add --service fcm."
            )
        }
        if tlsCert != nil && tlsSelfSigned != nil {
            throw ValidationError("--tls-cert and --tls-self-signed are two ways to the same thing: give one.")
        }
        if clientCa != nil && tlsCert == nil && tlsSelfSigned == nil {
            throw ValidationError("--client-ca needs TLS: add --tls-cert/--tls-key or --tls-self-signed.")
        }
        if clientCa != nil && noAuth { throw ValidationError("--no-auth and --client-ca contradict each other.") }
        if capture == nil && (captureFirst != nil || captureSample != nil) {
            throw ValidationError("--capture-first and --capture-sample need --capture FILE.")
        }
        if captureFirst != nil && captureSample != nil {
            throw ValidationError("--capture-first and --capture-sample exclude each other: give one.")
        }
        if let captureFirst, captureFirst < 1 { throw ValidationError("--capture-first must be at least 1.") }
        if tokenKey.isGiven && noAuth {
            throw ValidationError("--no-auth and --key-file contradict each other.")
        }
        try validateConnections()
        if initialStreams < 1 || maxStreams < initialStreams {
            throw ValidationError("Need 1 ≤ --initial-streams ≤ --max-streams.")
        }
        _ = try address()
        _ = try lengths()
        if output == nil, liveactivityPriorityBudget != nil {
            throw ValidationError("--liveactivity-priority-budget measures the provider: add --output DIR.")
        }
        try validateEndings()
        if let budget = liveactivityPriorityBudget, budget.count != budget.count.rounded() || budget.count < 1 {
            throw ValidationError(
                "--liveactivity-priority-budget takes a whole number of broadcasts per window, like 12/h; got \(budget)."
            )
        }
    }

    /// The event loops and the connection limits, against what the machine allows: both
    /// services' sinks alike.
    func validateConnections() throws {
        let limits = MachineLimits.current()
        try limits.eventLoops("--threads").validate(threads)
        if let maxConnections = scenario.maxConnections {
            try limits.connections("--max-connections", eventLoops: threads).validate(maxConnections)
        }
        if let maxConnectionsPerPeer, maxConnectionsPerPeer < 1 {
            throw ValidationError("--max-connections-per-peer must be at least 1; got \(maxConnectionsPerPeer).")
        }
        if let maxIdleConnectionsPerPeer, maxIdleConnectionsPerPeer < 1 {
            throw ValidationError(
                "--max-idle-connections-per-peer must be at least 1; got \(maxIdleConnectionsPerPeer)."
            )
        }
        _ = try idleGrace.checked(option: "--idle-grace")
    }

    /// What both services' sinks check alike: the admin address, how the sink ends by itself,
    /// and the options that measure the provider (`--output`'s).
    func validateEndings() throws {
        if let admin { _ = try Self.address(admin, option: "--admin") }
        if output == nil {
            for (name, given) in [
                ("--expect-tokens", expectTokens != nil), ("--trigger", trigger != nil), ("--plan-rtt", planRtt != nil),
                ("--min-measured", minMeasured != nil),
            ]
            where given {
                throw ValidationError("\(name) measures the provider: add --output DIR.")
            }
        }
        if firstRequestWithin != nil && idleExit == nil {
            throw ValidationError(
                "--first-request-within bounds --idle-exit's wait for a first request: add --idle-exit."
            )
        }
        for (name, value) in [
            ("--duration", duration), ("--idle-exit", idleExit), ("--first-request-within", firstRequestWithin),
            ("--plan-rtt", planRtt),
        ] {
            if let value, value <= .zero { throw ValidationError("\(name) must be longer than 0; got \(value).") }
        }
        if let minMeasured, minMeasured < 1 {
            throw ValidationError("--min-measured must be at least 1; got \(minMeasured).")
        }
        if let trigger, trigger.trimmingCharacters(in: .whitespaces).isEmpty {
            throw ValidationError("--trigger needs a command.")
        }
    }

    /// `--expect`, `--duration`, `--idle-exit`, `--first-request-within`: when the sink ends by itself.
    var ending: SinkJob.Ending {
        var ending = SinkJob.Ending()
        ending.expect = expect.map { Int($0.value) }
        ending.duration = duration
        ending.idleExit = idleExit
        if let firstRequestWithin { ending.firstRequestWithin = firstRequestWithin }
        return ending
    }

    /// `HOST:PORT` (IPv6 hosts in brackets) as a host and a port.
    static func address(_ text: String, option: String) throws -> (host: String, port: Int) {
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]),
            (0...65_535).contains(port), colon != text.startIndex
        else { throw ValidationError("\(option) takes HOST:PORT, for example 127.0.0.1:2197; got \(text).") }
        return (String(text[..<colon]).trimmingCharacters(in: CharacterSet(charactersIn: "[]")), port)
    }

    func address() throws -> (host: String, port: Int) {
        try Self.address(listen, option: "--listen")
    }

    func lengths() throws -> ClosedRange<Int> {
        let parts = tokenLengths.split(separator: "-").compactMap { Int($0) }
        guard parts.count == 2, parts[0] >= 2, parts[0] <= parts[1], parts[0] % 2 == 0 else {
            throw ValidationError("--token-lengths takes MIN-MAX hex digits, even MIN ≥ 2; got \(tokenLengths).")
        }
        return parts[0]...parts[1]
    }

    /// The job the options describe.
    func job() throws -> SinkJob {
        // --capture is written as the sink runs: never over a file it reads, nor a run's.
        if let capture {
            let read: [(String, String?)] = [
                ("--tls-cert", tlsCert), ("--tls-key", tlsKey), ("--client-ca", clientCa),
                ("--scenario", scenario.scenarioFile), ("--unregistered-tokens", scenario.unregisteredTokens),
                ("--bad-tokens", scenario.badTokens), ("--expect-tokens", expectTokens),
                ("--key-file", tokenKey.keyFile),
            ]
            try OutputFile.check(
                [("--capture", capture)],
                inputs: read.compactMap { option, path in path.map { (option, $0) } },
                folders: output.map { [("--output", $0)] } ?? []
            )
        }
        var job = SinkJob()
        (job.host, job.port) = try address()
        job.threads = threads
        job.configuration.tokenFormat = DeviceTokenFormat(hexLengths: try lengths())
        job.configuration.allowedBundles = topic.isEmpty ? nil : Set(topic)
        job.configuration.initialMaxConcurrentStreams = initialStreams
        job.configuration.maxConcurrentStreams = maxStreams
        job.configuration.throttleAfterRejection = throttleAfterRejection
        job.configuration.idleTimeout = try idleTimeout.checked(option: "--idle-timeout")
        job.configuration.incompleteFrameTimeout = try frameTimeout.checked(option: "--frame-timeout")
        job.configuration.requestTimeout = try requestTimeout.checked(option: "--request-timeout")
        job.configuration.maxConnectionsPerPeer = maxConnectionsPerPeer
        job.configuration.maxIdleConnectionsPerPeer = maxIdleConnectionsPerPeer
        job.configuration.idleGrace = try idleGrace.checked(option: "--idle-grace")
        job.configuration.coalescing.share = try coalesce.checked("--coalesce")
        job.configuration.scenario = try scenario.scenario(devices: devices)
        if let (file, id, team) = tokenKey.key { job.tokenKey = SinkJob.TokenKey(file: file, keyID: id, teamID: team) }
        if let tlsCert, let tlsKey { job.tls = .files(certificate: tlsCert, key: tlsKey) }
        if let tlsSelfSigned { job.tls = .selfSigned(directory: tlsSelfSigned) }
        job.clientCertificateAuthorities = clientCa
        if let admin { job.admin = try Self.address(admin, option: "--admin") }
        job.serve = try serveOption.address()
        if let capture {
            if let captureSample {
                guard (0...1).contains(captureSample.fraction) else {
                    throw ValidationError(
                        "--capture-sample: \(captureSample.defaultValueDescription) is not a share from 0% to 100%."
                    )
                }
                job.capture = (capture, .sample(captureSample.fraction))
            } else {
                job.capture = (capture, .first(captureFirst ?? Int.max))
            }
        }
        job.ending = ending
        job.returnWave = try returnWave.settings()
        if let output {
            var instrument = SinkJob.Instrument(output: output)
            instrument.expectTokens = try expectTokens.map { try SinkJob.TokenList(expecting: $0) }
            instrument.trigger = trigger
            if let planRtt { instrument.planRTT = planRtt }
            if let minMeasured { instrument.minMeasured = minMeasured }
            if let budget = liveactivityPriorityBudget {
                instrument.priorityBudget = Int(budget.count)
                instrument.priorityWindow = budget.windowOrSecond
            }
            job.instrument = instrument
        }
        return job
    }

    func run() async throws {
        switch fcm.service {
        case .apns:
            var job = try job()
            job.reporter = ConsoleReporter.shared
            try await Self.serve(SinkService(job))
        case .fcm:
            var job = try fcmJob()
            job.reporter = ConsoleReporter.shared
            try await Self.serve(FCMSinkService(job))
        }
    }

    /// Runs a sink's service until SIGINT, SIGTERM or SIGHUP drains it. It may end by itself
    /// (--expect, --duration, --idle-exit): then the group ends too.
    static func serve(_ service: some Service) async throws {
        let group = ServiceGroup(
            configuration: ServiceGroupConfiguration(
                services: [.init(service: service, successTerminationBehavior: .gracefullyShutdownGroup)],
                gracefulShutdownSignals: [.sigint, .sigterm, .sighup],
                logger: Logger(label: "fanout.sink", factory: { _ in SwiftLogNoOpLogHandler() })
            )
        )
        try await group.run()
    }
}

// MARK: --service fcm

extension SinkCommand {
    /// The options given that mock APNs alone: `--service fcm` refuses each by name.
    var givenForAPNsOnly: [String] {
        let defaults = try? SinkCommand.parse([])
        let given: [(String, Bool)] = [
            ("--client-ca", clientCa != nil), ("--capture", capture != nil),
            ("--capture-first", captureFirst != nil), ("--capture-sample", captureSample != nil),
            ("--topic", !topic.isEmpty), ("--token-lengths", tokenLengths != defaults?.tokenLengths),
            ("--initial-streams", initialStreams != defaults?.initialStreams),
            ("--max-streams", maxStreams != defaults?.maxStreams),
            ("--throttle-after-rejection", throttleAfterRejection),
            ("--coalesce", coalesce != defaults?.coalesce),
            ("--liveactivity-priority-budget", liveactivityPriorityBudget != nil),
            ("--key-file/--key-id/--team-id", tokenKey.isGiven),
        ]
        return given.filter(\.1).map(\.0)
            + scenario.givenOptions.filter { !SinkScenarioOptions.fcmOptions.contains($0) }
            + devices.givenOptions.filter(DeviceOptions.apnsOnly.contains)
    }

    func validateFCM() throws {
        if let goAway = scenario.goawayAfterRequests, let reason = goAway.reason {
            throw ValidationError(
                "--goaway-after-requests \(goAway.requests):\(reason.rawValue): FCM's GOAWAY carries no APNs reason: give N alone."
            )
        }
        let apnsOnly = givenForAPNsOnly
        if !apnsOnly.isEmpty {
            throw ValidationError(
                "--service fcm does not take \(apnsOnly.joined(separator: ", ")): \(apnsOnly.count == 1 ? "it mocks" : "they mock") APNs alone (docs/fcm.md)."
            )
        }
        if tlsCert != nil && tlsSelfSigned != nil {
            throw ValidationError("--tls-cert and --tls-self-signed are two ways to the same thing: give one.")
        }
        if noAuth && (fcm.fcmCredentials != nil || fcm.fcmCredentialsOut != nil) {
            throw ValidationError(
                "--no-auth takes any bearer: it has no service account to trust (--fcm-credentials) or write (--fcm-credentials-out)."
            )
        }
        try validateConnections()
        try validateEndings()
        _ = try address()
        let file = try fcmScenarioFile()
        _ = try fcm.configuration(noAuth: noAuth, file: file)
        _ = try fcmScenario(file)
    }

    /// `--scenario FILE` for the FCM sink, read (`FCMSinkScenarioFile`).
    func fcmScenarioFile() throws -> FCMSinkScenarioFile? {
        try scenario.scenarioFile.map { path in
            do { return try FCMSinkScenarioFile(contentsOfFile: path) } catch { throw ValidationError("\(error).") }
        }
    }

    /// The settings both sinks take: the scenario file's, then the command line's over them,
    /// checked as a scenario is.
    func fcmScenario(_ file: FCMSinkScenarioFile?) throws -> SinkScenario {
        var shared = file?.shared ?? SinkScenario()
        if let latency = scenario.latency { shared.latency = latency }
        if let seed = scenario.seed { shared.seed = seed }
        if let (requests, _) = scenario.goawayAfterRequests { shared.faults.goAwayAfterRequests = requests }
        if let maxConnections = scenario.maxConnections { shared.faults.maxConnections = maxConnections }
        for setting in [scenario.rtt, scenario.bandwidth, scenario.sinkBandwidth].compactMap({ $0 }) {
            shared.apply(setting)
        }
        for setting in devices.given { shared.devices.apply(setting) }
        do { try shared.validate() } catch { throw ValidationError("\(error).") }
        return shared
    }

    /// The FCM sink's job the options describe.
    func fcmJob() throws -> FCMSinkJob {
        var job = FCMSinkJob()
        (job.host, job.port) = try address()
        job.threads = threads
        let file = try fcmScenarioFile()
        job.configuration = try fcm.configuration(noAuth: noAuth, file: file)
        let shared = try fcmScenario(file)
        job.configuration.latency = shared.latency
        if scenario.seed != nil || file?.names.contains("seed") == true { job.configuration.seed = shared.seed }
        job.scenarioFile = file?.file
        if let path = scenario.unregisteredTokens {
            job.unregisteredTokens = path
        } else if let setting = file?.fcm["unregistered-tokens"] {
            job.unregisteredTokens = setting.value
            job.unregisteredTokensGiven = "\(setting.place): unregistered-tokens"
        }
        job.configuration.goAwayAfterRequests = shared.faults.goAwayAfterRequests
        job.configuration.idleTimeout = try idleTimeout.checked(option: "--idle-timeout")
        job.configuration.requestTimeout = try requestTimeout.checked(option: "--request-timeout")
        job.configuration.incompleteFrameTimeout = try frameTimeout.checked(option: "--frame-timeout")
        job.configuration.maxConnections = shared.faults.maxConnections
        job.configuration.maxConnectionsPerPeer = maxConnectionsPerPeer
        job.configuration.maxIdleConnectionsPerPeer = maxIdleConnectionsPerPeer
        job.configuration.idleGrace = try idleGrace.checked(option: "--idle-grace")
        job.configuration.devices = shared.devices
        do { try job.configuration.devices.validate() } catch { throw ValidationError("\(error).") }
        job.returnWave = try returnWave.settings()
        job.credentials = fcm.fcmCredentials
        job.credentialsOut = fcm.fcmCredentialsOut
        job.wire = shared.wire
        if let tlsCert, let tlsKey { job.tls = .files(certificate: tlsCert, key: tlsKey) }
        if let tlsSelfSigned { job.tls = .selfSigned(directory: tlsSelfSigned) }
        if let admin { job.admin = try Self.address(admin, option: "--admin") }
        job.serve = try serveOption.address()
        job.ending = ending
        if let output {
            var instrument = SinkJob.Instrument(output: output)
            instrument.expectTokens = try expectTokens.map { try SinkJob.TokenList(expectingFCM: $0) }
            instrument.trigger = trigger
            if let planRtt { instrument.planRTT = planRtt }
            if let minMeasured { instrument.minMeasured = minMeasured }
            job.instrument = instrument
        }
        return job
    }
}
