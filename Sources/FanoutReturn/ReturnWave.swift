import Atomics
import FanoutDevices
import FanoutNotation
import FanoutResults
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import NIOSSL

/// How the wave is sent, beside what the devices do (`EngagementSettings`).
public struct ReturnWaveSettings: Sendable, Hashable {
    /// Connections to the backend at most (`--return-pool`): see `ReturnPool` for what it means.
    public var poolSize = 64
    /// A request unanswered this long is failed (`timeout`) and its connection closed.
    public var requestTimeout: Duration = .seconds(30)
    /// `{campaign}` in the requests.
    public var campaign = "fanout"
    /// Each kind's request, where not the default (`ReturnRequestTemplate.defaultTemplate`).
    public var templates: [ReturnRequestKind: ReturnRequestTemplate] = [:]
    /// PEM certificates an `https://` backend's chain may end in, besides the system's.
    public var trustedCertificatesFile: String?
    /// HTTP/1.1 keep-alive, a request at a time a connection, or HTTP/2 (`--return-http`).
    public var httpVersion = ReturnHTTPVersion.http1
    /// HTTP/2: the requests a connection carries at once at most (`--return-streams`), fewer
    /// when the backend's MAX_CONCURRENT_STREAMS says so.
    public var streamsPerConnection = 100
    /// At a job's end, how long it waits for the wave at most (`--return-wait`; `nil`: until
    /// the last event is due and answered). What is not due by then is counted not sent.
    public var waitLimit: Duration?

    public static let largestPoolSize = 10_000
    /// A client may open at most 2³¹ − 1 streams on a connection; this many at once is beyond
    /// any server's limit.
    public static let largestStreams = 10_000

    public init() {}

    /// The problems with the settings, each naming its option.
    public func validate() throws(ReturnSettingsError) {
        guard (1...Self.largestPoolSize).contains(poolSize) else {
            throw ReturnSettingsError(
                "--return-pool must be from 1 to \(Self.largestPoolSize) connections, not \(poolSize)"
            )
        }
        guard requestTimeout > .zero else { throw ReturnSettingsError("--return-timeout must be above 0") }
        if let waitLimit, waitLimit < .zero { throw ReturnSettingsError("--return-wait must be 0 or more") }
        guard (1...Self.largestStreams).contains(streamsPerConnection) else {
            throw ReturnSettingsError(
                "--return-streams must be from 1 to \(Self.largestStreams) streams a connection, not \(streamsPerConnection)"
            )
        }
        guard !campaign.isEmpty, !campaign.contains(where: { $0.isNewline }) else {
            throw ReturnSettingsError("--return-campaign must be a name on one line")
        }
    }
}

/// How the wave speaks to the backend (`--return-http`).
public enum ReturnHTTPVersion: String, Sendable, Hashable, CaseIterable {
    /// HTTP/1.1 keep-alive, one request at a time a connection (`ReturnPool`).
    case http1 = "1.1"
    /// HTTP/2, many streams a connection: h2c with prior knowledge, or ALPN `h2` over TLS
    /// (`ReturnHTTP2Pool`).
    case http2 = "2"
}

/// The return engine (issue #63): sends the fleet's return events to the backend at their due
/// times on its own event loop, open model — a slow backend makes requests wait and fail, never
/// the events later — and measures each second (`ReturnWaveSummary`).
///
/// ```
///   DeviceFleetShards ──every 1 ms: events due──► ReturnRequestMaker ──► ReturnPool ──► backend
///        (held per shard until due)                 (templates, fields)     │ answers, failures
///                                                                           ▼
///                                                                  ReturnTally ─► ReturnWaveSummary
/// ```
public final class ReturnWave: @unchecked Sendable {
    private let group: MultiThreadedEventLoopGroup
    private let loop: any EventLoop
    /// The fleets whose devices send the wave: one sink's, or a campaign's two (`run --fleet`),
    /// all engaging as the first's settings say.
    private let fleets: [DeviceFleetShards]
    private let maker: ReturnRequestMaker
    private let pool: any ReturnTransport
    private let tally: ReturnTally
    private let settings: ReturnWaveSettings
    private var timer: RepeatedTask?
    /// The events one tick took, copied out of the shards (reused from tick to tick).
    private var taken = TakenEvents()
    /// Set by `interrupt()`: `settle` returns at its next look.
    private let interrupted = ManagedAtomic(false)
    /// Set by `finish()`: the loop is gone, and `stop()` has nothing to do.
    private let finished = ManagedAtomic(false)
    /// The figures so far, published by the loop as each second closes (`live`).
    private let published = NIOLockedValueBox(ReturnWaveLive())
    /// The tally's open second when the figures were last published.
    private var publishedSecond = 0

