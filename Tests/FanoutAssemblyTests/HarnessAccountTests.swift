import FanoutAPNs
import FanoutMeasure
import Foundation
import Testing

@testable import FanoutAssembly
@testable import FanoutClient

/// `HarnessAccount` alone, with its delays set by hand: which part is the largest, the harness's
/// own p99 (measured or a lower bound), its share of the measured p99, when the run is
/// harness-bound, and the advice it gives.
@Suite struct HarnessAccountTests {
    /// An account of a run measured at p99 `measuredP99` µs, its sender's loop lag and answer
    /// reading at the p99s given, no timed answers and no embedded sink.
    static func account(
        measuredP99: UInt64 = 1_000,
        loopLag: UInt64 = 300,
        readDelay: UInt64 = 100,
        maxShare: Double = 0.2
    ) -> HarnessAccount {
        let snapshot = LoadSnapshot(
            requests: 0,
            accepted: 0,
            rejected: [:],
            failed: [:],
            skipped: [:],
            retries: 0,
            answeredOK: 0,
            answers: [:],
            digest: NotificationDigest(),
            connectionsOpened: 1,
            connectionFailures: 0,
            unscheduled: 0,
            latency: LoadStatistics.makeHistogram(),
            lag: LoadStatistics.makeHistogram(),
            intervals: []
        )
        let report = LoadEngine.Report(
            snapshot: snapshot,
            elapsed: .seconds(1),
            tokens: nil,
            cancelled: false,
            gaveUp: nil,
            started: Date(timeIntervalSince1970: 1_795_330_800),
            schedule: nil,
            warmUp: .zero,
            maxLag: .milliseconds(100),
            loopDelays: [LoopDelays()]
        )
        var account = HarnessAccount(report: report, sink: nil, maxShare: maxShare, cores: 4)
        account.measuredP99 = measuredP99
        account.senderLoopLag = DelayPercentiles(count: 100, p50: loopLag / 2, p99: loopLag, max: loopLag * 2)
        account.readDelay = DelayPercentiles(count: 1_000, p50: readDelay / 2, p99: readDelay, max: readDelay * 2)
        account.senderUtilisation = [0.5]
        return account
    }

