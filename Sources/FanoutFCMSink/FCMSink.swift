import Atomics
import FanoutHTTP2
import FanoutListening
import FanoutWire
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import NIOSSL

/// A running mock FCM HTTP v1 (docs/fcm.md): one port serving HTTP/2 and HTTP/1.1, in
/// cleartext or over TLS, with the send method and the OAuth2 token endpoint; `drain` ends it.
public final class FCMSink: Sendable {
    public let service: FCMService
    private let channel: any Channel
    private let open: NIOLockedValueBox<OpenConnections>
    private let draining = ManagedAtomic(false)
    /// Delivers and expires what the device fleet keeps as time passes (every `fleetTick`),
    /// with a fleet.
    private let fleetTimer: RepeatedTask?

    /// Where the sink listens.
    public var localAddress: SocketAddress { channel.localAddress! }

    /// Starts listening on `host:port` (0 picks a free port); `tls` secures it, offering ALPN
    /// `h2` and `http/1.1` (`tlsContext`). A `wire` is a path of its round trip and bandwidth
    /// in front of every connection, below TLS: the handshake, SETTINGS and every answer cross
    /// it, as they would cross the way to Google's front end.
    public init(
        host: String,
        port: Int,
        group: any EventLoopGroup,
        tls: NIOSSLContext? = nil,
        wire: SinkWire? = nil,
        service: FCMService
    ) throws {
        self.service = service
        let draining = draining
        let seeds = ManagedAtomic<UInt64>(service.configuration.seed)
        let open = NIOLockedValueBox(OpenConnections(service.configuration))
        self.open = open
        let choice = FCMProtocolChoice(
            service: service,
            draining: { draining.load(ordering: .relaxed) },
            seed: { seeds.wrappingIncrementThenLoad(by: 0x9E37_79B9_7F4A_7C15, ordering: .relaxed) },
            proved: { key in open.withLockedValue { $0.admission.requestArrived(key) } }
        )
        let installWire = wire?.installer {
            seeds.wrappingIncrementThenLoad(by: 0x9E37_79B9_7F4A_7C15, ordering: .relaxed)
        }
        channel = try ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 1024)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .serverChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(AcceptPauseHandler(report: nil))
                }
            }
            .childChannelOption(.tcpOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { child in
                let key = ObjectIdentifier(child)
                let address = child.remoteAddress?.ipAddress ?? "unknown"
                let peer = child.remoteAddress?.hostAndPort ?? "unknown"
                let configuration = service.configuration
                let now = NIODeadline.now().uptimeNanoseconds
                // Decided under the lock; the log's words are made after it, and only for the
                // lines the log keeps (a flood of refusals is a count each).
                switch open.withLockedValue({ $0.admit(key, child, from: address, now: now) }) {
                case .refused(let limit):
                    service.limitReached(
                        .refused,
                        peer: peer,
                        "closed at once: \(open.withLockedValue { $0.words(limit, peer: address) })"
                    )
                    child.close(promise: nil)
                    return child.eventLoop.makeSucceededVoidFuture()
                case .admitted(nil):
                    break
                case .admitted(let (victim, eviction)?):
                    // Closed, not sent GOAWAY: it never proved itself (what it has in flight is
                    // a request without a good bearer, or one still arriving).
                    service.limitReached(
                        .evicted,
                        peer: victim.remoteAddress?.hostAndPort ?? "unknown",
                        open.withLockedValue { $0.admission.reason(eviction, newcomer: peer) }
                    )
                    victim.close(promise: nil)
                }
                child.closeFuture.whenComplete { _ in open.withLockedValue { $0.closed(key) } }
                return child.eventLoop.makeCompletedFuture {
                    let operations = child.pipeline.syncOperations
                    try installWire?(child)
                    if let idle = configuration.idleTimeout {
                        try operations.addHandler(FCMChoiceDeadline(timeout: idle, service: service))
                    }
                    if let tls {
                        try operations.addHandler(NIOSSLServerHandler(context: tls))
                        try operations.addHandler(choice.negotiation())
                    } else {
                        try operations.addHandler(FCMFirstBytes(choice: choice))
                    }
                }
            }
            .bind(host: host, port: port)
            .wait()
        // Once listening: a sink that could not bind leaves no timer behind.
        fleetTimer = service.fleet.map { fleet in
            group.next().scheduleRepeatedTask(initialDelay: Self.fleetTick, delay: Self.fleetTick) { _ in
                fleet.advance(now: NIODeadline.now().uptimeNanoseconds)
            }
        }
    }

    /// A server TLS context from a PEM chain and key, offering ALPN `h2` then `http/1.1`, TLS
    /// 1.2 or later.
    public static func tlsContext(certificateFile: String, keyFile: String) throws -> NIOSSLContext {
        let chain = try NIOSSLCertificate.fromPEMFile(certificateFile).map { NIOSSLCertificateSource.certificate($0) }
        var configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: chain,
            privateKey: .privateKey(try NIOSSLPrivateKey(file: keyFile, format: .pem))
        )
        configuration.applicationProtocols = ["h2", "http/1.1"]
        configuration.minimumTLSVersion = .tlsv12
        return try NIOSSLContext(configuration: configuration)
    }

    public var isDraining: Bool { draining.load(ordering: .relaxed) }

    /// Connections open now, over either protocol.
    public var openConnections: Int { open.withLockedValue { $0.channels.count } }

    /// How often the fleet's kept messages are looked at: 10 ms, as the APNs sink's.
    static let fleetTick = TimeAmount.milliseconds(10)

    /// Stops accepting, sends every HTTP/2 connection GOAWAY (open streams finish) and answers
    /// HTTP/1.1 requests with `connection: close`; closes what is still open after `grace`.
    /// Only the first call drains.
    public func drain(grace: TimeAmount = .seconds(5)) {
        guard !draining.exchange(true, ordering: .relaxed) else { return }
        try? channel.close().wait()
        let children = open.withLockedValue { Array($0.channels.values) }
        for child in children {
            child.eventLoop.execute {
                if let handler = try? child.pipeline.syncOperations.handler(
                    type: HTTP2ConnectionHandler<FCMHTTP2Connection>.self
                ) {
                    handler.withConnection { connection, _ in connection.goAway() }
                } else {
                    // HTTP/1.1 (NIO's pipelining handler): closed at once between requests, after
                    // the answer (`connection: close`) in one.
                    child.pipeline.fireUserInboundEventTriggered(ChannelShouldQuiesceEvent())
                }
            }
        }
        let deadline = NIODeadline.now() + grace
        for child in children {
            let closed = child.eventLoop.makePromise(of: Void.self)
            child.closeFuture.cascade(to: closed)
            let timeout = child.eventLoop.scheduleTask(in: max(deadline - .now(), .zero)) { child.close(promise: nil) }
            try? closed.futureResult.wait()
            timeout.cancel()
        }
        fleetTimer?.cancel()
        service.fleet?.advance(now: NIODeadline.now().uptimeNanoseconds)
    }
}

