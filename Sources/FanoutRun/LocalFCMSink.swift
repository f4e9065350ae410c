import FanoutFCMAuth
import FanoutFCMSink
import FanoutSink
import FanoutWire
import Foundation
import NIOPosix
import NIOSSL

/// An FCM sink in this process on a loopback port, for a job that sends to it (a plan's
/// rehearsal, a campaign's FCM half): over TLS with a self-signed certificate made in `folder`
/// when asked, behind `wire`, on its own event loops; `stop` drains it and lets them go.
struct LocalFCMSink: Sendable {
    let sink: FCMSink
    let group: MultiThreadedEventLoopGroup
    /// The certificate a sender trusts (`nil`: cleartext).
    let certificate: String?

    /// `what` names the sink in errors ("the rehearsal's FCM sink").
    init(
        _ what: String,
        configuration: FCMSinkConfiguration,
        account: FCMServiceAccount?,
        tls: Bool,
        wire: SinkWire?,
        threads: Int,
        folder: String
    ) throws {
        var context: NIOSSLContext?
        var certificate: String?
        if tls {
            do {
                try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
                let files = try SinkCertificates.writeSelfSigned(into: folder, hosts: ["127.0.0.1"])
                context = try FCMSink.tlsContext(certificateFile: files.certificate, keyFile: files.key)
                certificate = files.certificate
            } catch {
                throw JobError.resource(.part(what), "it has no TLS: \(error)")
            }
        }
        group = MultiThreadedEventLoopGroup(numberOfThreads: threads)
        do {
            sink = try FCMSink(
                host: "127.0.0.1",
                port: 0,
                group: group,
                tls: context,
                wire: wire,
                service: FCMService(configuration: configuration, account: account)
            )
        } catch {
            try? group.syncShutdownGracefully()
            throw JobError.cannotListen(.part(what), error)
        }
        self.certificate = certificate
    }

    var port: Int { sink.localAddress.port ?? 0 }

    func stop() {
        sink.drain(grace: .seconds(1))
        try? group.syncShutdownGracefully()
    }
}
