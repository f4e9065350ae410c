import ArgumentParser
import FanoutAPNs
import FanoutHTTP2
import FanoutSink
import Foundation
import NIOPosix

/// `fanout sink`: a mock APNs on HTTP/2.
struct SinkCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sink",
        abstract: "Run a mock APNs that validates, authenticates and counts notifications like APNs.",
        discussion: """
            Prints "listening on HOST:PORT" when ready. SIGINT or SIGTERM drains it: new requests get \
            503 Shutdown, every connection gets GOAWAY, and the summary is printed.
            """
    )

    @Option(name: .long, help: ArgumentHelp("Where to listen; port 0 picks a free one.", valueName: "host:port"))
    var listen = "127.0.0.1:2197"

    @Option(name: .long, help: ArgumentHelp("Event loops (threads) serving connections.", valueName: "n"))
    var threads = 1

    @Option(name: .long, help: ArgumentHelp("TLS certificate chain (PEM); serves h2 over TLS.", valueName: "file"))
    var tlsCert: String?

    @Option(name: .long, help: ArgumentHelp("TLS private key (PEM), with --tls-cert.", valueName: "file"))
    var tlsKey: String?

    @Option(name: .long, help: ArgumentHelp("An ES256 key (.p8 or public key PEM) for token auth.", valueName: "file"))
    var keyFile: String?

    @Option(name: .long, help: ArgumentHelp("The key's 10-character key id.", valueName: "id"))
    var keyId: String?

    @Option(name: .long, help: ArgumentHelp("The team the key belongs to.", valueName: "id"))
    var teamId: String?

    @Flag(name: .long, help: "Accept requests without token auth (the default when no key is given).")
    var noAuth = false

    @Option(
        name: .long,
        help: ArgumentHelp("A bundle id whose topics are accepted; repeat for more (default: any).", valueName: "id")
    )
    var topic: [String] = []

    @Option(name: .long, help: ArgumentHelp("Accepted token lengths in hex digits.", valueName: "min-max"))
    var tokenLengths = "32-400"

    @Option(
        name: .long,
        help: ArgumentHelp("MAX_CONCURRENT_STREAMS before the first accepted request.", valueName: "n")
    )
    var initialStreams: UInt32 = 1

    @Option(name: .long, help: ArgumentHelp("MAX_CONCURRENT_STREAMS after it.", valueName: "n"))
    var maxStreams: UInt32 = 1000

    @Flag(name: .long, help: "Drop to --initial-streams after a rejection, rise after the next success.")
    var throttleAfterRejection = false

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Latency per response: fixed:5ms, uniform:1ms-10ms, normal:5ms,1ms, lognormal:5ms,0.5 or empirical:FILE.",
            valueName: "kind:values"
        )
    )
    var latency: String?

    @Option(
        name: .long,
        help: ArgumentHelp("Freeze every answer for LENGTH every EVERY, e.g. 10s/1s.", valueName: "every/length")
    )
    var stall: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Answer this share of valid requests with an error, e.g. Unregistered:3%; repeat.",
            valueName: "reason:percent"
        )
    )
    var error: [String] = []

    @Option(name: .long, help: ArgumentHelp("Tokens to answer 410 Unregistered, one per line.", valueName: "file"))
    var unregisteredTokens: String?

    @Option(name: .long, help: ArgumentHelp("Tokens to answer 400 BadDeviceToken, one per line.", valueName: "file"))
    var badTokens: String?

    @Option(name: .long, help: ArgumentHelp("The seed of latencies and errors.", valueName: "n"))
    var seed: UInt64 = 1

    @Option(
        name: .long,
        help: ArgumentHelp(
            "GOAWAY after N requests on a connection, with an APNs reason (default Shutdown).",
            valueName: "n[:reason]"
        )
    )
    var goawayAfterRequests: String?

    @Option(name: .long, help: ArgumentHelp("GOAWAY this long after each connection opens.", valueName: "duration"))
    var goawayAfterTime: String?

    @Option(name: .long, help: ArgumentHelp("Close each connection without GOAWAY after N requests.", valueName: "n"))
    var closeAfterRequests: Int?

    @Option(name: .long, help: ArgumentHelp("Never answer this share of requests, e.g. 0.1%.", valueName: "percent"))
    var unanswered: String?

    @Option(name: .long, help: ArgumentHelp("Close connections beyond this many at once.", valueName: "n"))
    var maxConnections: Int?

    func validate() throws {
        if (tlsCert == nil) != (tlsKey == nil) { throw ValidationError("--tls-cert and --tls-key go together.") }
        let keyOptions = [keyFile, keyId, teamId].compactMap { $0 }.count
        if keyOptions != 0 && keyOptions != 3 {
            throw ValidationError("Token auth needs --key-file, --key-id and --team-id together.")
        }
        if keyOptions == 3 && noAuth { throw ValidationError("--no-auth and --key-file contradict each other.") }
        if threads < 1 { throw ValidationError("--threads must be at least 1.") }
        if initialStreams < 1 || maxStreams < initialStreams {
            throw ValidationError("Need 1 ≤ --initial-streams ≤ --max-streams.")
        }
        _ = try address()
        _ = try lengths()
    }

    /// The scenario the options describe; a bad one is a usage error naming the option.
    func scenario() throws -> SinkScenario {
        var scenario = SinkScenario()
        scenario.seed = seed
        do {
            if let latency { scenario.latency = try LatencyDistribution(parsing: latency) }
            if let stall { scenario.stall = try SinkScenario.stall(stall) }
            scenario.errors = try error.map { text throws(SinkScenarioError) in try SinkScenario.error(text) }
            try scenario.validate()
            if let goawayAfterRequests {
                let (requests, reason) = try SinkScenario.goAway(goawayAfterRequests)
                scenario.faults.goAwayAfterRequests = requests
                scenario.faults.goAwayReason = reason
            }
            if let goawayAfterTime { scenario.faults.goAwayAfter = try SinkScenario.duration(goawayAfterTime) }
            if let closeAfterRequests {
                guard closeAfterRequests > 0 else {
                    throw SinkScenarioError("--close-after-requests must be at least 1")
                }
                scenario.faults.closeAfterRequests = closeAfterRequests
            }
            if let unanswered { scenario.faults.unansweredShare = try SinkScenario.share(unanswered) }
            if let maxConnections {
                guard maxConnections > 0 else { throw SinkScenarioError("--max-connections must be at least 1") }
                scenario.faults.maxConnections = maxConnections
            }
            if let unregisteredTokens { scenario.unregisteredTokens = try TokenList(contentsOf: unregisteredTokens) }
            if let badTokens { scenario.badTokens = try TokenList(contentsOf: badTokens) }
        } catch {
            throw ValidationError("\(error).")
        }
        return scenario
    }

    func address() throws -> (host: String, port: Int) {
        guard let colon = listen.lastIndex(of: ":"), let port = Int(listen[listen.index(after: colon)...]),
            (0...65_535).contains(port), colon != listen.startIndex
        else { throw ValidationError("--listen takes HOST:PORT, for example 127.0.0.1:2197; got \(listen).") }
        return (String(listen[..<colon]).trimmingCharacters(in: CharacterSet(charactersIn: "[]")), port)
    }

    func lengths() throws -> ClosedRange<Int> {
        let parts = tokenLengths.split(separator: "-").compactMap { Int($0) }
        guard parts.count == 2, parts[0] >= 2, parts[0] <= parts[1], parts[0] % 2 == 0 else {
            throw ValidationError("--token-lengths takes MIN-MAX hex digits, even MIN ≥ 2; got \(tokenLengths).")
        }
        return parts[0]...parts[1]
    }

    func run() throws {
        var configuration = SinkConfiguration()
        configuration.tokenFormat = DeviceTokenFormat(hexLengths: try lengths())
        configuration.allowedBundles = topic.isEmpty ? nil : Set(topic)
        configuration.initialMaxConcurrentStreams = initialStreams
        configuration.maxConcurrentStreams = maxStreams
        configuration.throttleAfterRejection = throttleAfterRejection
        configuration.scenario = try scenario()
        if let keyFile, let keyId, let teamId {
            let pem: String
            do {
                pem = try String(contentsOfFile: keyFile, encoding: .utf8)
            } catch {
                throw SinkCommandError("cannot read --key-file \(keyFile): \(error.localizedDescription)")
            }
            do {
                let key = try TokenAuthentication.Key(keyID: keyId, teamID: teamId, pem: pem)
                configuration.tokenAuthentication = TokenAuthentication(keys: [key])
            } catch {
                throw SinkCommandError("--key-file \(keyFile) holds no P-256 key in PEM: \(error)")
            }
        }
        let transport: HTTP2Transport
        if let tlsCert, let tlsKey {
            do {
                transport = try .tlsServer(certificateFile: tlsCert, keyFile: tlsKey)
            } catch {
                throw SinkCommandError("cannot use --tls-cert \(tlsCert) / --tls-key \(tlsKey): \(error)")
            }
        } else {
            transport = .cleartext
        }

        let group = MultiThreadedEventLoopGroup(numberOfThreads: threads)
        defer { try? group.syncShutdownGracefully() }
        let (host, port) = try address()
        let sink: Sink
        do {
            sink = try Sink(host: host, port: port, group: group, transport: transport, configuration: configuration)
        } catch {
            throw SinkCommandError("cannot listen on \(listen): \(error)")
        }
        let bound = sink.localAddress
        StandardStream.output.write("listening on \(bound.ipAddress ?? host):\(bound.port ?? port)\n".utf8)
        if configuration.tokenAuthentication == nil {
            printError("fanout sink: token auth is off (no --key-file given): every request is taken as authenticated")
        }

        let stop = DispatchSemaphore(value: 0)
        signal(SIGINT, SIG_IGN)
        signal(SIGTERM, SIG_IGN)
        let sources = [SIGINT, SIGTERM].map { number in
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { stop.signal() }
            source.resume()
            return source
        }
        stop.wait()
        for source in sources { source.cancel() }
        sink.drain()
        StandardStream.output.write((sink.statistics.summary.text + "\n").utf8)
    }
}

/// A problem with the sink's options or files, said in one line.
struct SinkCommandError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