/// The connections an FCM sink holds, by channel, and who may open the next: the APNs sink's
/// admission (`ConnectionAdmission`: the total, per address, and per address of those that
/// have not proved who they are once half the total is open) over the limits of
/// `FCMSinkConfiguration` (`nil`: none). A connection past a limit is closed as it is accepted.
/// A connection proves itself with a send whose bearer is good or a token granted
/// (`FCMExchange`); one that has not, past `idleGrace`, is closed for a newcomer from its own
/// address at that address's limit, and at the total the oldest unproved one of anyone's, grace
/// or not.
struct OpenConnections {
    var channels: [ObjectIdentifier: any Channel] = [:]
    var admission: ConnectionAdmission<ObjectIdentifier>

    init(_ configuration: FCMSinkConfiguration) {
        admission = ConnectionAdmission(
            total: configuration.maxConnections ?? .max,
            perPeer: configuration.maxConnectionsPerPeer ?? .max,
            idlePerPeer: configuration.maxIdleConnectionsPerPeer ?? .max,
            grace: configuration.idleGrace
        )
    }

    typealias Limit = ConnectionAdmission<ObjectIdentifier>.Limit
    typealias Eviction = ConnectionAdmission<ObjectIdentifier>.Eviction

    /// What becomes of a new connection: refused at a limit, or held, with the connection
    /// evicted for it and why.
    enum Admission {
        case refused(Limit)
        case admitted((victim: any Channel, eviction: Eviction)?)
    }

    /// Decides on `channel` from `address` at `now` (uptime nanoseconds).
    mutating func admit(
        _ key: ObjectIdentifier,
        _ channel: any Channel,
        from address: String,
        now: UInt64
    )
        -> Admission
    {
        switch admission.admit(key, peer: address, now: now) {
        case .refused(let limit):
            return .refused(limit)
        case .admitted(let eviction):
            channels[key] = channel
            // An evicted connection is one admitted and not yet closed: it is held here.
            guard let eviction, let victim = channels.removeValue(forKey: eviction.id) else { return .admitted(nil) }
            return .admitted((victim, eviction))
        }
    }

    /// A refusal at `limit` in the log's words (the admission's, without the prefix a GOAWAY's
    /// debug data has).
    func words(_ limit: Limit, peer address: String) -> Substring {
        admission.reason(limit, peer: address).dropFirst(ConnectionAdmission<ObjectIdentifier>.prefix.count)
    }

    /// A held connection closed (an evicted one is no longer counted).
    mutating func closed(_ key: ObjectIdentifier) {
        guard channels.removeValue(forKey: key) != nil else { return }
        admission.closed(key)
    }
}
