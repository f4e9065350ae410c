import FanoutAPNs
import FanoutClient
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

/// The load engine against the mock APNs in every fault it injects: each token ends in exactly
/// one outcome, and sender and sink agree on every answer and on the digest of what was accepted.
@Suite(.serialized) struct LoadEngineTests {
    struct Outcome {
        var report: LoadEngine.Report
        var sink: SinkSummary
        var reconciliation: Reconciliation
        var snapshot: LoadSnapshot { report.snapshot }
    }

    static let poll = try! String(contentsOfFile: repositoryRoot + "/fixtures/poll.json", encoding: .utf8)

    /// Sends `count` generated tokens' poll notifications to a sink with `scenario`.
    static func send(
        _ count: UInt64,
        scenario: SinkScenario = .init(),
        connections: Int = 2,
        streams: Int = 100,
        sinkStreams: UInt32? = nil,
        configure: (inout LoadConfiguration) -> Void = { _ in },
        beforeRun: (LoadEngine, any EventLoopGroup) -> Void = { _, _ in }
    ) throws -> Outcome {
        let sinkGroup = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        defer { try? sinkGroup.syncShutdownGracefully() }
        var sinkConfiguration = SinkConfiguration()
        sinkConfiguration.scenario = scenario
        if let sinkStreams { sinkConfiguration.maxConcurrentStreams = sinkStreams }
        let sink = try Sink(host: "127.0.0.1", port: 0, group: sinkGroup, configuration: sinkConfiguration)
        let senderGroup = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        defer { try? senderGroup.syncShutdownGracefully() }
        let tokens = try TokenStream(
            .generated(TokenGenerator(count: count, seed: 7)),
            configuration: TokenReaderConfiguration(batchBytes: 16 * 1024, batchTokens: 256, batchCount: 16)
        )
        var configuration = LoadConfiguration(
            host: "127.0.0.1",
            port: sink.localAddress.port!,
            headers: NotificationHeaders(topic: "com.example.app"),
            encoder: PayloadEncoder(template: try PayloadTemplate(json: Array(poll.utf8)))
        )
        configuration.shape.connections = connections
        configuration.shape.streamsPerConnection = streams
        configuration.shape.deadline = .seconds(120)
        configure(&configuration)
        let engine = LoadEngine(configuration: configuration, tokens: tokens, group: senderGroup)
        beforeRun(engine, senderGroup)
        let report = engine.run()
        sink.drain(grace: .seconds(2))
        let summary = sink.statistics.summary
        return Outcome(
            report: report,
            sink: summary,
            reconciliation: Reconciliation(
                client: report.snapshot,
                sinkRequests: summary.requests,
                sinkAccepted: summary.accepted,
                sinkRejected: summary.rejected,
                sinkDigest: summary.digest
            )
        )
    }

    /// The digest of every token's notification, computed apart from the engine.
    static func expectedDigest(_ count: UInt64) throws -> NotificationDigest {
        let generator = TokenGenerator(count: count, seed: 7)
        let encoder = PayloadEncoder(template: try PayloadTemplate(json: Array(poll.utf8)))
        var digest = NotificationDigest()
        for index in 0..<count {
            let token = generator.token(index)
            var body = ByteBuffer()
            _ = try encoder.encode(token: token, sequence: index, into: &body)
            Array(token.utf8).withUnsafeBytes { token in
                body.withUnsafeReadableBytes { digest.add(token: token, payload: $0) }
            }
        }
        return digest
    }

    @Test func everyNotificationIsAcceptedAndTheDigestsAgree() throws {
        let outcome = try Self.send(20_000)
        #expect(outcome.snapshot.accepted == 20_000)
        #expect(outcome.snapshot.sent == 20_000)
        #expect(outcome.snapshot.requests == 20_000)
        #expect(outcome.snapshot.latency.totalCount == 20_000)
        #expect(outcome.reconciliation.agrees, "\(outcome.reconciliation.differences)")
        #expect(outcome.snapshot.digest == (try Self.expectedDigest(20_000)))
        #expect(outcome.report.tokens?.tokens == 20_000)
        #expect(!outcome.report.cancelled)
    }

    /// `streamsPerConnection` reaches each connection's HTTP/2 settings: against a sink that
    /// allows 1500 streams and holds every answer 300 ms (so streams fill before any frees), one
    /// connection keeps exactly `streams` in flight — above the 1000 HTTP/2 once capped every
    /// client at, and below the sink's limit when the run asks for fewer.
    @Test(arguments: [1500, 700])
    func theStreamCapReachesTheConnection(streams: Int) throws {
        var scenario = SinkScenario()
        scenario.latency = .fixed(.milliseconds(300))
        let outcome = try Self.send(3000, scenario: scenario, connections: 1, streams: streams, sinkStreams: 1500)
        #expect(outcome.snapshot.accepted == 3000)
        #expect(outcome.sink.peakConcurrentStreams == streams)
        #expect(outcome.reconciliation.agrees, "\(outcome.reconciliation.differences)")
    }

