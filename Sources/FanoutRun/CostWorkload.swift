import FanoutAPNs
import FanoutClient
import FanoutDevices
import FanoutEndpoint
import FanoutFCMSink
import FanoutHTTP2
import FanoutInstrument
import FanoutPayload
import FanoutSink
import FanoutTokens
import NIOCore

/// The cost gate's workload: one fan-out through the whole hot path, in one process, with no
/// socket and no event loop, so that a deterministic counter (valgrind) gives the same count on
/// every run of the same build:
///
/// ```
///   token file ─► TokenReader ─► NotificationFeed ─► LoadConnection ─► PayloadEncoder, HPACK, frames
///        (its own thread, finished                        ▲                    │ client.outbound
///         before the first send)                          │ answers            ▼
///   LoopRecorder ◄─ histogram ◄─ LoadConnection ◄─ frames, HPACK ◄─ SinkConnection (parse, validate, answer)
/// ```
///
/// The sender's `LoadConnection` and the sink's `SinkConnection` are the ones a run uses, joined
/// by an `HTTP2InMemoryPair`; tokens are read by the run's `TokenStream`, all of them before the
/// first request (enough batches circulate), so the sending thread never waits on the reader.
/// scripts/cost.sh runs it under callgrind and reads each stage's instructions per notification.
public struct CostWorkload: Sendable {
    /// The token set: a file (text or binary), or generated.
    public var tokens: TokenSource
    /// The tokens it holds: batches enough for all of them circulate, so the reader finishes
    /// before the first request.
    public var count: Int
    /// Streams the sender keeps open on its one connection.
    public var streams = 100
    /// Whether the sink measures the provider as `fanout sink --output` does (its card, stream
    /// use and arrivals: `ProviderInstrument`).
    public var instrument = false
    /// Whether a device fleet stands behind the sink (`fanout sink --device-…`): `fleet`'s.
    public var devices = false
    /// Whether the fleet's devices engage (`--device-open 3% --return-to …`, issue #63): every
    /// delivered poll's media download and 3% of them opening an hour later, held as return
    /// events (no wave is sent here: what is measured is the sink's part).
    public var engagement = false
    /// FCM HTTP v1 sends of `fcmPoll` (`fanout send --service fcm`) to the FCM sink as
    /// `fanout sink --service fcm` serves by default (its own bearer, the quota, device rates)
    /// (`FCMHTTP2Connection`), instead of APNs notifications to the APNs sink.
    public var fcm = false

    /// The poll for Android (fixtures/fcm-poll.json): what the FCM workload sends.
    public static let fcmPoll = """
        {"message":{"notification":{"title":"Poll","body":"Do you like the new design?"},\
        "data":{"category":"poll","ok":"https://example.com/ok","nok":"https://example.com/nok"},\
        "android":{"priority":"high","notification":{"click_action":"poll","sound":"default"}}}}
        """

    /// The fleet `devices` puts behind the sink: 20% offline and back over 0–120 s, 10% low
    /// power, 2% disabled, 1% uninstalled, a log-normal delivery delay (scripts/bench/sink-devices.sh's).
    public static var fleet: DeviceFleetSettings {
        var fleet = DeviceFleetSettings()
        fleet.offline = 0.2
        fleet.returnAfter = .uniform(.zero, .seconds(120))
        fleet.lowPower = 0.1
        fleet.disabled = 0.02
        fleet.uninstalled = 0.01
        fleet.delay = .logNormal(median: .milliseconds(300), sigma: 0.5)
        return fleet
    }
    /// The engagement `engagement` gives the fleet: 3% open an hour after delivery by OK (60%)
    /// or NOK (30%), four requests an open; a backend that is never reached.
    public static var engagement: EngagementSettings {
        var engagement = EngagementSettings()
        engagement.open = 0.03
        engagement.openAfter = .fixed(.seconds(3600))
        engagement.actions = [.init(name: "OK", share: 0.6), .init(name: "NOK", share: 0.3)]
        engagement.requestsPerOpen = 4
        engagement.returnTo = try? ReturnURL(parsing: "http://127.0.0.1:9")
        return engagement
    }

    /// The notification; the poll when `nil`.
    public var template: PayloadTemplate?

    public init(tokens: TokenSource, count: Int) {
        self.tokens = tokens
        self.count = count
    }

    /// What a run did: every count a sceptic needs to see that the work was the work.
    public struct Result: Sendable, Equatable {
        /// Tokens the reader handed out.
        public var tokens: UInt64
        /// Requests the sender sent, and those answered 200.
        public var sent: Int
        public var accepted: Int
        /// Requests the sink received, and accepted.
        public var sinkRequests: Int
        public var sinkAccepted: Int
        /// Whether the sender's and the sink's digests of the accepted notifications agree
        /// (`nil`: the FCM sink keeps no digest).
        public var digestsAgree: Bool?
        /// Latencies recorded.
        public var latencies: UInt64
        /// Round trips of the in-memory pair.
        public var roundTrips: Int
    }

