import FanoutTestSupport
import Foundation
import NIOCore
import NIOPosix
import Testing

@testable import FanoutReturn

/// The wave's HTTP/1.1 connections disable Nagle's algorithm at the TCP level and set nothing
/// else. They asked for `.socketOption(.tcp_nodelay)` once, as the load engine's had before
/// (SocketOptionTests): SO_DEBUG, refused to a user who is not root, so the docs' return wave
/// reached no backend in the docs test's user namespace (every request `connect`).
@Suite struct ReturnSocketOptionTests {
    @Test func theWavesConnectionsSetTCPNoDelayAndNotSODebug() throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        defer { try? group.syncShutdownGracefully() }
        let listener = try ServerBootstrap(group: group).bind(host: "127.0.0.1", port: 0).wait()
        defer { try? listener.close().wait() }
        let client = try ReturnPool.bootstrap(on: group.next())
            .connect(host: "127.0.0.1", port: listener.localAddress!.port!).wait()
        defer { try? client.close().wait() }
        #expect(try client.getOption(ChannelOptions.tcpOption(.tcp_nodelay)).wait() != 0)
        #expect(try client.getOption(ChannelOptions.socketOption(NIOBSDSocket.Option(rawValue: SO_DEBUG))).wait() == 0)
    }
}
