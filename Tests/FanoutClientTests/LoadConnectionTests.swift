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

/// A load connection's handling of each answer and fault the mock APNs injects — retries,
/// GOAWAY, abrupt closes, unanswered streams, undeliverable notifications — seen end to end:
/// one outcome per token, and sender and sink agree.
@Suite(.serialized) struct LoadConnectionTests {
    /// `count` notifications to a sink that leaves `share` of the requests unanswered; each
    /// stream given up after `timeout`, a token tried at most `attempts` times, 5 ms apart.
    static func sendUnanswered(
        _ count: UInt64,
        share: Double,
        timeout: Duration,
        attempts: Int
    ) throws -> SinkRun.Outcome {
        var scenario = SinkScenario()
        scenario.faults.unansweredShare = share
        return try SinkRun.send(count, scenario: scenario) {
            $0.shape.streamTimeout = timeout
            $0.shape.maxAttempts = attempts
            $0.shape.retryBackoff = .milliseconds(5)
        }
    }

    @Test func errorsEndInOneOutcomeEachAndRetryableOnesAreRetried() throws {
        var scenario = SinkScenario()
        scenario.errors = [(.unregistered, 0.05), (.badDeviceToken, 0.02), (.internalServerError, 0.05)]
        let outcome = try SinkRun.send(10_000, scenario: scenario) { $0.shape.retryBackoff = .milliseconds(5) }
        let snapshot = outcome.snapshot
        #expect(snapshot.sent == 10_000)
        #expect(snapshot.failed.isEmpty)
        // Permanent errors are final; a 500 is retried (up to 3 tries) and nearly always succeeds.
        #expect(snapshot.accepted + snapshot.rejected.values.reduce(0, +) == 10_000)
        #expect(snapshot.rejected[.apns(.unregistered)] == outcome.sink.rejected[.unregistered])
        #expect(snapshot.rejected[.apns(.badDeviceToken)] == outcome.sink.rejected[.badDeviceToken])
        let serverErrors = outcome.sink.rejected[.internalServerError] ?? 0
        #expect(serverErrors > 0)
        #expect(snapshot.retries == serverErrors - (snapshot.rejected[.apns(.internalServerError)] ?? 0))
        #expect(outcome.reconciliation.agrees, "\(outcome.reconciliation.differences)")
    }

    @Test func goAwayAfterRequestsIsSurvivedOnNewConnections() throws {
        var scenario = SinkScenario()
        scenario.faults.goAwayAfterRequests = 700
        let outcome = try SinkRun.send(10_000, scenario: scenario)
        #expect(outcome.snapshot.accepted == 10_000)
        #expect(outcome.snapshot.connectionsOpened >= 10_000 / 700)
        #expect(outcome.reconciliation.agrees, "\(outcome.reconciliation.differences)")
        // Every request is in a field: the streams past each GOAWAY's last were never processed
        // and went again as `resent` — the sink saw every other request once.
        let snapshot = outcome.snapshot
        #expect(snapshot.resent > 0)
        #expect(snapshot.requests == snapshot.sent + snapshot.retries + snapshot.resent)
        #expect(outcome.sink.requests == snapshot.requests - snapshot.resent)
        #expect(outcome.snapshot.digest == (try SinkRun.expectedDigest(10_000)))
    }

    @Test func abruptClosesAreSurvivedAndNothingIsCountedTwice() throws {
        var scenario = SinkScenario()
        scenario.faults.closeAfterRequests = 900
        let outcome = try SinkRun.send(10_000, scenario: scenario) { $0.shape.maxAttempts = 10 }
        #expect(outcome.snapshot.accepted == 10_000)
        #expect(outcome.snapshot.failed.isEmpty)
        #expect(outcome.snapshot.retries > 0)
        #expect(outcome.reconciliation.agrees, "\(outcome.reconciliation.differences)")
        #expect(outcome.snapshot.digest == (try SinkRun.expectedDigest(10_000)))
    }

    @Test func unansweredStreamsTimeOutAndAreSentAgain() throws {
        // A timeout well above the sink's answer times, even on a busy machine: an answer that
        // comes after the sender gave up is counted by the sink only (a true difference).
        let outcome = try Self.sendUnanswered(4_000, share: 0.02, timeout: .seconds(2), attempts: 6)
        #expect(outcome.snapshot.accepted == 4_000)
        #expect(outcome.snapshot.retries > 0)
        #expect(outcome.sink.requests > 4_000)
        #expect(outcome.reconciliation.agrees, "\(outcome.reconciliation.differences)")
    }

    @Test func whatCannotBeDeliveredFailsWithItsCause() throws {
        // Every request is left unanswered: each token times out twice, then fails.
        let outcome = try Self.sendUnanswered(50, share: 1, timeout: .milliseconds(200), attempts: 2)
        #expect(outcome.snapshot.failed == [.timeout: 50])
        #expect(outcome.snapshot.sent == 50)
        #expect(outcome.snapshot.requests == 100)
        #expect(outcome.reconciliation.agrees)
    }
}
