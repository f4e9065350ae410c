import FanoutTestSupport
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import Testing

@testable import FanoutHTTP2

/// Both ends disable Nagle's algorithm (TCP_NODELAY, at the TCP level) and set nothing else.
/// They once asked for `.socketOption(.tcp_nodelay)`: option 1 at SOL_SOCKET, which is
/// SO_DEBUG — allowed to root on the host, refused (EACCES) in a container without
/// CAP_NET_ADMIN, where the sink then closed every connection it accepted (found by running
/// the image, scripts/image.sh).
@Suite(.serialized) struct SocketOptionTests {
    @Test func bothEndsSetTCPNoDelayAndNotSODebug() throws {
        let accepted = NIOLockedValueBox<(any Channel)?>(nil)
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        defer { try? group.syncShutdownGracefully() }
        let server = try HTTP2Channels.listen(
            host: "127.0.0.1",
            port: 0,
            group: group,
            makeDelegate: { _ in EchoResponder() },
            onAccept: { channel in accepted.withLockedValue { $0 = channel } }
        ).wait()
        defer { try? server.close().wait() }
        let (client, _) = try HTTP2Channels.connect(
            host: "127.0.0.1",
            port: server.localAddress!.port!,
            group: group,
            transport: .cleartext,
            serverHostname: "localhost",
            delegate: { EchoResponder() }
        ).wait()
        defer { try? client.close().wait() }
        poll(timeout: .seconds(10), every: .milliseconds(1)) { accepted.withLockedValue { $0 } != nil }
        let serverSide = try #require(accepted.withLockedValue { $0 })
        for channel in [client, serverSide] {
            #expect(try channel.getOption(ChannelOptions.tcpOption(.tcp_nodelay)).wait() != 0)
            #expect(
                try channel.getOption(ChannelOptions.socketOption(NIOBSDSocket.Option(rawValue: SO_DEBUG))).wait() == 0
            )
        }
    }
}
