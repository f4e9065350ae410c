import FanoutAPNs
import FanoutMeasure
import Foundation
import Testing

@testable import FanoutAssembly
@testable import FanoutClient
@testable import FanoutReport

/// `/live.json` built from a sender's progress and snapshot: its count of finished is the
/// snapshot's, as its outcomes and seconds are (issue 64: it said 1,024 finished beside a first
/// second of 1,992, the progress read earlier and handed over every 256 outcomes).
@Suite struct LiveDocumentSnapshotTests {
    @Test func finishedIsTheSnapshotsCountNotTheEarlierProgresss() {
        let snapshot = LoadSnapshot(
            requests: 1_992,
            accepted: 1_980,
            rejected: [.apns(.unregistered): 10],
            failed: [.timeout: 2],
            skipped: [:],
            retries: 0,
            answeredOK: 1_980,
            answers: [:],
            digest: NotificationDigest(),
            connectionsOpened: 4,
            connectionFailures: 0,
            unscheduled: 0,
            latency: LoadStatistics.makeHistogram(),
            lag: LoadStatistics.makeHistogram(),
            intervals: []
        )
        let early = RunProgress(
            elapsed: .seconds(1),
            finished: 1_024,
            ratePerSecond: 1_024,
            latency: LoadStatistics.makeHistogram()
        )
        let document = LiveDocument(command: "run", progress: early, snapshot: snapshot)
        #expect(document.finished == 1_992)
        let outcomes: Int = document.rejected.values.reduce(0, +) + document.failed.values.reduce(0, +)
        #expect(document.accepted + outcomes == 1_992)
        // A progress ahead of the snapshot (counts handed over between the two reads) stands.
        let late = RunProgress(elapsed: .seconds(1), finished: 2_000, ratePerSecond: 2_000, latency: early.latency)
        #expect(LiveDocument(command: "run", progress: late, snapshot: snapshot).finished == 2_000)
    }
}
