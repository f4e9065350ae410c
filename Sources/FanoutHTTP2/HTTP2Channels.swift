import FanoutListening
import NIOCore
import NIOPosix
import NIOSSL
import NIOTLS

/// How a connection is carried: HTTP/2 over cleartext TCP with prior knowledge (`h2c`), or
/// over TLS with ALPN `h2`.
public enum HTTP2Transport: Sendable {
    case cleartext
    case tls(NIOSSLContext)

    /// A server's TLS: a PEM certificate chain and private key, offering ALPN `h2` only. With
    /// `clientCertificateAuthorities` (a PEM file of CA certificates) it asks clients for a
    /// certificate: one that does not chain to those CAs fails the handshake; a client may
    /// also send none (the delegate learns which in `tlsEstablished`).
    public static func tlsServer(
        certificateFile: String,
        keyFile: String,
        clientCertificateAuthorities: String? = nil
    ) throws -> HTTP2Transport {
        let chain = try NIOSSLCertificate.fromPEMFile(certificateFile).map { NIOSSLCertificateSource.certificate($0) }
        let key = try NIOSSLPrivateKey(file: keyFile, format: .pem)
        var configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: chain,
            privateKey: .privateKey(key)
        )
        configuration.applicationProtocols = ["h2"]
        requireHTTP2Security(&configuration)
        if let clientCertificateAuthorities {
            let authorities = try NIOSSLCertificate.fromPEMFile(clientCertificateAuthorities)
            configuration.trustRoots = .certificates(authorities)
            configuration.certificateVerification = .optionalVerification
        }
        return .tls(try NIOSSLContext(configuration: configuration))
    }

    /// A client's TLS, asking for ALPN `h2`: trusting the system's roots, the certificates in
    /// `trustedCertificatesFile`, or (loopback tests only) any certificate; presenting a client
    /// certificate (certificate auth) when given one with its key.
    public static func tlsClient(
        trustedCertificatesFile: String? = nil,
        insecure: Bool = false,
        certificateFile: String? = nil,
        keyFile: String? = nil
    ) throws -> HTTP2Transport {
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.applicationProtocols = ["h2"]
        requireHTTP2Security(&configuration)
        if let certificateFile, let keyFile {
            configuration.certificateChain = try NIOSSLCertificate.fromPEMFile(certificateFile).map { .certificate($0) }
            configuration.privateKey = .privateKey(try NIOSSLPrivateKey(file: keyFile, format: .pem))
        }
        if let trustedCertificatesFile { configuration.trustRoots = .file(trustedCertificatesFile) }
        if insecure { configuration.certificateVerification = .none }
        return .tls(try NIOSSLContext(configuration: configuration))
    }

    /// RFC 9113 §9.2: TLS 1.2 or later, and under TLS 1.2 only ephemeral key exchange with an
    /// AEAD cipher (its §9.2.2 block list holds every other TLS 1.2 suite). TLS 1.3's suites
    /// all qualify.
    static func requireHTTP2Security(_ configuration: inout TLSConfiguration) {
        configuration.minimumTLSVersion = .tlsv12
        configuration.cipherSuiteValues = [
            .TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256, .TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
            .TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384, .TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
            .TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256, .TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
        ]
    }
}