    /// How often due events are taken: a request goes out at most this late.
    static let tick = TimeAmount.milliseconds(1)
    /// Events taken from a shard a tick at most, so one tick never holds the loop long.
    static let perTick = 1024

    /// Whether a wave of `engagement` sent as `settings` says could start: the settings, the
    /// templates (the category file's requests among them, named at their lines). A job checks
    /// before it listens, so that a mistake is said before any traffic.
    public static func check(
        _ engagement: EngagementSettings,
        _ settings: ReturnWaveSettings
    ) throws(ReturnSettingsError) {
        guard engagement.isEnabled else { return }
        try settings.validate()
        _ = try ReturnRequestMaker(settings: engagement, templates: settings.templates, campaign: settings.campaign)
    }

    /// A wave from `fleets`' return events (one sink's, or a campaign's halves', engaging alike:
    /// the first one's settings are the wave's); `say` gets what the user must hear at once (the
    /// backend unreachable).
    package init(
        fleets: [DeviceFleetShards],
        settings: ReturnWaveSettings,
        say: @escaping @Sendable (String) -> Void
    ) throws {
        guard let first = fleets.first else { throw ReturnSettingsError("the return wave needs a device fleet") }
        let engagement = first.settings.engagement
        guard fleets.allSatisfy({ $0.settings.engagement == engagement }) else {
            throw ReturnSettingsError("the return wave's fleets engage differently: one wave needs one engagement")
        }
        guard let target = engagement.returnTo else {
            throw ReturnSettingsError("the return wave needs --return-to URL")
        }
        try settings.validate()
        maker = try ReturnRequestMaker(settings: engagement, templates: settings.templates, campaign: settings.campaign)
        var tls: NIOSSLContext?
        if target.isTLS {
            var configuration = TLSConfiguration.makeClientConfiguration()
            if let file = settings.trustedCertificatesFile {
                configuration.additionalTrustRoots = [.file(file)]
            }
            // HTTP/2 over TLS is chosen by ALPN (RFC 9113 §3.2); HTTP/1.1 offers its own name.
            configuration.applicationProtocols = settings.httpVersion == .http2 ? ["h2"] : ["http/1.1"]
            tls = try NIOSSLContext(configuration: configuration)
        }
        self.fleets = fleets
        self.settings = settings
        group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        loop = group.next()
        let tally = ReturnTally(
            backend: target.description,
            poolSize: settings.poolSize,
            http: settings.httpVersion,
            streamsPerConnection: settings.streamsPerConnection,
            mediaBudget: engagement.mediaBudget,
            say: say
        )
        self.tally = tally
        pool = settings.httpVersion.pool(
            loop: loop,
            target: target,
            size: settings.poolSize,
            streams: settings.streamsPerConnection,
            requestTimeout: .nanoseconds(Int64(settings.requestTimeout.wholeNanoseconds)),
            tls: tls,
            outcomes: tally
        )
    }

    /// A wave from one fleet's return events (a sink's).
    package convenience init(
        fleet: DeviceFleetShards,
        settings: ReturnWaveSettings,
        say: @escaping @Sendable (String) -> Void
    ) throws {
        try self.init(fleets: [fleet], settings: settings, say: say)
    }

    /// The loop ends with the wave: `finish` ends it at once, `stop` (a job that failed) without
    /// its figures; a wave never finished ends it when the last reference goes (the timer holds
    /// the wave weakly), which may be on the loop itself: so without waiting.
    deinit {
        group.shutdownGracefully { _ in }
    }

    /// Stops without the figures, on a job's failure: no more events taken, connections closed.
    /// Safe after `finish` and twice.
    public func stop() {
        guard !finished.load(ordering: .relaxed) else { return }
        loop.execute { [self] in
            timer?.cancel()
            timer = nil
            pool.close()
        }
    }

    /// Starts taking due events.
    public func start() {
        loop.execute { [self] in
            timer = loop.scheduleRepeatedTask(initialDelay: Self.tick, delay: Self.tick) { [weak self] _ in self?.take()
            }
        }
    }

