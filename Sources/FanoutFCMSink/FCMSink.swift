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
    private let open = NIOLockedValueBox(OpenConnections())
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
        let choice = FCMProtocolChoice(
            service: service,
            draining: { draining.load(ordering: .relaxed) },
            seed: { seeds.wrappingIncrementThenLoad(by: 0x9E37_79B9_7F4A_7C15, ordering: .relaxed) }
        )
        let open = open
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
                let configuration = service.configuration
                let refusal = open.withLockedValue {
                    $0.admit(
                        key,
                        child,
                        from: address,
                        most: configuration.maxConnections,
                        mostPerPeer: configuration.maxConnectionsPerPeer
                    )
                }
                if let refusal {
                    let peer = child.remoteAddress.map { "\($0.ipAddress ?? "?"):\($0.port ?? 0)" } ?? "unknown"
                    service.limitReached(.refused, peer: peer, refusal)
                    child.close(promise: nil)
                    return child.eventLoop.makeSucceededVoidFuture()
                }
                child.closeFuture.whenComplete { _ in open.withLockedValue { $0.remove(key, from: address) } }
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

/// The connections an FCM sink holds, by channel and by peer address, admitted against the
/// limits (`FCMSinkConfiguration.maxConnections`, `maxConnectionsPerPeer`) as each is accepted.
struct OpenConnections {
    var channels: [ObjectIdentifier: any Channel] = [:]
    var perPeer: [String: Int] = [:]

    /// Holds `channel` from `address` unless a limit is reached; then says which, for the log.
    mutating func admit(
        _ key: ObjectIdentifier,
        _ channel: any Channel,
        from address: String,
        most: Int?,
        mostPerPeer: Int?
    ) -> String? {
        if let most, channels.count >= most {
            return "closed at once: \(channels.count) connections open, the most --max-connections allows"
        }
        let fromPeer = perPeer[address, default: 0]
        if let mostPerPeer, fromPeer >= mostPerPeer {
            return
                "closed at once: \(fromPeer) connections open from \(address), the most --max-connections-per-peer allows"
        }
        channels[key] = channel
        perPeer[address] = fromPeer + 1
        return nil
    }

    /// A held connection closed.
    mutating func remove(_ key: ObjectIdentifier, from address: String) {
        guard channels.removeValue(forKey: key) != nil else { return }
        let left = perPeer[address, default: 1] - 1
        perPeer[address] = left > 0 ? left : nil
    }
}
