import ArgumentParser
import FanoutAPNs
import FanoutClient
import FanoutHTTP2
import FanoutPayload
import FanoutReport
import FanoutSink
import FanoutTokens
import Foundation
import NIOPosix

/// `fanout send`: a token set's notifications to any APNs-compatible endpoint.
struct SendCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "send",
        abstract: "Send a template's notification to every token of a set over HTTP/2.",
        discussion: """
            http:// endpoints are h2c with prior knowledge, https:// ones TLS with ALPN h2. Every \
            connection keeps up to --streams requests in flight (and no more than the server \
            allows): the closed model. --rate R (with --duration, or --stage ramps) is the open \
            model: notifications are due on a schedule whatever the server does, and latency \
            counts from each one's due time. Prints the summary and writes summary.json and \
            latency.hgrm to --output (default: a new folder under results/); a live progress \
            line shows on a terminal. Ctrl-C stops the run; what was done is still summarised \
            and written. Exit status: 0 when every notification was accepted or rejected by the \
            server, 3 when some failed (no answer after every try), 4 when the run is invalid \
            (the generator fell behind its schedule by more than --max-lag), 130 after Ctrl-C, 1 \
            on an error.
            """
    )

    @Option(
        name: .long,
        help: ArgumentHelp("Where to send: http://host:port or https://host[:port].", valueName: "url")
    )
    var endpoint: String

    @OptionGroup var tokenOptions: TokenInputOptions

    @OptionGroup var templateOptions: TemplateOptions

    @Option(
        name: .long,
        help: ArgumentHelp("apns-topic: the bundle id plus the push type's suffix.", valueName: "topic")
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
            "apns-id: random (a UUID v4 per notification, kept on its retries) or none (APNs makes one).",
            valueName: "policy"
        )
    )
    var apnsId: String?

    @Option(name: .long, help: ArgumentHelp("HTTP/2 connections.", valueName: "c"))
    var connections = 4

    @Option(name: .long, help: ArgumentHelp("Most streams in flight per connection.", valueName: "m"))
    var streams = 1000

    @Option(name: .long, help: ArgumentHelp("Event loops.", valueName: "n"))
    var threads = 1

    @OptionGroup var retry: RetryOptions

    @Option(name: .long, help: ArgumentHelp("CA certificates (PEM) to trust the server with.", valueName: "file"))
    var caFile: String?

    @Flag(name: .long, help: "Trust any server certificate (loopback tests only).")
    var insecure = false

    @Option(name: .long, help: ArgumentHelp("Certificate auth: the client certificate (PEM).", valueName: "file"))
    var cert: String?

    @Option(name: .long, help: ArgumentHelp("Certificate auth: its private key (PEM).", valueName: "file"))
    var certKey: String?

    @Option(name: .long, help: ArgumentHelp("Token auth: the .p8 key.", valueName: "file"))
    var keyFile: String?

    @Option(name: .long, help: ArgumentHelp("Token auth: the key's 10-character id.", valueName: "id"))
    var keyId: String?

    @Option(name: .long, help: ArgumentHelp("Token auth: the team id.", valueName: "id"))
    var teamId: String?

    @Option(name: .long, help: ArgumentHelp("Renew the provider token this often (20m to 60m).", valueName: "duration"))
    var tokenRefresh = "50m"

    @Option(name: .long, help: ArgumentHelp("Write tokens answered 410 here, one per line.", valueName: "file"))
    var goneTokens: String?

    @OptionGroup var load: LoadModelOptions

    @OptionGroup var repeating: RepeatOptions

    @Option(name: .long, help: ArgumentHelp("Where summary.json and latency.hgrm go.", valueName: "dir"))
    var output: String?

    /// The endpoint as scheme, host and port.
    struct Endpoint {
        var tls: Bool
        var host: String
        var port: Int
    }

    func parsedEndpoint() throws -> Endpoint {
        guard let url = URLComponents(string: endpoint), let scheme = url.scheme, ["http", "https"].contains(scheme),
            let host = url.host, !host.isEmpty, url.path.isEmpty || url.path == "/"
        else {
            throw ValidationError("--endpoint takes http://HOST:PORT or https://HOST[:PORT], got \(endpoint).")
        }
        let tls = scheme == "https"
        return Endpoint(
            tls: tls,
            host: host.trimmingCharacters(in: CharacterSet(charactersIn: "[]")),
            port: url.port ?? (tls ? 443 : 80)
        )
    }

    func validate() throws {
        let endpoint = try parsedEndpoint()
        if !endpoint.tls && (caFile != nil || insecure || cert != nil) {
            throw ValidationError("--ca-file, --insecure and --cert need an https:// endpoint.")
        }
        if (cert == nil) != (certKey == nil) { throw ValidationError("--cert and --cert-key go together.") }
        let keyOptions = [keyFile, keyId, teamId].compactMap { $0 }.count
        if keyOptions != 0 && keyOptions != 3 {
            throw ValidationError("Token auth needs --key-file, --key-id and --team-id together.")
        }
        if connections < 1 || streams < 1 || threads < 1 {
            throw ValidationError("--connections, --streams and --threads must be at least 1.")
        }
        if let priority, ![10, 5, 1].contains(priority) { throw ValidationError("--priority is 10, 5 or 1.") }
        if let collapseId, collapseId.utf8.count > 64 { throw ValidationError("--collapse-id holds at most 64 bytes.") }
        if repeating.repeats > 1 && tokenOptions.tokens == "-" {
            throw ValidationError("--repeat reads the tokens again each time: give a file, not standard input.")
        }
        if let apnsId, !["none", "random"].contains(apnsId) {
            throw ValidationError("--apns-id is random or none, not \(apnsId).")
        }
        let headers = try headerSettings()
        if (topic ?? headers.topic) == nil {
            throw ValidationError("Give the apns-topic: --topic, or topic in --scenario.")
        }
        let refresh = try duration(tokenRefresh, option: "--token-refresh")
        if !ProviderTokens.allowedRefresh.contains(refresh) {
            throw ValidationError("--token-refresh must be from 20m to 60m (APNs' rule), not \(tokenRefresh).")
        }
    }

    /// The headers of `--scenario`, or none.
    func headerSettings() throws -> HeaderSettings {
        guard let scenario else { return HeaderSettings() }
        do {
            return try HeaderSettings(contentsOfFile: scenario)
        } catch {
            throw ValidationError("\(error).")
        }
    }

    /// A duration option (the sink's notation: 500ms, 30s, 50m), longer than zero.
    func duration(_ text: String, option: String) throws -> Duration {
        do {
            let value = try SinkScenario.duration(text)
            guard value > .zero else { throw SinkScenarioError("it must be longer than 0") }
            return value
        } catch {
            throw ValidationError("\(option): \(error).")
        }
    }

    func run() throws {
        let endpoint = try parsedEndpoint()
        let file = try headerSettings()
        let pushType = templateOptions.pushType ?? file.pushType ?? .alert
        let template: PayloadTemplate
        do {
            template = try PayloadTemplate(
                contentsOf: templateOptions.template,
                options: templateOptions.options(pushType: pushType)
            )
        } catch {
            throw SendCommandError("\(error)")
        }
        let transport: HTTP2Transport
        do {
            transport =
                endpoint.tls
                ? try .tlsClient(
                    trustedCertificatesFile: caFile,
                    insecure: insecure,
                    certificateFile: cert,
                    keyFile: certKey
                )
                : .cleartext
        } catch {
            throw SendCommandError("cannot set up TLS with the files given: \(error)")
        }
        var configuration = LoadConfiguration(
            host: endpoint.host,
            port: endpoint.port,
            transport: transport,
            headers: NotificationHeaders(
                topic: topic ?? file.topic ?? "",
                pushType: pushType,
                priority: priority ?? file.priority,
                expiration: expiration ?? file.expiration,
                collapseID: collapseId ?? file.collapseID,
                generatesAPNsID: apnsId.map { $0 == "random" } ?? file.generatesAPNsID ?? false
            ),
            encoder: PayloadEncoder(template: template),
            connections: connections,
            streamsPerConnection: streams
        )
        configuration.streamTimeout = try retry.streamTimeout()
        configuration.maxAttempts = retry.attempts
        configuration.model = try load.model()
        if let keyFile, let keyId, let teamId {
            do {
                configuration.providerTokens = try ProviderTokens(
                    pem: try String(contentsOfFile: keyFile, encoding: .utf8),
                    keyID: keyId,
                    teamID: teamId,
                    refreshInterval: try duration(tokenRefresh, option: "--token-refresh")
                )
            } catch {
                throw SendCommandError("--key-file \(keyFile) holds no P-256 private key (.p8): \(error)")
            }
        }
        if let goneTokens {
            do {
                configuration.goneTokens = try TokenLineWriter(path: goneTokens)
            } catch {
                throw SendCommandError("cannot write --gone-tokens \(goneTokens): \(error.localizedDescription)")
            }
        }
        let directory = output ?? RunFolder.new()
        defer { configuration.goneTokens?.close() }
        let status = try repeating.run(into: directory) { folder in
            try sendOnce(configuration, endpoint: endpoint, writingTo: folder)
        }
        if status != 0 { throw ExitCode(status) }
    }

    /// One run of the token set into `directory`; its exit status.
    private func sendOnce(
        _ configuration: LoadConfiguration,
        endpoint: Endpoint,
        writingTo directory: String
    ) throws
        -> Int32
    {
        let tokens: TokenStream
        do {
            tokens = try TokenStream(tokenOptions.source, configuration: tokenOptions.readerConfiguration)
        } catch {
            throw SendCommandError("\(error)")
        }
        let group = MultiThreadedEventLoopGroup(numberOfThreads: threads)
        defer { try? group.syncShutdownGracefully() }
        let engine = LoadEngine(configuration: configuration, tokens: tokens, group: group)
        let progress = ProgressDisplay.make(total: tokenOptions.expectedCount(schedule: configuration.model.schedule))
        let report = onInterrupt({ engine.cancel() }, during: { engine.run(progress: progress) })
        ProgressDisplay.clear()
        if let error = report.tokens?.error { throw SendCommandError("\(error)") }
        let summary = RunSummary(
            report: report,
            endpoint: endpoint.tls
                ? "https://\(endpoint.host):\(endpoint.port)" : "http://\(endpoint.host):\(endpoint.port)",
            configuration: configuration,
            tokenSource: tokenOptions.sourceDescription
        )
        do {
            try summary.write(to: directory)
        } catch {
            throw SendCommandError("cannot write the results to \(directory): \(error.localizedDescription)")
        }
        StandardStream.output.write(
            (summary.text + "\nresults: \(directory)/ (\(RunSummary.files.joined(separator: ", ")))\n").utf8
        )
        if report.cancelled && report.abandoned == nil { return interruptedStatus }
        if !report.invalidReasons.isEmpty { return invalidRunStatus }
        return report.snapshot.failed.isEmpty ? 0 : 3
    }
}

/// A problem sending, said in one line.
struct SendCommandError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