/// Starting servers and clients on NIO channels.
public enum HTTP2Channels {
    /// Listens on `host:port` (port 0 picks a free one); each accepted connection gets a
    /// handler with a delegate from `makeDelegate`, on one of `group`'s event loops, after
    /// `onAccept` has seen its channel; `beforeTransport` may add handlers nearest the socket,
    /// under TLS and HTTP/2 (a wire with a length: `FanoutSink`'s `SinkWire`). A connection
    /// `admit` gives a reason for is refused with it (`HTTP2Refusal`): no delegate is made.
    /// Accepting pauses after a failure (`AcceptBackoff`: out of descriptors, it would fail
    /// again at once), and `acceptEvents` hears of each failure and of the recovery.
    public static func listen<Delegate: HTTP2ConnectionDelegate>(
        host: String,
        port: Int,
        group: any EventLoopGroup,
        transport: HTTP2Transport = .cleartext,
        configuration: HTTP2Connection.Configuration = .init(),
        settingsTimeout: TimeAmount = .seconds(10),
        makeDelegate: @escaping @Sendable (any Channel) -> Delegate,
        onAccept: (@Sendable (any Channel) -> Void)? = nil,
        admit: (@Sendable (any Channel) -> String?)? = nil,
        beforeTransport: (@Sendable (any Channel) throws -> Void)? = nil,
        acceptEvents: (@Sendable (AcceptBackoff.Event) -> Void)? = nil
    ) -> EventLoopFuture<any Channel> {
        ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 1024)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .serverChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(AcceptPauseHandler(report: acceptEvents))
                }
            }
            .childChannelOption(.tcpOption(.tcp_nodelay), value: 1)
            .childChannelOption(.maxMessagesPerRead, value: 16)
            .childChannelInitializer { channel in
                onAccept?(channel)
                let refusal = admit?(channel)
                return channel.eventLoop.makeCompletedFuture {
                    if let refusal {
                        if case .tls(let context) = transport {
                            try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: context))
                        }
                        try channel.pipeline.syncOperations.addHandler(HTTP2Refusal(reason: refusal))
                        return
                    }
                    try beforeTransport?(channel)
                    try addHandlers(
                        to: channel,
                        role: .server,
                        transport: transport,
                        serverHostname: nil,
                        configuration: configuration,
                        settingsTimeout: settingsTimeout,
                        delegate: makeDelegate(channel)
                    )
                }
            }
            .bind(host: host, port: port)
    }

    /// A client socket as every Fanout client sets it: Nagle's algorithm off at the TCP level
    /// and the connect bounded. (`.socketOption(.tcp_nodelay)` is option 1 at SOL_SOCKET,
    /// SO_DEBUG: set silently for root, refused to everyone else. The load engine asked for it
    /// once, then the return wave did: both now come here.)
    public static func clientBootstrap(group: any EventLoopGroup, connectTimeout: TimeAmount) -> ClientBootstrap {
        ClientBootstrap(group: group)
            .channelOption(.tcpOption(.tcp_nodelay), value: 1)
            .connectTimeout(connectTimeout)
    }

    /// Connects to `host:port` and returns the channel with its connection handler.
    public static func connect<Delegate: HTTP2ConnectionDelegate>(
        host: String,
        port: Int,
        group: any EventLoopGroup,
        transport: HTTP2Transport = .cleartext,
        serverHostname: String? = nil,
        configuration: HTTP2Connection.Configuration = .init(),
        settingsTimeout: TimeAmount = .seconds(10),
        connectTimeout: TimeAmount = .seconds(10),
        delegate: @escaping @Sendable () -> Delegate
    ) -> EventLoopFuture<(any Channel, NIOLoopBound<HTTP2ConnectionHandler<Delegate>>)> {
        clientBootstrap(group: group, connectTimeout: connectTimeout)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    _ = try addHandlers(
                        to: channel,
                        role: .client,
                        transport: transport,
                        serverHostname: serverHostname ?? host,
                        configuration: configuration,
                        settingsTimeout: settingsTimeout,
                        delegate: delegate()
                    )
                }
            }
            .connect(host: host, port: port)
            .flatMapThrowing { channel in
                let handler = try channel.pipeline.syncOperations.handler(type: HTTP2ConnectionHandler<Delegate>.self)
                return (channel, NIOLoopBound(handler, eventLoop: channel.eventLoop))
            }
    }

    @discardableResult
    static func addHandlers<Delegate: HTTP2ConnectionDelegate>(
        to channel: any Channel,
        role: HTTP2Connection.Role,
        transport: HTTP2Transport,
        serverHostname: String?,
        configuration: HTTP2Connection.Configuration,
        settingsTimeout: TimeAmount,
        delegate: Delegate
    ) throws -> HTTP2ConnectionHandler<Delegate> {
        let operations = channel.pipeline.syncOperations
        var tls = false
        if case .tls(let context) = transport {
            tls = true
            switch role {
            case .server: try operations.addHandler(NIOSSLServerHandler(context: context))
            case .client:
                // SNI takes a name, not an address.
                let name = serverHostname.flatMap { $0.first?.isLetter == true ? $0 : nil }
                try operations.addHandler(NIOSSLClientHandler(context: context, serverHostname: name))
            }
        }
        let handler = HTTP2ConnectionHandler(
            role: role,
            configuration: configuration,
            requiresALPN: tls,
            settingsTimeout: settingsTimeout,
            delegate: delegate
        )
        try operations.addHandler(handler)
        return handler
    }
}

extension HTTP2Channels {
    /// The certificate `host:port` presents, fetched without verifying it (a second look at a
    /// certificate that failed verification: expired, or not trusted?); `nil` when none came
    /// within `timeout`.
    public static func peerCertificate(
        host: String,
        port: Int,
        serverHostname: String?,
        group: any EventLoopGroup,
        timeout: TimeAmount = .seconds(2)
    ) -> EventLoopFuture<NIOSSLCertificate?> {
        let loop = group.next()
        let promise = loop.makePromise(of: NIOSSLCertificate?.self)
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.certificateVerification = .none
        configuration.applicationProtocols = ["h2"]
        guard let context = try? NIOSSLContext(configuration: configuration) else {
            promise.succeed(nil)
            return promise.futureResult
        }
        let name = (serverHostname ?? host).first?.isLetter == true ? serverHostname ?? host : nil
        let deadline = loop.scheduleTask(in: timeout) { promise.succeed(nil) }
        ClientBootstrap(group: loop)
            .connectTimeout(timeout)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let operations = channel.pipeline.syncOperations
                    try operations.addHandler(NIOSSLClientHandler(context: context, serverHostname: name))
                    try operations.addHandler(PeerCertificateCatcher(promise: promise))
                }
            }
            .connect(host: host, port: port)
            .whenComplete { result in
                if case .success(let channel) = result {
                    promise.futureResult.whenComplete { _ in channel.close(promise: nil) }
                } else {
                    promise.succeed(nil)
                }
            }
        promise.futureResult.whenComplete { _ in deadline.cancel() }
        return promise.futureResult
    }
}

/// Hands the peer's certificate to `promise` when the handshake completes (or `nil` when the
/// channel ends first); whichever comes first wins, later ones are ignored.
private final class PeerCertificateCatcher: ChannelInboundHandler, Sendable {
    typealias InboundIn = ByteBuffer
    private let promise: EventLoopPromise<NIOSSLCertificate?>

    init(promise: EventLoopPromise<NIOSSLCertificate?>) { self.promise = promise }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? TLSUserEvent, case .handshakeCompleted = event {
            promise.succeed(try? context.pipeline.syncOperations.nioSSL_peerCertificate())
        }
        context.fireUserInboundEventTriggered(event)
    }

    func channelInactive(context: ChannelHandlerContext) {
        promise.succeed(nil)
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        promise.succeed(nil)
        context.close(promise: nil)
    }
}
