import Atomics
import FanoutChannels
import FanoutDevices
import FanoutFiles
import FanoutHTTP2
import FanoutListening
import FanoutNotation
import FanoutWire
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// State every connection of one sink shares.
package final class SinkState: Sendable {
    private let draining = ManagedAtomic(false)
    private let seeds = ManagedAtomic<UInt64>(0x5EED)
    /// When the sink started, in `NIODeadline` uptime nanoseconds (stall windows count from it).
    let startedAt = NIODeadline.now().uptimeNanoseconds
    /// The scenario's per-token limit, shared by every connection.
    let tokenLimiter: TokenRateLimiter?
    /// Refusals and limits reached, logged with the peer.
    let limits: LimitLog
    /// The devices behind the sink, when the scenario has them (`nil`: the story ends at the 200).
    package let fleet: DeviceFleetShards?
    /// The broadcast channels and what their broadcasts reached (docs/sink.md, "Broadcast channels").
    package let channels: ChannelStore

    package init(scenario: SinkScenario = .init(), limitLog: (@Sendable (String) -> Void)? = nil) {
        limits = LimitLog(write: limitLog)
        let startedAt = startedAt
        tokenLimiter = scenario.tokenRate.map { rate in
            TokenRateLimiter(limit: rate.limit, window: rate.window.wholeNanoseconds, startedAt: startedAt)
        }
        // The fleet draws from the scenario's seed (each draw mixes in a constant of its own).
        var devices = scenario.devices
        devices.seed = scenario.seed
        fleet = devices.isEnabled ? DeviceFleetShards(settings: devices) : nil
        channels = ChannelStore(
            subscribers: scenario.channelSubscribers,
            shares: DeliveryShares(devices.isEnabled ? devices : nil),
            delay: devices.isEnabled ? devices.delay : nil,
            returnAfter: devices.isEnabled ? devices.returnAfter : nil,
            seed: scenario.seed
        )
    }

    var isDraining: Bool { draining.load(ordering: .relaxed) }
    /// Starts draining; `false` when it had started already.
    func startDraining() -> Bool { !draining.exchange(true, ordering: .relaxed) }
    func nextSeed() -> UInt64 { seeds.wrappingIncrementThenLoad(by: 0x9E37_79B9_7F4A_7C15, ordering: .relaxed) }
}

/// A running mock APNs: listens, answers, counts; `drain` ends it gracefully.
public final class Sink: Sendable {
    /// The event loops serving connections when not told otherwise.
    public static let defaultEventLoops = 1

    public let statistics = SinkStatistics()
    public let configuration: SinkConfiguration
    private let state: SinkState
    private let channel: any Channel
    /// The connections served, and the counts that admit new ones.
    private let connections: Connections
    private let timing: SinkTiming
    /// Delivers and expires the fleet's stored notifications as real time passes (`fleetTick`).
    private let fleetTimer: RepeatedTask?

    /// How often the fleet's stored notifications are looked at: 10 ms, so a delivery from
    /// storage is counted at most that late (its recorded time is the exact one).
    static let fleetTick = TimeAmount.milliseconds(10)

    /// The devices behind the sink, when it has them.
    package var fleet: DeviceFleetShards? { state.fleet }

    /// Where the sink listens.
    public var localAddress: SocketAddress { channel.localAddress! }

    /// Connections served at once: `scenario.faults.maxConnections`, or by default what the
    /// open-file limit allows (`ConnectionFaults.defaultMaxConnections`).
    public let maxConnections: Int
    /// Connections one address may hold at once (`SinkConfiguration.peerLimits(defaultTotal:)`).
    public let maxConnectionsPerPeer: Int

    /// The broadcast channels' counts, once a channel was asked for (`nil` before: `/stats`
    /// and summaries stay as they were for runs without broadcasts).
    public var broadcastCounts: BroadcastCounts? {
        let counts = state.channels.counts
        return counts.created + counts.refusedCreations == 0 ? nil : counts
    }

    /// What the broadcasts reached, one by one, once a channel was asked for (`nil` before).
    public var broadcastRecords: BroadcastRecords? {
        broadcastCounts == nil ? nil : state.channels.records()
    }

    /// Refusals and limits reached, logged with the peer (`SinkConfiguration.limitLog`).
    package var limits: LimitLog { state.limits }

    /// Whether `drain` has begun.
    public var isDraining: Bool { state.isDraining }