    /// Runs the fan-out; throws when the token set cannot be read or the run did not finish.
    public func run() throws -> Result {
        let template =
            try self.template
            ?? (fcm
                ? PayloadTemplate(fcmSend: Array(Self.fcmPoll.utf8), file: "fcm-poll")
                : PayloadTemplate(json: Array(RunJob.poll.utf8), file: "poll"))
        let (stream, read) = try readTokens()

        var shape = LoadShape()
        shape.connections = 1
        shape.streamsPerConnection = streams
        var configuration = LoadConfiguration(
            host: "in-memory",
            port: 0,
            headers: try NotificationHeaders(topic: "com.example.app", pushType: template.options.pushType),
            encoder: PayloadEncoder(template: template),
            shape: shape
        )
        // The FCM sink as `fanout sink --service fcm` serves by default: the bearers its token
        // endpoint issued (the sender's is one, good for the hour), the project's quota (600,000
        // a minute: far above the workload's sends) and each device's rates.
        var fcmSinkConfiguration = FCMSinkConfiguration()
        fcmSinkConfiguration.project = "fanout-cost"
        let fcmService = fcm ? FCMService(configuration: fcmSinkConfiguration, account: nil) : nil
        if let fcmService {
            let bearer = fcmService.tokens.issue(
                lifetime: 3_600_000_000_000,
                now: NIODeadline.now().uptimeNanoseconds
            )
            configuration.endpoint.fcm = FCMDestination(
                project: "fanout-cost",
                authorizations: FixedAuthorization("Bearer \(bearer)")
            )
        }
        let statistics = LoadStatistics()
        // One interval for the whole workload: a once-a-second hand-over would make the count
        // depend on how long valgrind took.
        let collector = IntervalCollector(
            start: NIODeadline.now().uptimeNanoseconds,
            warmUp: 0,
            loops: 1,
            interval: Self.interval
        )
        let recorder = LoopRecorder(collector: collector)
        let client = LoadConnection(
            configuration: configuration,
            feed: NotificationFeed(stream),
            statistics: statistics,
            recorder: recorder,
            tickets: nil,
            seed: 1,
            ended: { _, _ in }
        )
        // The sink's figures: requests, accepted, and the digest of the accepted (none kept by
        // the FCM sink).
        let sink: (requests: Int, accepted: Int, digest: NotificationDigest?)
        let roundTrips: Int
        if let service = fcmService {
            roundTrips = try exchange(
                HTTP2InMemoryPair(
                    client: client,
                    configuration.shape.http2,
                    server: FCMHTTP2Connection(service: service),
                    FCMHTTP2Connection.configuration(fcmSinkConfiguration)
                )
            )
            sink = (service.statistics.requests(over: .http2), service.statistics[.delivered], nil)
        } else {
            var sinkConfiguration = SinkConfiguration()
            if instrument { sinkConfiguration.instrument = ProviderInstrument() }
            if devices { sinkConfiguration.scenario.devices = Self.fleet }
            if engagement {
                sinkConfiguration.scenario.devices.engagement = Self.engagement
            }
            let sinkStatistics = SinkStatistics()
            roundTrips = try exchange(
                HTTP2InMemoryPair(
                    client: client,
                    configuration.shape.http2,
                    server: SinkConnection(
                        configuration: sinkConfiguration,
                        statistics: sinkStatistics,
                        state: SinkState(scenario: sinkConfiguration.scenario),
                        seed: 1,
                        recorder: SinkLoopRecorder(instrument: sinkConfiguration.instrument)
                    ),
                    Sink.http2Configuration(sinkConfiguration)
                )
            )
            let summary = sinkStatistics.summary
            sink = (summary.requests, summary.accepted, summary.digest)
        }
        recorder.finish()
        collector.drain()
        let sent = statistics.snapshot
        return Result(
            tokens: read.tokens,
            sent: sent.requests,
            accepted: sent.accepted,
            sinkRequests: sink.requests,
            sinkAccepted: sink.accepted,
            digestsAgree: sink.digest.map { $0 == sent.digest },
            latencies: collector.latency.totalCount,
            roundTrips: roundTrips
        )
    }

    /// Runs `pair` until every notification is answered and the sender has said GOAWAY; its
    /// round trips.
    private func exchange<Server: HTTP2ConnectionDelegate>(
        _ pair: consuming HTTP2InMemoryPair<LoadConnection, Server>
    ) throws -> Int {
        // Every round trip answers at least one request; the handshake and the GOAWAY take a few.
        let maxTurns = count + 16
        guard let roundTrips = pair.run(maxTurns: maxTurns) else {
            throw JobError.resource(.part("the cost workload"), "it did not finish within \(maxTurns) round trips")
        }
        return roundTrips
    }

    /// The token set read whole before the first request, so the reader's work is not counted:
    /// the stream, and what the reader saw.
    private func readTokens() throws -> (TokenStream, TokenStreamSummary) {
        // Batches as a run reads them (`RunBatching`), and enough of them for every token when
        // a batch holds 256 or more (text lines of up to 256 bytes, generated tokens of up to
        // 85 bytes: 3 bytes a token byte), so the reader finishes before the first request.
        var reader = RunBatching.configuration(TokenReaderConfiguration(), connections: 1)
        reader.batchCount = count / 256 + 2
        let stream = try TokenStream(tokens, configuration: reader)
        guard let read = stream.waitForSummary(timeout: Self.readingTimeout) else {
            stream.cancel()
            throw JobError.resource(
                .part("the cost workload's reader"),
                "it did not finish within \(Self.readingTimeout): "
                    + "\(tokens.name) holds more than the \(count) tokens it was given?"
            )
        }
        if let error = read.error { throw error }
        guard read.tokens == count else {
            throw JobError.input(
                .file(tokens.name),
                "it holds \(read.tokens) tokens, not the \(count) the cost workload was given"
            )
        }
        return (stream, read)
    }

    /// The one interval's length: a day.
    static let interval: UInt64 = 86_400 * 1_000_000_000

    /// How long the reader may take: 25,000 tokens take a second under valgrind; it waits out
    /// the whole bound only when the set holds more tokens than `count` (it then waits for a
    /// batch nobody will give back).
    static let readingTimeout: Duration = .seconds(30)
}
