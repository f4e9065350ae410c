import FanoutHTTP2
import FanoutSettings
import FanoutSink
import Foundation
import NIOCore
import NIOPosix
import ServiceLifecycle

/// What `fanout sink` serves: where, over what, with which files. It holds names and reads
/// them when it starts, so a problem with one is a `JobError` that names it.
public struct SinkJob: Sendable {
    /// How connections are secured.
    public enum TLS: Sendable, Hashable {
        /// h2c with prior knowledge.
        case none
        /// TLS with ALPN h2 and this certificate chain and key (PEM).
        case files(certificate: String, key: String)
        /// TLS with a new self-signed certificate, written to DIR/cert.pem and DIR/key.pem.
        case selfSigned(directory: String)
    }

    /// Token auth's key (a .p8 or a public key in PEM) and who it belongs to.
    public struct TokenKey: Sendable, Hashable {
        public var file: String
        public var keyID: String
        public var teamID: String

        public init(file: String, keyID: String, teamID: String) {
            self.file = file
            self.keyID = keyID
            self.teamID = teamID
        }
    }

    public var host = "127.0.0.1"
    public var port = 2197
    /// Event loops serving connections.
    public var threads = Sink.defaultEventLoops
    public var tls = TLS.none
    /// Certificate auth: ask TLS clients for a certificate issued by these CAs (PEM).
    public var clientCertificateAuthorities: String?
    public var tokenKey: TokenKey?
    /// Where `/stats` and `/metrics` are served, if anywhere.
    public var admin: (host: String, port: Int)?
    /// Where received notifications are written, and which.
    public var capture: (path: String, selection: SinkCapture.Selection)?
    /// The APNs rules, limits and scenario.
    public var configuration = SinkConfiguration()

    public init() {}
}

/// The sink as a ServiceLifecycle service: it prints `listening on HOST:PORT` once it is, and on
/// graceful shutdown (SIGINT or SIGTERM through a `ServiceGroup`) drains — new requests get 503
/// Shutdown, every connection GOAWAY — and prints its summary.
public struct SinkService: Service {
    public let job: SinkJob

    public init(_ job: SinkJob) {
        self.job = job
    }

    public func run() async throws {
        let running = try await NIOThreadPool.singleton.runIfActive { try start() }
        try? await gracefulShutdown()
        try await NIOThreadPool.singleton.runIfActive { running.stop() }
    }

    /// A started sink and what serves beside it.
    private struct Running: Sendable {
        var group: MultiThreadedEventLoopGroup
        var sink: Sink
        var admin: SinkAdmin?

        func stop() {
            sink.drain()
            admin?.close()
            StandardStream.output.write((sink.statistics.summary.text + "\n").utf8)
            try? group.syncShutdownGracefully()
        }
    }

    private func start() throws -> Running {
        var configuration = job.configuration
        if let key = job.tokenKey {
            let pem: String
            do {
                pem = try String(contentsOfFile: key.file, encoding: .utf8)
            } catch {
                throw JobError("cannot read --key-file \(key.file): \(error.reason)")
            }
            do {
                let key = try TokenAuthentication.Key(keyID: key.keyID, teamID: key.teamID, pem: pem)
                configuration.tokenAuthentication = TokenAuthentication(keys: [key])
            } catch {
                throw JobError("--key-file \(key.file) holds no P-256 key in PEM: \(error)")
            }
        }
        let transport = try transport()
        configuration.certificateAuthentication = job.clientCertificateAuthorities != nil
        if let capture = job.capture {
            do {
                configuration.capture = try SinkCapture(path: capture.path, selection: capture.selection)
            } catch {
                throw JobError("--capture: \(error)")
            }
        }

        let group = MultiThreadedEventLoopGroup(numberOfThreads: job.threads)
        let sink: Sink
        do {
            sink = try Sink(
                host: job.host,
                port: job.port,
                group: group,
                transport: transport,
                configuration: configuration
            )
        } catch {
            try? group.syncShutdownGracefully()
            throw JobError("cannot listen on \(job.host):\(job.port): \(error)")
        }
        var admin: SinkAdmin?
        if let address = job.admin {
            do {
                admin = try SinkAdmin(sink: sink, host: address.host, port: address.port, group: group)
            } catch {
                sink.drain(grace: .zero)
                try? group.syncShutdownGracefully()
                throw JobError("cannot serve --admin on \(address.host):\(address.port): \(error)")
            }
        }
        StandardStream.output.write("listening on \(Sink.describe(sink.localAddress))\n".utf8)
        if let admin { StandardStream.output.write("admin on \(Sink.describe(admin.localAddress))\n".utf8) }
        if case .selfSigned(let directory) = job.tls {
            printError("fanout sink: TLS with a self-signed certificate; clients trust it with \(directory)/cert.pem")
        }
        if configuration.tokenAuthentication == nil && !configuration.certificateAuthentication {
            printError(
                "fanout sink: auth is off (no --key-file or --client-ca given): every request is taken as authenticated"
            )
        }
        return Running(group: group, sink: sink, admin: admin)
    }

    private func transport() throws -> HTTP2Transport {
        let certificate: String
        let key: String
        switch job.tls {
        case .none:
            return .cleartext
        case .files(let certificateFile, let keyFile):
            (certificate, key) = (certificateFile, keyFile)
        case .selfSigned(let directory):
            do {
                let files = try SinkCertificates.writeSelfSigned(into: directory, hosts: [job.host])
                (certificate, key) = (files.certificate, files.key)
            } catch {
                throw JobError("cannot write a self-signed certificate to --tls-self-signed \(directory): \(error)")
            }
        }
        do {
            return try .tlsServer(
                certificateFile: certificate,
                keyFile: key,
                clientCertificateAuthorities: job.clientCertificateAuthorities
            )
        } catch {
            let files = [certificate, key] + (job.clientCertificateAuthorities.map { [$0] } ?? [])
            throw JobError("cannot use the TLS files \(files.joined(separator: ", ")): \(error)")
        }
    }
}
