import FanoutAPNs
import FanoutClient
import FanoutEndpoint
import FanoutHTTP2
import FanoutPayload
import FanoutReport
import FanoutSink
import FanoutTestSupport
import FanoutTokens
import Foundation
import NIOCore
import NIOPosix
import Testing

/// The load engine as a whole against the mock APNs: every token ends in exactly one outcome,
/// sender and sink agree on every answer and on the digest, the stream cap reaches HTTP/2, and a
/// run with no server gives up.
@Suite(.serialized) struct LoadEngineTests {
    @Test func everyNotificationIsAcceptedAndTheDigestsAgree() throws {
        let outcome = try SinkRun.send(20_000)
        #expect(outcome.snapshot.accepted == 20_000)
        #expect(outcome.snapshot.sent == 20_000)
        #expect(outcome.snapshot.requests == 20_000)
        #expect(outcome.snapshot.latency.totalCount == 20_000)
        #expect(outcome.reconciliation.agrees, "\(outcome.reconciliation.differences)")
        #expect(outcome.snapshot.digest == (try SinkRun.expectedDigest(20_000)))
        #expect(outcome.report.tokens?.tokens == 20_000)
        #expect(!outcome.report.cancelled)
    }

    /// The harness's own delays, answer by answer: the sender's read delay (one answer in 8),
    /// its loop's lag sampled, its CPU; the sink's lateness for each, from the send too when the
    /// requests' apns-ids carry it, and the hold it was told to inject kept apart.
    @Test(arguments: [1, 8, 0])
    func eachAnswerIsTimedOnBothSides(timedIDs: Int) throws {
        var scenario = SinkScenario()
        scenario.latency = .fixed(.milliseconds(3))
        let outcome = try SinkRun.send(5000, scenario: scenario) { $0.endpoint.headers.timedAPNsIDs = timedIDs }
        #expect(outcome.snapshot.accepted == 5000)
        #expect(outcome.reconciliation.agrees, "\(outcome.reconciliation.differences)")
        let loops = outcome.report.loopDelays
        #expect(loops.count == 1)
        // One answer in 8 of each of the 2 connections, the first included.
        #expect((625...627).contains(loops.first?.readDelay.totalCount ?? 0))
        #expect((loops.first?.loopLag.totalCount ?? 0) > 0)
        #expect((loops.first?.cpuNanoseconds ?? 0) > 0)
        let delays = outcome.sink.ownDelays
        #expect(delays.lateness.count == 5000)
        // Every `timedIDs`th request of each of the 2 connections, its first included.
        switch timedIDs {
        case 0: #expect(delays.fromSend.count == 0)
        case 1: #expect(delays.fromSend.count == 5000)
        default: #expect((625...627).contains(delays.fromSend.count), "\(delays.fromSend.count) of 5000 timed")
        }
        #expect(delays.injected.count == 5000)
        #expect(delays.injected.p50 >= 2990 && delays.injected.max <= 3010, "\(delays.injected)")
        // From the send is the same answers' lateness plus their transit: never less.
        if timedIDs == 1 {
            #expect(delays.fromSend.p50 >= delays.lateness.p50 && delays.fromSend.max >= delays.lateness.max)
        }
        #expect(delays.loopUtilisation.count == 1)
    }

    /// `streamsPerConnection` reaches each connection's HTTP/2 settings: against a sink that
    /// allows 1500 streams and holds every answer 1 s (so streams fill before any frees), one
    /// connection keeps exactly `streams` in flight — above the 1000 HTTP/2 once capped every
    /// client at, and below the sink's limit when the run asks for fewer. The hold is the time
    /// the sender has to open them all: 300 ms was too short for a debug build beside a full
    /// suite and two busy loops (1359 of 1500 open when the first answers came back).
    @Test(arguments: [1500, 700])
    func theStreamCapReachesTheConnection(streams: Int) throws {
        var scenario = SinkScenario()
        scenario.latency = .fixed(.seconds(1))
        let outcome = try SinkRun.send(3000, scenario: scenario, connections: 1, streams: streams, sinkStreams: 1500)
        #expect(outcome.snapshot.accepted == 3000)
        #expect(outcome.sink.peakConcurrentStreams == streams)
        #expect(outcome.reconciliation.agrees, "\(outcome.reconciliation.differences)")
    }

    /// The sink's limit binds a run that asks for more.
    @Test func theServersLimitBindsARunThatAsksForMore() throws {
        var scenario = SinkScenario()
        scenario.latency = .fixed(.milliseconds(300))
        let outcome = try SinkRun.send(1500, scenario: scenario, connections: 1, streams: 1500, sinkStreams: 500)
        #expect(outcome.snapshot.accepted == 1500)
        #expect(outcome.sink.peakConcurrentStreams == 500)
    }

