import FanoutHTTP2
import FanoutTokens
import NIOCore
import NIOEmbedded
import Testing

@testable import FanoutClient

/// What a run's callers and its driver share: cancelling closes the channels open and any
/// opened after; stopping interrupts the feed once, keeping the first cause and its time.
@Suite struct RunControlTests {
    static func control() throws -> RunControl {
        RunControl(feed: NotificationFeed(try TokenStream(.generated(TokenGenerator(count: 4, seed: 1)))))
    }

    @Test func cancelClosesTheChannelsOpenAndOneOpenedAfter() throws {
        let control = try Self.control()
        let loop = EmbeddedEventLoop()
        let first = EmbeddedChannel(loop: loop)
        let second = EmbeddedChannel(loop: loop)
        try first.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
        try second.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
        control.opened(first)
        #expect(first.isActive && !control.isCancelled)
        control.cancel()
        loop.run()
        #expect(!first.isActive && control.isCancelled)
        // Opened while the others closed: closed as it is registered.
        control.opened(second)
        loop.run()
        #expect(!second.isActive)
        // The wait hears a cancel at once, reports or not.
        #expect(control.endings.wait(upTo: .seconds(60)).isEmpty)
    }

    @Test func theFirstStopCountsAndInterruptsTheFeed() throws {
        let control = try Self.control()
        #expect(control.stop == nil && !control.isStopping && control.graceEnds == nil)
        control.stop(.signal(.terminate))
        control.stop(.signal(.interrupt))
        guard case .signal(let signal)? = control.stop?.cause else {
            Issue.record("no stop recorded: \(String(describing: control.stop))")
            return
        }
        #expect(signal == .terminate)
        #expect(control.isStopping && control.feed.isInterrupted)
        let at = try #require(control.stop?.at)
        #expect(control.graceEnds == at + UInt64(RunControl.interruptionGrace.wholeNanoseconds))
        #expect(!control.isCancelled)
    }

    /// Counts the wake-ups fired into its channel's pipeline.
    final class WakeUps: ChannelInboundHandler, @unchecked Sendable {
        typealias InboundIn = Never
        var count = 0
        func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
            if event is HTTP2WakeUp { count += 1 }
        }
    }

    /// Reaching the endpoint is said once to every connection: the ones open are woken (a
    /// connection whose first answer was refused looks again), and so is one opened after.
    @Test func reachingTheEndpointWakesTheChannelsOpenAndOneOpenedAfter() throws {
        let control = try Self.control()
        let loop = EmbeddedEventLoop()
        let (first, second) = (WakeUps(), WakeUps())
        let open = EmbeddedChannel(handler: first, loop: loop)
        let later = EmbeddedChannel(handler: second, loop: loop)
        control.opened(open)
        loop.run()
        #expect(!control.endpointReached && first.count == 0)
        control.reachedEndpoint()
        loop.run()
        #expect(control.endpointReached && first.count == 1)
        control.opened(later)
        loop.run()
        #expect(second.count == 1 && first.count == 1)
    }
}
