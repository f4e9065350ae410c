import ArgumentParser
import FanoutAPNs
import FanoutAssembly
import FanoutNotation
import FanoutPayload
import FanoutRun
import FanoutTokens
import Foundation

/// `fanout probe ENDPOINT`: what a plan assumes of an endpoint, measured on one connection.
struct ProbeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "probe",
        abstract:
            "Measure an endpoint on one connection: TLS, SETTINGS, PING and request round trips, streams, flow control.",
        discussion: """
            Connects as fanout send would (the same TLS and auth options) and reports the TLS \
            version, ALPN, and the server's SETTINGS; times --count PINGs one after another. With \
            --tokens FILE (a few real device tokens; with fewer than --count, each is sent again) \
            it sends --count notifications one at a time, then --count at once: their round \
            trips, the server's processing (a request's round trip less the PING's), and the \
            SETTINGS after the first accepted request (APNs raises its stream limit then). Then \
            the flow test keeps the connection full for --flow-duration (at least 20 round trips) \
            or --flow-count notifications, each answer replaced by a request: the connection \
            window and how the server refills it, the rate one connection reached and whether \
            the window or the streams bound it. It sends up to --flow-count notifications \
            (default: 10000) to the same tokens: --no-flow skips it. The notification is silent (a background push, {"aps":{"content-available":1}}, priority \
            5) unless --template says otherwise. Writes probe.json to --output; `fanout plan \
            --probe probe.json` plans with it. Exit status: 0, 5 when the endpoint could not be \
            reached (the cause on standard error), 1 on an error, 64 on a usage error.
            """
    )

    @Argument(help: ArgumentHelp("http://host:port (h2c) or https://host[:port].", valueName: "endpoint"))
    var endpoint: String

    @Option(name: .long, help: ArgumentHelp("Real device tokens to send to, one a line.", valueName: "file"))
    var tokens: String?

    @Option(
        name: .long,
        help: ArgumentHelp("Requests in each phase, and PINGs (at most 1000).", valueName: "n")
    )
    var count = ProbeJob.defaultCount

    @Option(name: .long, help: ArgumentHelp("The notification's template (default: a silent one).", valueName: "file"))
    var template: String?

    @Option(name: .long, help: ArgumentHelp("apns-push-type of --template's notification.", valueName: "type"))
    var pushType: APNsPushType?

    @OptionGroup var target: EndpointOptions

    @Option(name: .long, help: ArgumentHelp("How long the whole probe may take.", valueName: "duration"))
    var timeout: Duration = .seconds(60)

    @Option(name: .long, help: ArgumentHelp("How long the flow test keeps the connection full.", valueName: "duration"))
    var flowDuration: Duration = ProbeJob.defaultFlowDuration

    @Option(
        name: .long,
        help: ArgumentHelp("The most notifications the flow test sends to the tokens.", valueName: "n")
    )
    var flowCount = ProbeJob.defaultFlowCount

    @Flag(name: .long, help: "Skip the flow test (it runs only with --tokens).")
    var noFlow = false

    @Option(name: .long, help: ArgumentHelp("Where probe.json goes.", valueName: "dir"))
    var output: String?

    func validate() throws {
        guard (1...ProbeJob.mostCount).contains(count) else {
            throw ValidationError("--count is from 1 to \(ProbeJob.mostCount), not \(count).")
        }
        if tokens == nil && (template != nil || pushType != nil) {
            throw ValidationError("--template and --push-type shape the requests --tokens sends: give --tokens FILE.")
        }
        // Only requests reach devices: a probe without tokens sends none.
        if tokens != nil { try target.checkApple(endpoint, generatedTokens: false) }
        if timeout <= .zero { throw ValidationError("--timeout must be more than 0s.") }
        if !noFlow {
            guard flowDuration > .zero, flowDuration < timeout else {
                throw ValidationError(
                    "--flow-duration is above 0s and below --timeout (\(DurationNotation.format(timeout)))."
                )
            }
            guard (1...ProbeJob.mostFlowCount).contains(flowCount) else {
                throw ValidationError("--flow-count is from 1 to \(ProbeJob.mostFlowCount), not \(flowCount).")
            }
        }
    }

    func job() throws -> ProbeJob {
        var options = target
        if tokens == nil && options.topic == nil { options.topic = "fanout.probe" }
        let silent = template == nil
        if silent && options.priority == nil { options.priority = 5 }
        var send = try options.job(
            endpoint: endpoint,
            template: template ?? "<silent>",
            templateOptions: PayloadTemplate.Options(pushType: pushType ?? (silent ? .background : .alert)),
            pushType: pushType ?? (silent ? .background : nil),
            tokens: TokenSet(.generated(TokenGenerator(count: 1, seed: TokenGenerator.defaultSeed)))
        )
        if silent { send.inlineTemplate = ProbeJob.silentTemplate }
        var job = ProbeJob(send: send)
        job.tokensFile = tokens
        job.count = count
        job.timeout = timeout
        job.flowDuration = noFlow ? nil : flowDuration
        job.flowCount = flowCount
        return job
    }

    func run() throws {
        let outcome: ProbeJob.Outcome
        do {
            outcome = try job().run()
        } catch let error as JobError {
            reportError("\(error)")
            throw ExitCode.failure
        }
        let directory = output ?? RunFolder.new(kind: "probe")
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            try outcome.document.data().write(to: URL(fileURLWithPath: directory + "/probe.json"))
        } catch {
            reportError("cannot write \(directory)/probe.json: \(error)")
            throw ExitCode.failure
        }
        print(outcome.document.text)
        print("probe.json: \(directory)/probe.json")
        if let failure = outcome.unreachable {
            let endpoint = try EndpointOptions.parsedEndpoint(endpoint)
            printError(RunSummary.unreachableLine(failure, host: endpoint.host, port: endpoint.port))
            throw ExitCode(RunStatus.unreachable.rawValue)
        }
    }
}