    /// Without timed answers the own delay is the largest part's p99: a lower bound, said so.
    @Test func withoutTimedAnswersTheLargestPartIsALowerBound() {
        let account = Self.account()
        #expect(account.sendLateness == nil, "the closed model has no send lateness")
        #expect(account.parts.map(\.part) == [.senderLoopLag, .readDelay])
        #expect(account.largest.part == .senderLoopLag)
        #expect(!account.ownIsMeasured)
        #expect(account.ownP99 == 300)
        #expect(account.share == 0.3)
        #expect(account.isBound)
        #expect(
            account.lines.first
                == "harness: its own delay at p99 is at least 0.30 ms, 30% of the measured p99 (the sender's event-loop lag, a lower bound)"
        )
    }

    /// Timed answers measure the own delay answer by answer, never below the largest part.
    @Test func timedAnswersMeasureItNeverBelowTheLargestPart() {
        var account = Self.account()
        account.measuredOwn = DelayPercentiles(count: 500, p50: 200, p99: 500, max: 900)
        #expect(account.ownIsMeasured)
        #expect(account.ownP99 == 500)
        account.measuredOwn = DelayPercentiles(count: 500, p50: 50, p99: 120, max: 900)
        #expect(account.ownP99 == 300, "the loop lag's p99 holds for every answer")
        #expect(
            account.lines.first
                == "harness: its own delay at p99 is 0.30 ms, 30% of the measured p99 (500 timed answers' latency less the sink's "
                + "hold; the largest part is the sender's event-loop lag)"
        )
    }

    /// A part's p99 above the measured p99 (the loop's probes against the answers: newcomer
    /// pass 4 read 1.93 ms of loop lag beside a measured p99 of 1.5 ms as a contradiction) is
    /// said to be of its own samples; under it, the parts' line says nothing more.
    @Test func aPartAboveTheMeasuredP99IsSaidToBeOfItsOwnSamples() {
        let above = Self.account(measuredP99: 250, loopLag: 300)
        #expect(
            above.lines[1].hasSuffix(
                " (each part's percentiles are of its own samples, not of the answers: above the measured p99 of 0.25 ms, the share is taken as 100%)"
            ),
            "\(above.lines)"
        )
        #expect(above.share == 1)
        let under = Self.account(measuredP99: 1_000, loopLag: 300)
        #expect(under.lines[1].hasSuffix(under.readDelay.text), "\(under.lines)")
    }

    @Test func theShareIsOfTheMeasuredP99AtMostAllOfIt() {
        #expect(Self.account(measuredP99: 200).share == 1)
        #expect(Self.account(measuredP99: 0).share == 0)
        #expect(!Self.account(measuredP99: 0).isBound)
        #expect(!Self.account(measuredP99: 10_000).isBound, "3% is under the 20% allowed")
        #expect(Self.account(measuredP99: 1_000, maxShare: 0.5).guidance.isEmpty)
    }

    /// One rule, no exception: an embedded sink that answers at once leaves only Fanout's own
    /// delay in the latency, and the run is harness-bound by the rule every run is judged by,
    /// labelled a self-measurement, with what would put an endpoint's time in (issue 64: the
    /// main job said "100% of the measured p99" unflagged while a 25% share elsewhere was).
    @Test func aSelfMeasurementIsBoundByTheSameRuleAndSaysWhatItIs() {
        var account = Self.account(measuredP99: 300)
        account.selfMeasurement = true
        #expect(account.share == 1)
        #expect(account.isBound)
        #expect(account.guidance == [HarnessAccount.endpointTimeAdvice])
        #expect(
            account.lines.suffix(2) == [
                "HARNESS-BOUND, a self-measurement: the embedded sink answers at once (no hold, no wire), so Fanout's own delay is 100% of the measured p99, above --max-harness-share 20%: these figures are Fanout's own ceiling on this machine, not an endpoint's latency",
                "  - " + HarnessAccount.endpointTimeAdvice,
            ],
            "\(account.lines)"
        )
        #expect(account.document.selfMeasurement == true)
        #expect(account.document.bound)
        // Under the share allowed (a lower bound, or a generous --max-harness-share), it is
        // not bound — and still said to be a self-measurement.
        account.maxShare = 1
        #expect(!account.isBound)
        #expect(account.guidance.isEmpty)
        #expect(
            account.lines.last
                == "a self-measurement: the embedded sink answers at once (no hold, no wire), so its latency is Fanout's own"
        )
        // An endpoint's run at the same share is bound by the same test.
        var endpoint = Self.account(measuredP99: 300)
        #expect(endpoint.isBound == true)
        endpoint.maxShare = 1
        #expect(!endpoint.isBound)
    }

    /// A loop is blamed only when its figures say it is behind: the largest part is its own and
    /// its thread was busy most of the time.
    @Test func theAdviceNamesALoopOnlyWhenItIsSaturated() {
        var account = Self.account()
        #expect(account.guidance.first?.hasPrefix("no loop is saturated (the sender's busiest at 50%") == true)
        account.senderUtilisation = [0.9, 0.3]
        #expect(
            account.guidance.first
                == "the sender's loops are behind (busiest at 90% of a core): give it more --threads, or split the run over machines with --shard i/N"
        )
        #expect(account.guidance.last == "or offer a lower rate (--rate), which the harness can serve without queueing")
        // The embedded sink's lateness from the send as the largest part, its loop busy.
        account.senderUtilisation = [0.3]
        account.sink = SinkOwnDelays(
            lateness: DelayPercentiles(count: 100, p50: 100, p99: 200, max: 300),
            fromSend: DelayPercentiles(count: 100, p50: 300, p99: 700, max: 900),
            loopUtilisation: [0.95, 0.95, 0.95, 0.95]
        )
        account.senderThreads = 1
        #expect(account.largest.part == .sinkFromSend)
        #expect(account.guidance.first?.hasPrefix("the sink answers late (busiest loop at 95% of a core)") == true)
        #expect(account.guidance.contains("1 sender and 4 sink loops share 4 cores: each waits for the others"))
    }
}
