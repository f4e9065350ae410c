import FanoutHTTP2
import FanoutTestSupport
import Foundation
import NIOCore
import NIOPosix
import Testing

@testable import FanoutSink

/// Connection faults a capacity plan injects: GOAWAY after requests or time, abrupt closes,
/// unanswered streams, a connection limit.
@Suite struct SinkConnectionTests {
    static func harness(_ faults: ConnectionFaults) -> SinkHarness {
        var configuration = SinkConfiguration()
        configuration.scenario.faults = faults
        configuration.idleTimeout = nil  // so that what is due is only the fault's
        configuration.requestTimeout = nil
        return SinkHarness(configuration)
    }

    @Test func goAwayAfterRequestsCarriesAPNsReason() {
        var faults = ConnectionFaults()
        faults.goAwayAfterRequests = 3
        faults.goAwayReason = .shutdown
        var harness = Self.harness(faults)
        for _ in 0..<3 { #expect(harness.send(SinkHarness.fields())?.status == 200) }
        #expect(harness.goAways == [#"{"reason":"Shutdown"}"#])
        // No new streams on this connection.
        #expect(harness.send(SinkHarness.fields()) == nil)
        let isFinished = harness.server.isFinished
        #expect(isFinished)
    }

    @Test func goAwayAfterTimeWakesTheConnection() throws {
        var faults = ConnectionFaults()
        faults.goAwayAfter = .seconds(60)
        var harness = Self.harness(faults)
        #expect(harness.send(SinkHarness.fields())?.status == 200)
        let due = try #require(harness.sink.nextTimedEvent)
        harness.wakeSink(now: due - .seconds(1))
        harness.pump()
        #expect(harness.goAways.isEmpty)
        harness.wakeSink(now: due)
        harness.pump()
        #expect(harness.goAways == [#"{"reason":"Shutdown"}"#])
        #expect(harness.sink.nextTimedEvent == nil)
    }

    @Test func closeAfterRequestsDropsTheConnectionWithoutAWord() {
        var faults = ConnectionFaults()
        faults.closeAfterRequests = 2
        var harness = Self.harness(faults)
        #expect(harness.send(SinkHarness.fields())?.status == 200)
        #expect(harness.send(SinkHarness.fields()) == nil)
        let isAborted = harness.server.isAborted
        #expect(isAborted)
        let isFinished = harness.server.isFinished
        #expect(isFinished)
        #expect(harness.goAways.isEmpty)
    }

    /// The connection reads time only through its configuration's clock: a made-up one dates a
    /// 410's timestamp and times a fixed latency, whatever the machine's clocks say.
    @Test func aMadeUpClockTimesAnswersAndDates410s() throws {
        let uptime: UInt64 = 5_000_000_000_000
        let wall: Int64 = 1_700_000_000_123_000_000
        var configuration = SinkConfiguration()
        configuration.clock = SinkClock(uptime: { uptime }, wall: { wall })
        configuration.idleTimeout = nil
        configuration.requestTimeout = nil
        configuration.scenario.unregisteredTokens.insert(String(repeating: "cd", count: 32))
        configuration.scenario.latency = .fixed(.milliseconds(80))
        var harness = SinkHarness(configuration)
        #expect(harness.send(SinkHarness.fields(token: String(repeating: "cd", count: 32))) == nil)
        // Received at the made-up uptime (no read burst in memory), due 80 ms after it.
        #expect(try #require(harness.sink.nextTimedEvent).uptimeNanoseconds == uptime + 80_000_000)
        harness.wakeSink(now: .uptimeNanoseconds(uptime + 80_000_000))
        harness.pump()
        let answer = try #require(harness.responses[0])
        #expect(answer.status == 410 && answer.reason == "Unregistered")
        #expect(answer.timestamp == wall / 1_000_000)
    }

    @Test func unansweredStreamsStayOpen() {
        var faults = ConnectionFaults()
        faults.unansweredShare = 1
        var harness = Self.harness(faults)
        #expect(harness.send(SinkHarness.fields()) == nil)
        #expect(harness.server.openStreams == 1)
        #expect(harness.client.openStreams == 1)
    }

    /// What each of `sockets` hears: up to 4 reads of at most 5 s each, until `enough` holds of
    /// what came.
    static func heard(_ sockets: [Int32], enough: ([UInt8]) -> Bool = { !$0.isEmpty }) -> [[UInt8]] {
        sockets.map { fd in
            var timeout = timeval(tv_sec: 5, tv_usec: 0)
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            var bytes: [UInt8] = []
            for _ in 0..<4 where !enough(bytes) {
                var chunk = [UInt8](repeating: 0, count: 1024)
                let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                guard count > 0 else { break }
                bytes += chunk.prefix(count)
            }
            return bytes
        }
    }

    /// Past a limit a connection hears why: the server preface, then GOAWAY ENHANCE_YOUR_CALM
    /// with the limit in its debug data (`HTTP2Refusal`), not a close it would have to guess at.
    @Test func connectionsBeyondTheIdleLimitAreRefusedInWords() throws {
        var configuration = SinkConfiguration()
        configuration.maxIdleConnectionsPerPeer = 2
        // The idle limit holds once half the total is open: two of four.
        configuration.scenario.faults.maxConnections = 4
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        defer { try? group.syncShutdownGracefully() }
        let sink = try Sink(host: "127.0.0.1", port: 0, group: group, configuration: configuration)
        defer { sink.drain(grace: .seconds(1)) }
        let port = sink.localAddress.port!
        var sockets: [Int32] = []
        defer { for fd in sockets { close(fd) } }
        for _ in 0..<3 { sockets.append(try #require(connectLoopback(port: port))) }
        // Each admitted connection hears the sink's SETTINGS; the third hears the refusal.
        let heard = Self.heard(sockets)
        let refusal = HTTP2Refusal.frames(
            reason:
                "fanout sink: 2 connections from 127.0.0.1 that sent no authenticated request, the per-peer idle limit"
        )
        #expect(heard[0].count > 0 && heard[0] != refusal)
        #expect(heard[1].count > 0 && heard[1] != refusal)
        #expect(heard[2] == refusal)
        #expect(sink.limits.noted == 1)
        #expect(sink.statistics.summary.defences.refused == 1)
    }

    /// Issue 61, case 10: at the total, the connection that waited longest without a request is
    /// evicted for the new one (GOAWAY with APNs' IdleTimeout, then closed); the new one is
    /// served.
    @Test func atTheTotalTheOldestIdleConnectionIsEvicted() throws {
        var configuration = SinkConfiguration()
        configuration.scenario.faults.maxConnections = 2
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        defer { try? group.syncShutdownGracefully() }
        let sink = try Sink(host: "127.0.0.1", port: 0, group: group, configuration: configuration)
        defer { sink.drain(grace: .seconds(1)) }
        #expect(sink.maxConnections == 2)
        let port = sink.localAddress.port!
        var sockets: [Int32] = []
        defer { for fd in sockets { close(fd) } }
        for _ in 0..<2 { sockets.append(try #require(connectLoopback(port: port))) }
        // Both admitted (their SETTINGS heard) before the third comes.
        _ = Self.heard(sockets)
        sockets.append(try #require(connectLoopback(port: port)))
        let idleTimeout = Array(#"{"reason":"IdleTimeout"}"#.utf8)
        let newcomer = Self.heard([sockets[2]])[0]
        #expect(newcomer.count > 0 && newcomer.firstRange(of: idleTimeout) == nil, "the newcomer is served")
        let oldest = Self.heard([sockets[0]]) { $0.firstRange(of: idleTimeout) != nil }[0]
        #expect(oldest.firstRange(of: idleTimeout) != nil, "the oldest is evicted: \(oldest)")
        #expect(sink.statistics.summary.defences.evicted == 1)
        #expect(sink.statistics.summary.defences.refused == 0)
    }

    /// A timed apns-id is believed only from at most 10 s before the sink handles its request,
    /// and never from after.
    @Test func timedIDsAreBelievedWithinTheirBound() {
        let now: UInt64 = 10_000_000_000_000
        #expect(AnswerWriter.isBelievable(sentAt: now, now: now))
        #expect(AnswerWriter.isBelievable(sentAt: now - 10_000_000_000, now: now))
        #expect(!AnswerWriter.isBelievable(sentAt: now - 10_000_000_001, now: now))
        #expect(!AnswerWriter.isBelievable(sentAt: now - 3_600_000_000_000, now: now))
        #expect(!AnswerWriter.isBelievable(sentAt: now + 1, now: now))
    }

    /// A client that resets streams whose answers are held (rapid reset against a slow sink)
    /// leaves nothing behind: the held answers of reset streams are dropped, so what is held
    /// stays within twice what is open.
    @Test func heldAnswersOfResetStreamsAreDropped() throws {
        var configuration = SinkConfiguration()
        configuration.initialMaxConcurrentStreams = 1000
        configuration.scenario.latency = .fixed(.seconds(60))
        var harness = SinkHarness(configuration)
        // 4 × 200 resets: below the HTTP/2 reset budget (1000), which would end the connection.
        for round in 0..<4 {
            var streams: [UInt32] = []
            for index in 0..<200 {
                let stream = try harness.client.sendRequest(
                    HTTP2Fields(SinkHarness.fields()),
                    body: ByteBuffer(string: SinkHarness.poll),
                    tag: UInt64(round * 200 + index)
                )
                streams.append(stream)
            }
            harness.pump()
            for stream in streams { harness.client.resetStream(stream, code: .cancel) }
            harness.pump()
            #expect(harness.sink.heldAnswers <= 2 * 200 + 64, "round \(round): \(harness.sink.heldAnswers) held")
        }
        #expect(harness.server.openStreams == 0)
    }

    /// A connection with nothing open, held or received over a whole idle timeout gets GOAWAY
    /// with APNs' reason IdleTimeout; one that keeps sending does not.
    @Test func idleConnectionsAreSentAway() throws {
        var configuration = SinkConfiguration()
        configuration.idleTimeout = .seconds(30)
        var busy = SinkHarness(configuration)
        var idle = SinkHarness(configuration)
        var now = NIODeadline.now()
        for _ in 0..<3 {
            now = now + .seconds(31)
            #expect(busy.send(SinkHarness.fields())?.status == 200)
            busy.wakeSink(now: now)
            busy.pump()
            idle.wakeSink(now: now)
            idle.pump()
        }
        #expect(busy.goAways.isEmpty)
        #expect(idle.goAways == [#"{"reason":"IdleTimeout"}"#], "\(idle.goAways)")
    }
}