    /// The sink's limit binds a run that asks for more.
    @Test func theServersLimitBindsARunThatAsksForMore() throws {
        var scenario = SinkScenario()
        scenario.latency = .fixed(.milliseconds(300))
        let outcome = try Self.send(1500, scenario: scenario, connections: 1, streams: 1500, sinkStreams: 500)
        #expect(outcome.snapshot.accepted == 1500)
        #expect(outcome.sink.peakConcurrentStreams == 500)
    }

    @Test func errorsEndInOneOutcomeEachAndRetryableOnesAreRetried() throws {
        var scenario = SinkScenario()
        scenario.errors = [(.unregistered, 0.05), (.badDeviceToken, 0.02), (.internalServerError, 0.05)]
        let outcome = try Self.send(10_000, scenario: scenario) { $0.shape.retryBackoff = .milliseconds(5) }
        let snapshot = outcome.snapshot
        #expect(snapshot.sent == 10_000)
        #expect(snapshot.failed.isEmpty)
        // Permanent errors are final; a 500 is retried (up to 3 tries) and nearly always succeeds.
        #expect(snapshot.accepted + snapshot.rejected.values.reduce(0, +) == 10_000)
        #expect(snapshot.rejected[.unregistered] == outcome.sink.rejected[.unregistered])
        #expect(snapshot.rejected[.badDeviceToken] == outcome.sink.rejected[.badDeviceToken])
        let serverErrors = outcome.sink.rejected[.internalServerError] ?? 0
        #expect(serverErrors > 0)
        #expect(snapshot.retries == serverErrors - (snapshot.rejected[.internalServerError] ?? 0))
        #expect(outcome.reconciliation.agrees, "\(outcome.reconciliation.differences)")
    }

    @Test func goAwayAfterRequestsIsSurvivedOnNewConnections() throws {
        var scenario = SinkScenario()
        scenario.faults.goAwayAfterRequests = 700
        let outcome = try Self.send(10_000, scenario: scenario)
        #expect(outcome.snapshot.accepted == 10_000)
        #expect(outcome.snapshot.connectionsOpened >= 10_000 / 700)
        #expect(outcome.reconciliation.agrees, "\(outcome.reconciliation.differences)")
        #expect(outcome.snapshot.digest == (try Self.expectedDigest(10_000)))
    }

    @Test func abruptClosesAreSurvivedAndNothingIsCountedTwice() throws {
        var scenario = SinkScenario()
        scenario.faults.closeAfterRequests = 900
        let outcome = try Self.send(10_000, scenario: scenario) { $0.shape.maxAttempts = 10 }
        #expect(outcome.snapshot.accepted == 10_000)
        #expect(outcome.snapshot.failed.isEmpty)
        #expect(outcome.snapshot.retries > 0)
        #expect(outcome.reconciliation.agrees, "\(outcome.reconciliation.differences)")
        #expect(outcome.snapshot.digest == (try Self.expectedDigest(10_000)))
    }

    @Test func unansweredStreamsTimeOutAndAreSentAgain() throws {
        var scenario = SinkScenario()
        scenario.faults.unansweredShare = 0.02
        // A timeout well above the sink's answer times, even on a busy machine: an answer that
        // comes after the sender gave up is counted by the sink only (a true difference).
        let outcome = try Self.send(4_000, scenario: scenario) {
            $0.shape.streamTimeout = .seconds(2)
            $0.shape.maxAttempts = 6
            $0.shape.retryBackoff = .milliseconds(5)
        }
        #expect(outcome.snapshot.accepted == 4_000)
        #expect(outcome.snapshot.retries > 0)
        #expect(outcome.sink.requests > 4_000)
        #expect(outcome.reconciliation.agrees, "\(outcome.reconciliation.differences)")
    }

    @Test func whatCannotBeDeliveredFailsWithItsCause() throws {
        // Every request is left unanswered: each token times out twice, then fails.
        var scenario = SinkScenario()
        scenario.faults.unansweredShare = 1
        let outcome = try Self.send(50, scenario: scenario) {
            $0.shape.streamTimeout = .milliseconds(200)
            $0.shape.maxAttempts = 2
            $0.shape.retryBackoff = .milliseconds(5)
        }
        #expect(outcome.snapshot.failed == [.timeout: 50])
        #expect(outcome.snapshot.sent == 50)
        #expect(outcome.snapshot.requests == 100)
        #expect(outcome.reconciliation.agrees)
    }

    @Test func noServerMeansTheRunGivesUpWithConnectionLost() throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        defer { try? group.syncShutdownGracefully() }
        let tokens = try TokenStream(.generated(TokenGenerator(count: 100, seed: 1)))
        var configuration = LoadConfiguration(
            host: "127.0.0.1",
            port: freePort(),
            headers: NotificationHeaders(topic: "com.example.app"),
            encoder: PayloadEncoder(template: try PayloadTemplate(json: Array(Self.poll.utf8)))
        )
        configuration.shape.connections = 1
        configuration.shape.deadline = .seconds(60)
        let report = LoadEngine(configuration: configuration, tokens: tokens, group: group).run()
        #expect(report.abandoned?.contains("in a row without progress") == true)
        #expect(report.snapshot.failed == [.connectionLost: 100])
        #expect(report.snapshot.accepted == 0)
    }
}