    /// Starts listening on `host:port` (0 picks a free port) with h2c or TLS.
    public init(
        host: String,
        port: Int,
        group: any EventLoopGroup,
        transport: HTTP2Transport = .cleartext,
        configuration: SinkConfiguration = .init()
    ) throws {
        self.configuration = configuration
        let statistics = statistics
        let state = SinkState(scenario: configuration.scenario, limitLog: configuration.limitLog)
        self.state = state
        let defaultTotal = ConnectionFaults.defaultMaxConnections(
            .current(),
            eventLoops: Array(group.makeIterator()).count
        )
        let maxConnections = configuration.scenario.faults.maxConnections ?? defaultTotal
        self.maxConnections = maxConnections
        let peerLimits = configuration.peerLimits(defaultTotal: defaultTotal)
        maxConnectionsPerPeer = peerLimits.perPeer
        let connections = NIOLockedValueBox(
            (
                open: [ObjectIdentifier: any Channel](),
                admission: ConnectionAdmission<ObjectIdentifier>(
                    total: maxConnections,
                    perPeer: peerLimits.perPeer,
                    idlePerPeer: peerLimits.idlePerPeer,
                    grace: configuration.idleGrace
                )
            )
        )
        self.connections = connections
        fleetTimer = state.fleet.map { fleet in
            group.next().scheduleRepeatedTask(initialDelay: Self.fleetTick, delay: Self.fleetTick) { _ in
                fleet.advance(now: NIODeadline.now().uptimeNanoseconds)
            }
        }
        let timing = try SinkTiming(group: group, statistics: statistics, instrument: configuration.instrument)
        self.timing = timing
        let http2 = Self.http2Configuration(configuration)
        channel = try HTTP2Channels.listen(
            host: host,
            port: port,
            group: group,
            transport: transport,
            configuration: http2,
            makeDelegate: { channel in
                let key = ObjectIdentifier(channel)
                return SinkConnection(
                    configuration: configuration,
                    statistics: statistics,
                    state: state,
                    seed: state.nextSeed(),
                    peer: channel.remoteAddress.map(Self.describe) ?? "unknown",
                    recorder: timing.recorder(on: channel.eventLoop) ?? SinkLoopRecorder(),
                    firstRequest: {
                        connections.withLockedValue { $0.admission.requestArrived(key) }
                    }
                )
            },
            admit: Self.admission(
                connections,
                clock: configuration.clock,
                limits: state.limits,
                statistics: statistics
            ),
            beforeTransport: Self.wire(configuration.scenario.wire, state: state),
            acceptEvents: Self.acceptEvents(host: host, limits: state.limits, statistics: statistics)
        ).wait()
    }

    /// The open connections and who may open the next.
    typealias Connections = NIOLockedValueBox<
        (open: [ObjectIdentifier: any Channel], admission: ConnectionAdmission<ObjectIdentifier>)
    >

    /// Admits a connection (`nil`) or says why not (`ConnectionAdmission`'s limits, logged with
    /// the peer and counted); an admitted one is counted until it closes, and one evicted for
    /// it is sent GOAWAY and closed.
    private static func admission(
        _ connections: Connections,
        clock: SinkClock,
        limits: LimitLog,
        statistics: SinkStatistics
    ) -> @Sendable (any Channel) -> String? {
        { child in
            let key = ObjectIdentifier(child)
            let peer = child.remoteAddress?.ipAddress ?? "unknown"
            let address = child.remoteAddress.map(Self.describe) ?? peer
            let now = clock.uptime()
            let (refusal, evicted): (String?, (channel: any Channel, reason: String)?) = connections.withLockedValue {
                connections in
                switch connections.admission.admit(key, peer: peer, now: now) {
                case .refused(let limit):
                    return (connections.admission.reason(limit, peer: peer), nil)
                case .admitted(let eviction):
                    connections.open[key] = child
                    guard let eviction, let victim = connections.open[eviction.id] else { return (nil, nil) }
                    return (nil, (victim, connections.admission.reason(eviction, newcomer: address)))
                }
            }
            if let refusal {
                statistics.connectionRefused()
                let detail = refusal.dropFirst(ConnectionAdmission<ObjectIdentifier>.prefix.count)
                limits.note(.refused, peer: address, String(detail))
                return refusal
            }
            if let evicted {
                statistics.connectionEvicted()
                let victim = evicted.channel.remoteAddress.map(Self.describe) ?? "unknown"
                limits.note(.evicted, peer: victim, evicted.reason)
                Self.evict(evicted.channel)
            }
            child.closeFuture.whenComplete { _ in
                connections.withLockedValue { connections in
                    connections.open.removeValue(forKey: key)
                    connections.admission.closed(key)
                }
            }
            return nil
        }
    }