    /// `count` generated tokens sent to `port` on 127.0.0.1 over `connections`, the endpoint
    /// given `connectTimeout` to be reached (and `streamTimeout` for each request): the runs
    /// against endpoints that never answer.
    static func unreachableRun(
        port: Int,
        count: UInt64,
        connections: Int,
        connectTimeout: Duration,
        streamTimeout: Duration? = nil
    ) throws -> LoadEngine.Report {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        defer { try? group.syncShutdownGracefully() }
        var configuration = LoadConfiguration(
            host: "127.0.0.1",
            port: port,
            headers: try NotificationHeaders(topic: "com.example.app"),
            encoder: PayloadEncoder(template: try PayloadTemplate(json: Array(SinkRun.poll.utf8)))
        )
        configuration.shape.connections = connections
        if let streamTimeout { configuration.shape.streamTimeout = streamTimeout }
        configuration.shape.deadline = .seconds(60)
        configuration.endpoint.connectTimeout = connectTimeout
        let tokens = try TokenStream(.generated(TokenGenerator(count: count, seed: 1)))
        return LoadEngine(configuration: configuration, tokens: tokens, group: group).run()
    }

    /// Refused connects are tried again until the connect timeout; then what was read fails
    /// with the cause, and the report says the endpoint was never reached.
    @Test func noServerMeansTheRunEndsUnreachableAtTheConnectTimeout() throws {
        // A port bound and held but not listening: connections to it are refused.
        var refusing = 0
        let report = try withRefusingPort { port in
            refusing = port
            return try Self.unreachableRun(port: port, count: 100, connections: 1, connectTimeout: .milliseconds(500))
        }
        #expect(report.unreachable?.cause == .connectionRefused)
        #expect(
            report.abandoned
                == "gave up on 127.0.0.1:\(refusing): could not reach the endpoint: connection refused (ECONNREFUSED)"
        )
        #expect(report.snapshot.failed == [.unreachable(.connectionRefused): 100])
        #expect(report.snapshot.accepted == 0)
        // The timeout, not eight tries in a row, ended it: well under the deadline.
        #expect(report.elapsed >= .milliseconds(500) && report.elapsed < .seconds(5))
    }

    /// A server whose SETTINGS allow no stream (RFC 9113 lets it, and lets a client wait): each
    /// connection waits the stream timeout and ends; past the connect timeout the run ends
    /// unreachable with the cause named. It once waited for ever (and `search` with it).
    @Test func aServerAllowingNoStreamEndsTheRunUnreachable() throws {
        let sinkGroup = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        defer { try? sinkGroup.syncShutdownGracefully() }
        var sinkConfiguration = SinkConfiguration()
        sinkConfiguration.initialMaxConcurrentStreams = 0
        sinkConfiguration.maxConcurrentStreams = 0
        let sink = try Sink(host: "127.0.0.1", port: 0, group: sinkGroup, configuration: sinkConfiguration)
        defer { sink.drain(grace: .seconds(1)) }
        let report = try Self.unreachableRun(
            port: sink.localAddress.port!,
            count: 50,
            connections: 2,
            connectTimeout: .milliseconds(600),
            streamTimeout: .milliseconds(400)
        )
        let unreachable = try #require(report.unreachable, "\(report.snapshot)")
        #expect(unreachable.cause == .noStreamsAllowed)
        #expect(report.snapshot.failed == [.unreachable(.noStreamsAllowed): 50])
        #expect(report.elapsed < .seconds(10), "\(report.elapsed)")
    }

    /// A listener that accepts and never speaks: the connect timeout bounds its SETTINGS too
    /// (it once took the fixed 10 s), and the cause says it stayed silent, not that it closed.
    @Test func aSilentListenerIsUnreachableAtTheConnectTimeoutAndSaidSilent() throws {
        let report = try withSilentListener { port in
            try Self.unreachableRun(port: port, count: 100, connections: 2, connectTimeout: .milliseconds(700))
        }
        let unreachable = try #require(report.unreachable)
        #expect(unreachable.cause == .closedBeforeSettings)
        #expect(unreachable.phrase == "silent before HTTP/2 began")
        #expect(unreachable.advice.hasPrefix("the server accepted the connection and sent no HTTP/2 SETTINGS"))
        #expect(report.snapshot.failed == [.unreachable(.closedBeforeSettings): 100])
        #expect(report.elapsed >= .milliseconds(700) && report.elapsed < .seconds(5), "\(report.elapsed)")
    }
}
