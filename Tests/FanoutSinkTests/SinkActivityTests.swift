import FanoutListening
import NIOCore
import NIOPosix
import Testing

@testable import FanoutSink

/// What the APNs sink's counts signal to the job watching them for its ends (`--expect`,
/// `--idle-exit`, `--expect-tokens`): the first requests counted, the accepted count `--expect`
/// asked for, the expected tokens complete — and not every addition, whose signal woke the
/// watcher's task on another thread each time. Each wait's deadline has passed when it starts,
/// so a wait ends at once either way: it says whether a signal came before it, never how soon.
@Suite struct SinkActivityTests {
    static func counts(requests: Int, accepted: Int) -> SinkCounts {
        var counts = SinkCounts()
        counts.requests = requests
        counts.accepted = accepted
        return counts
    }

    @Test func theFirstCountAndTheAskedAcceptanceSignalAndNoOtherAddition() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let loop = group.next()
        let statistics = SinkStatistics()
        func signalled() async -> Bool { await statistics.changes.wait(until: .now(), on: loop) == .signalled }

        #expect(statistics.lastRequestUptime == nil)
        statistics.add(Self.counts(requests: 0, accepted: 0), at: 10)
        #expect(statistics.lastRequestUptime == nil, "an addition that counted no request")
        #expect(await signalled() == false)
        statistics.add(Self.counts(requests: 3, accepted: 2), at: 42)
        #expect(await signalled(), "the first requests counted")
        #expect(statistics.requestCount == 3, "counted before the signal")
        #expect(statistics.lastRequestUptime == 42)
        // Connections add out of order: only a later time moves it.
        statistics.add(Self.counts(requests: 1, accepted: 1), at: 40)
        #expect(statistics.lastRequestUptime == 42)
        #expect(await signalled() == false, "a later addition, no mark asked")
        statistics.add(Self.counts(requests: 1, accepted: 0), at: 50)
        #expect(statistics.lastRequestUptime == 50)
        #expect(statistics.acceptedCount == 3)

        statistics.signal(whenAccepted: 10)
        statistics.add(Self.counts(requests: 256, accepted: 6), at: 60)
        #expect(statistics.acceptedCount == 9)
        #expect(await signalled() == false, "nine accepted of ten")
        // An addition of many that passes the mark, not only one that lands on it.
        statistics.add(Self.counts(requests: 256, accepted: 5), at: 70)
        #expect(statistics.acceptedCount == 14)
        #expect(await signalled(), "the mark passed")
        statistics.add(Self.counts(requests: 256, accepted: 5), at: 80)
        #expect(await signalled() == false, "past the mark: no signal for each addition")

        // A mark asked for below the count already added is never signalled: the watcher reads
        // the count after storing the mark, and ends on what it reads.
        statistics.signal(whenAccepted: 5)
        statistics.add(Self.counts(requests: 1, accepted: 1), at: 90)
        #expect(await signalled() == false)
        #expect(statistics.acceptedCount >= 5)

        statistics.expectedTokensCompleted()
        #expect(await signalled(), "the expected tokens complete")
        #expect(statistics.requestCount == 774)
        try await group.shutdownGracefully()
    }
}
