import FanoutAPNs
import FanoutAssembly
import FanoutClient
import FanoutEndpoint
import FanoutFiles
import FanoutHTTP2
import FanoutNotation
import FanoutProbe
import FanoutResults
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// `fanout probe`: one connection to an endpoint, measured (`ProbeState`): its TLS and SETTINGS,
/// PING round trips, and with device tokens, requests one at a time and then in parallel, then
/// the flow test (the connection kept full for `flowDuration`, at most `flowCount` requests):
/// the window, its refills and what bound the connection.
public struct ProbeJob: Sendable {
    /// The endpoint, TLS, auth and headers, as `fanout send` takes them.
    public var send: SendJob
    /// A file of real device tokens, one a line; `nil`: no request is sent.
    public var tokensFile: String?
    /// Requests in each phase, and PINGs.
    public var count = Self.defaultCount
    /// The whole probe's bound.
    public var timeout: Duration = .seconds(60)
    /// How long the flow test keeps the connection full (at least 20 round trips); `nil`: no
    /// flow test. It runs only with `tokensFile`.
    public var flowDuration: Duration? = Self.defaultFlowDuration
    /// The most notifications the flow test sends.
    public var flowCount = Self.defaultFlowCount

    public static let defaultCount = 20
    public static let defaultFlowDuration: Duration = .seconds(3)
    public static let defaultFlowCount = 10_000
    public static let mostFlowCount = 1_000_000
    /// The most streams the flow test opens, whatever the server allows.
    public static let mostFlowStreams = 10_000
    public static let mostCount = 1000
    /// The notification a probe sends when not given a template: silent, a background push.
    public static let silentTemplate = #"{"aps":{"content-available":1}}"#

    public init(send: SendJob) {
        self.send = send
    }

    /// What the probe found, and what kept it from the endpoint if something did.
    public struct Outcome: Sendable {
        public var document: ProbeDocument
        public var unreachable: EndpointFailure?
    }

    /// Runs the probe, blocking.
    public func run() throws -> Outcome {
        let (tokens, distinct) = try readTokens()
        var configuration = try send.loadConfiguration()
        let flow = flowDuration.map {
            ProbeState.FlowPlan(
                duration: $0.wholeNanoseconds,
                mostRequests: flowCount,
                mostStreams: Self.mostFlowStreams
            )
        }
        // The server's limit is the one that binds the flow test, not ours.
        configuration.shape.streamsPerConnection = max(1, tokens.count, flow == nil ? 0 : Self.mostFlowStreams)
        let started = Date()
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        defer { try? group.syncShutdownGracefully() }
        let loop = group.next()
        let promise = loop.makePromise(of: ProbeOutcome.self)
        let channel = NIOLockedValueBox<(any Channel)?>(nil)
        let timer = loop.scheduleTask(in: TimeAmount(timeout)) {
            channel.withLockedValue { $0?.close(promise: nil) }
        }
        let pings = count
        let endpoint = configuration.endpoint
        let encoder = configuration.encoder
        endpoint.connect(
            on: loop,
            configuration: configuration.shape.http2,
            delegate: {
                ProbeConnection(endpoint: endpoint, encoder: encoder, tokens: tokens, pings: pings, flow: flow) {
                    promise.succeed($0)
                }
            }
        ).whenComplete { result in
            switch result {
            case .success(let (opened, _)): channel.withLockedValue { $0 = opened }
            case .failure(let error):
                promise.succeed(
                    ProbeOutcome(
                        record: ProbeState.Record(),
                        finished: false,
                        failure: EndpointFailure(classifying: error)
                            ?? EndpointFailure(.connectFailed, "\(error)")
                    )
                )
            }
        }
        var outcome = try promise.futureResult.wait()
        timer.cancel()
        outcome.failure = try configuration.endpoint.examine(outcome.failure, on: loop).wait()
        var notes: [String] = []
        if !outcome.finished && outcome.failure == nil {
            notes.append(
                "the probe did not finish (its connection ended, or --timeout \(timeout) passed): what it measured so far is kept"
            )
        }
        if let goAway = outcome.goAway { notes.append("the server sent GOAWAY \(goAway)") }
        if let flow = outcome.record.flow {
            notes.append(
                "the flow test sent \(flow.sent) notifications to the \(distinct) tokens of the file (--flow-count, --no-flow)"
            )
        }
        if distinct < tokens.count {
            notes.append(
                "\(distinct) tokens in the file for \(tokens.count) requests: each was sent more than once"
            )
        }
        let document = ProbeDocument(
            endpoint: send.endpoint.description,
            started: started,
            tls: send.endpoint.tls,
            outcome: outcome,
            notes: notes
        )
        return Outcome(document: document, unreachable: outcome.failure)
    }

    /// `count` tokens from the file as hex text, cycling when it holds fewer, and how many
    /// the file held.
    func readTokens() throws -> (tokens: [[UInt8]], inFile: Int) {
        guard let tokensFile else { return ([], 0) }
        let text: String
        do {
            text = try String(contentsOfFile: tokensFile, encoding: .utf8)
        } catch {
            throw JobError.cannotRead(.optionValue("--tokens", tokensFile), error.reason)
        }
        let lines = Self.tokenLines(text)
        guard !lines.isEmpty else { throw JobError.holdsNo(.optionValue("--tokens", tokensFile), "device token") }
        for (number, token) in lines {
            if let problem = DeviceTokenFormat.default.problem(in: token) {
                throw JobError(.input, at: .option("--tokens"), .located("\(tokensFile):\(number): \(problem)"))
            }
        }
        return ((0..<count).map { Array(lines[$0 % lines.count].token.lowercased().utf8) }, lines.count)
    }

    /// Each non-blank line's first field that is not a `#` comment, with its line number.
    static func tokenLines(_ text: String) -> [(number: Int, token: String)] {
        TextLines(text).compactMap { line in
            guard let field = line.text.split(whereSeparator: { $0 == " " || $0 == "\t" }).first,
                !field.hasPrefix("#")
            else { return nil }
            return (line.number, String(field))
        }
    }
}