    /// Counts each failed accept and logs a burst's first failure and its end, with the host
    /// listened on.
    private static func acceptEvents(
        host: String,
        limits: LimitLog,
        statistics: SinkStatistics
    ) -> @Sendable (AcceptBackoff.Event) -> Void {
        { event in
            if case .failed = event { statistics.acceptFailed() }
            if let (kind, detail) = event.logged { limits.note(kind, peer: host, detail) }
        }
    }

    /// Sends an evicted connection GOAWAY (APNs' IdleTimeout: it had sent no authenticated request) and
    /// closes it, on its loop.
    private static func evict(_ channel: any Channel) {
        channel.eventLoop.execute {
            guard
                let handler = try? channel.pipeline.syncOperations.handler(
                    type: HTTP2ConnectionHandler<SinkConnection>.self
                )
            else {
                channel.close(promise: nil)
                return
            }
            handler.withConnection { connection, delegate in delegate.evict(&connection) }
        }
    }

    /// With a wire: what puts a `WireHandler` (sharing the sink's bandwidth, when it has one)
    /// in front of each connection.
    private static func wire(_ wire: SinkWire?, state: SinkState) -> (@Sendable (any Channel) throws -> Void)? {
        wire?.installer { state.nextSeed() }
    }

    /// The HTTP/2 settings of every connection the sink serves.
    public static func http2Configuration(_ configuration: SinkConfiguration) -> HTTP2Connection.Configuration {
        var http2 = HTTP2Connection.Configuration()
        // The first SETTINGS already says what APNs says before a connection's first push; streams
        // a client opened before it could see that are still served.
        http2.maxConcurrentStreams = configuration.initialMaxConcurrentStreams
        http2.maxConcurrentStreamsBeforeAcknowledgement = configuration.maxConcurrentStreams
        // APNs' settings: 8000-byte header lists; bodies past the largest limit are only counted.
        http2.maxHeaderListSize = 8000
        http2.maxBodySize = 5120 + 1
        http2.incompleteFrameTimeout = configuration.incompleteFrameTimeout
        http2.connectionWindowSize = configuration.scenario.windows.connection
        http2.initialWindowSize = configuration.scenario.windows.stream
        http2.windowRefill = configuration.scenario.windows.refill
        return http2
    }

    /// `host:port`, with IPv6 hosts in brackets.
    public static func describe(_ address: SocketAddress) -> String { address.hostAndPort }

    /// Stops accepting connections, answers new requests 503 Shutdown and sends every
    /// connection GOAWAY; closes what is still open after `grace`; returns the counts then.
    ///
    /// The counts are whole only here: a connection keeps its own and adds them to
    /// `statistics` now and then (`SinkConnection.flushCounts`), and last as it closes, so a
    /// reconciliation reads the summary this returns, not `statistics` before it.
    ///
    /// Only the first call drains; a later one returns the counts at once (a job drains before
    /// it reads the counts, and again, as a `defer`, on every way out), even while the first is
    /// still draining: callers that read the counts call it one after another, never at once.
    @discardableResult
    public func drain(grace: TimeAmount = .seconds(5)) -> SinkSummary {
        guard state.startDraining() else { return statistics.summary }
        try? channel.close().wait()
        let open = connections.withLockedValue { Array($0.open.values) }
        for child in open {
            child.eventLoop.execute {
                guard
                    let handler = try? child.pipeline.syncOperations.handler(
                        type: HTTP2ConnectionHandler<SinkConnection>.self
                    )
                else { return }
                handler.withConnection { connection, delegate in delegate.shutdown(&connection) }
            }
        }
        let deadline = NIODeadline.now() + grace
        for child in open {
            let remaining = deadline - .now()
            let closed = child.eventLoop.makePromise(of: Void.self)
            child.closeFuture.cascade(to: closed)
            let timeout = child.eventLoop.scheduleTask(in: max(remaining, .zero)) { child.close(promise: nil) }
            try? closed.futureResult.wait()
            timeout.cancel()
        }
        state.limits.flush()
        fleetTimer?.cancel()
        state.fleet?.advance(now: NIODeadline.now().uptimeNanoseconds)
        timing.handOver()
        timing.stop()
        configuration.capture?.close()
        return statistics.summary
    }
}