    /// Sends what fell due. The requests are made under each shard's lock and sent after it.
    private func take() {
        let now = NIODeadline.now().uptimeNanoseconds
        // The wave's seconds count from the first fan-out to start.
        if let start = fleets.lazy.compactMap(\.fanOutStarted).min() { tally.start(at: start) }
        // Under each shard's lock the events are only copied (the sink's loops wait on it);
        // their requests are made after.
        taken.removeAll(keepingCapacity: true)
        for fleet in fleets {
            _ = fleet.takeReturns(now: now, limit: Self.perTick) { taken.append($0) }
        }
        taken.visit { event in
            maker.requests(event) { request in
                tally.offered(request)
                pool.send(request)
            }
        }
        pool.expireWaiting(now: now)
        tally.close(upTo: now)
        // Once a second: a second closes at its first answer, failure or tick past it.
        if tally.openSecond != publishedSecond {
            publishedSecond = tally.openSecond
            publish()
        }
    }

    private func publish() {
        let live = tally.live(inFlight: pool.inFlight)
        published.withLockedValue { $0 = live }
    }

    /// The wave's figures as of the last second closed (a second behind at most; the final
    /// ones once finished), from any thread: what `/metrics` shows (`ReturnWaveMetrics`).
    public var live: ReturnWaveLive { published.withLockedValue { $0 } }

    /// Events held in the fleets, not yet taken.
    private var eventsWaiting: Int { fleets.reduce(0) { $0 + $1.returnsWaiting().count } }

    /// Events not yet due, requests not yet answered.
    public func outstanding() throws -> (events: Int, requests: Int) {
        let events = eventsWaiting
        let requests = try loop.submit { [self] in pool.inFlight }.wait()
        return (events, requests)
    }

    /// How long the wave can still take: until the latest event held is due, and then a
    /// request's timeout (zero when nothing is held).
    public var remaining: Duration {
        let latest = fleets.map { $0.returnsWaiting().latest }.max() ?? 0
        let now = NIODeadline.now().uptimeNanoseconds
        return .nanoseconds(Int64(latest > now ? latest - now : 0)) + settings.requestTimeout + .seconds(1)
    }

    /// Waits until every event was sent and answered (or failed), `limit` passes, or
    /// `interrupt()`; looks every 20 ms on the wave's loop. Returns whether it settled.
    public func settle(within limit: Duration) throws -> Bool {
        let deadline = NIODeadline.now() + .nanoseconds(Int64(limit.wholeNanoseconds))
        while true {
            let (events, requests) = try outstanding()
            if events == 0 && requests == 0 { return true }
            guard NIODeadline.now() < deadline, !interrupted.load(ordering: .relaxed) else { return false }
            try loop.scheduleTask(in: .milliseconds(20)) {}.futureResult.wait()
        }
    }

    /// Ends a `settle` early (a stop signal): what is not sent by `finish` counts as not sent.
    public func interrupt() {
        interrupted.store(true, ordering: .relaxed)
    }

    /// Stops: no more events are taken, the connections close (what is in flight fails
    /// `closed`), the figures are read and the loop ends. Called once, off the loop.
    public func finish() throws -> ReturnWaveSummary {
        let figures = try loop.submit { [self] in
            timer?.cancel()
            timer = nil
            pool.close()
            // Counted once the timer is cancelled: no tick takes an event after this.
            let figures = tally.finish(notSent: eventsWaiting)
            publish()
            return figures
        }.wait()
        finished.store(true, ordering: .relaxed)
        try group.syncShutdownGracefully()
        var summary = figures
        let first = fleets[0]
        let snapshots = fleets.map { $0.snapshot() }
        let engaged = snapshots.dropFirst().reduce(snapshots[0].engaged) { $0 + $1.engaged }
        summary.devices.opens = engaged.opens
        summary.devices.defaultOpens = engaged.defaultOpens
        summary.devices.backgroundActions = engaged.backgroundActions
        summary.devices.mediaDownloads = engaged.mediaFetches
        summary.devices.fromStorage = engaged.fromStorage
        let cut = snapshots.reduce(0) { $0 + $1.returnTokensCut }
        summary.devices.tokensCut = cut > 0 ? cut : nil
        for (index, action) in first.settings.engagement.actions.enumerated() where index < engaged.actions.count {
            summary.devices.actions[action.name] = engaged.actions[index]
            summary.devices.notCarried[action.name] = engaged.notCarried[index]
        }
        return summary
    }
}
