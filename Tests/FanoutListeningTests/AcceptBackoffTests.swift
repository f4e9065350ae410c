import FanoutListening
import NIOConcurrencyHelpers
import NIOCore
import NIOEmbedded
import Testing

/// Issue 61, case 11: a listener whose accepts fail (out of descriptors) pauses, longer while
/// they keep failing, reports a burst once and its end once, and never asks the socket again
/// before the pause is over.
@Suite struct AcceptBackoffTests {
    static let millisecond: UInt64 = 1_000_000

    @Test func pausesDoubleToASecondAndOnlyABurstsFirstFailureIsToBeLogged() {
        var backoff = AcceptBackoff()
        var pauses: [UInt64] = []
        var firsts: [Bool] = []
        for index in 0..<10 {
            guard case .failed(let error, let pause, let first) = backoff.failed("EMFILE", now: UInt64(index)) else {
                Issue.record("not a failure")
                return
            }
            #expect(error == "EMFILE")
            pauses.append(pause / Self.millisecond)
            firsts.append(first)
        }
        #expect(pauses == [10, 20, 40, 80, 160, 320, 640, 1000, 1000, 1000])
        #expect(firsts == [true] + Array(repeating: false, count: 9))
        #expect(
            backoff.accepted(now: 2_000 * Self.millisecond)
                == .recovered(failures: 10, nanoseconds: 2_000 * Self.millisecond)
        )
        // A new burst starts again at 10 ms, and is reported again.
        #expect(
            backoff.failed("EMFILE", now: 0)
                == .failed(error: "EMFILE", pause: 10 * Self.millisecond, firstOfBurst: true)
        )
    }

    @Test func anAcceptWithoutFailuresReportsNothing() {
        var backoff = AcceptBackoff()
        #expect(backoff.accepted(now: 5) == nil)
        #expect(backoff.failures == 0)
    }

    /// Counts the reads that reach the socket.
    final class ReadCounter: ChannelOutboundHandler, Sendable {
        typealias OutboundIn = Never
        let reads = NIOLockedValueBox(0)
        func read(context: ChannelHandlerContext) {
            reads.withLockedValue { $0 += 1 }
            context.read()
        }
    }

    /// On a channel, on the loop's made-up clock: after a failed accept the next read waits for
    /// the pause; an accept after it is reported as the end of the burst.
    @Test func theHandlerHoldsReadsForThePause() throws {
        let counter = ReadCounter()
        let events = NIOLockedValueBox<[AcceptBackoff.Event]>([])
        let loop = EmbeddedEventLoop()
        let channel = EmbeddedChannel(loop: loop)
        try channel.pipeline.syncOperations.addHandler(counter)
        try channel.pipeline.syncOperations.addHandler(
            AcceptPauseHandler(report: { event in events.withLockedValue { $0.append(event) } })
        )
        channel.read()
        #expect(counter.reads.withLockedValue { $0 } == 1)

        channel.pipeline.fireErrorCaught(IOError(errnoCode: 24, reason: "accept"))
        channel.read()
        #expect(counter.reads.withLockedValue { $0 } == 1, "read at once after a failure")
        loop.advanceTime(by: .milliseconds(9))
        #expect(counter.reads.withLockedValue { $0 } == 1)
        loop.advanceTime(by: .milliseconds(1))
        #expect(counter.reads.withLockedValue { $0 } == 2)

        // A second failure in a row: 20 ms, and no second report of the burst.
        channel.pipeline.fireErrorCaught(IOError(errnoCode: 24, reason: "accept"))
        channel.read()
        channel.read()
        loop.advanceTime(by: .milliseconds(19))
        #expect(counter.reads.withLockedValue { $0 } == 2)
        loop.advanceTime(by: .milliseconds(1))
        #expect(counter.reads.withLockedValue { $0 } == 3, "one read for the pause, however many were asked")

        try channel.writeInbound(EmbeddedChannel())
        let seen = events.withLockedValue { $0 }
        #expect(seen.count == 3)
        #expect(seen.filter { if case .failed(_, _, true) = $0 { true } else { false } }.count == 1)
        #expect(seen.last == .recovered(failures: 2, nanoseconds: 30 * Self.millisecond))
        _ = try channel.finish(acceptAlreadyClosed: true)
    }
}
