import FanoutListening
import NIOCore
import NIOPosix
import Testing

@testable import FanoutFCMSink

/// What an FCM sink's counts signal to the job watching them for its ends: the first request
/// counted, and the count `--expect` asked for, reached by sends bound for a device only.
/// Each wait's deadline has passed when it starts, so a wait ends at once either way: it says
/// whether a signal came before it, never how soon.
@Suite struct FCMSinkStatisticsTests {
    @Test func theFirstRequestAndTheExpectedAcceptanceSignalAndNothingElse() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let loop = group.next()
        let statistics = FCMSinkStatistics()
        func signalled() async -> Bool { await statistics.changes.wait(until: .now(), on: loop) == .signalled }

        #expect(statistics.lastRequestUptime == nil)
        statistics.busy(until: 42)
        statistics.count(.unauthenticated, over: .http1)
        #expect(await signalled(), "the first request counted")
        #expect(statistics.lastRequestUptime == 42)
        // Connections tell their times out of order: only a later one moves it.
        statistics.busy(until: 40)
        #expect(statistics.lastRequestUptime == 42)
        statistics.busy(until: 50)
        #expect(statistics.lastRequestUptime == 50)
        statistics.signal(whenAccepted: 3)
        statistics.count(.delivered, over: .http2)
        statistics.count(.validated, over: .http2)
        statistics.count(.unregistered, over: .http2)
        statistics.count(.held, over: .http2)
        #expect(statistics.acceptedCount == 2)
        #expect(await signalled() == false, "two accepted of three; a validation is none")
        statistics.count(.delivered, over: .http1)
        #expect(statistics.acceptedCount == 3)
        #expect(await signalled(), "the third accepted")
        statistics.count(.delivered, over: .http1)
        #expect(await signalled() == false, "past the mark: no signal for each")
        #expect(statistics.requestCount == 7)
        for status in [200, 200, 404, 418] { statistics.answered(status: status) }
        #expect(statistics.byStatus == [200: 2, 404: 1, 0: 1], "0: a status the table has not")
        try await group.shutdownGracefully()
    }
}
