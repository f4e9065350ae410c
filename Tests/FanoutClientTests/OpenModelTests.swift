import FanoutAssembly
import FanoutClient
import FanoutReport
import FanoutSink
import FanoutTestSupport
import FanoutTokens
import Foundation
import Histogram
import NIOCore
import Testing

/// The open model against the sink: notifications go out on schedule whatever the server does,
/// and latency counts from when each was due, so a stalled server shows in the percentiles.
@Suite(.serialized) struct OpenModelTests {
    /// Seconds at `percentile` of a latency histogram in microseconds.
    static func seconds(_ histogram: Histogram<UInt64>, at percentile: Double) -> Double {
        Double(percentile >= 100 ? histogram.max : histogram.valueAtPercentile(percentile)) / 1e6
    }

    @Test func aConstantRateSendsExactlyWhatTheScheduleHolds() throws {
        let started = ContinuousClock.now
        let outcome = try SinkRun.send(5_000) {
            $0.shape.model.schedule = try! ArrivalSchedule(rate: 2000, duration: .milliseconds(1500))
        }
        let snapshot = outcome.snapshot
        #expect(snapshot.sent == 3000)
        #expect(snapshot.accepted == 3000)
        // The tokens beyond the schedule that were read are left unsent, not failed.
        #expect(snapshot.failed.isEmpty)
        #expect(snapshot.unscheduled <= 2000)
        #expect(outcome.reconciliation.agrees, "\(outcome.reconciliation.differences)")
        // No ticket is due before its time: the last one is 1.4995 s after the first.
        #expect(ContinuousClock.now - started >= .milliseconds(1499))
        // Every second of the run is there, and the seconds add up to the whole.
        #expect(snapshot.intervals.map(\.completed).reduce(0, +) == 3000)
        #expect(snapshot.intervals.map(\.latencies.totalCount).reduce(0, +) == snapshot.latency.totalCount)
        #expect(snapshot.intervals.map(\.second) == Array(0..<snapshot.intervals.count))
        #expect(snapshot.lag.totalCount == 3000)
        #expect(outcome.report.engineReasons.isEmpty || outcome.report.worstLag > .milliseconds(100))
    }

    @Test func rampsSendTheArrivalsOfEveryStage() throws {
        // 0 → 2000/s over 1 s (1000 arrivals), then 2000/s for 0.5 s (1000).
        let outcome = try SinkRun.send(10_000) {
            $0.shape.model.schedule = try! ArrivalSchedule(
                startRate: 0,
                stages: [.init(duration: .seconds(1), target: 2000), .init(duration: .milliseconds(500), target: 2000)]
            )
        }
        #expect(outcome.snapshot.sent == 2000)
        #expect(outcome.reconciliation.agrees, "\(outcome.reconciliation.differences)")
    }

    /// The schedule ends with the last token of a batch (3 batches of 170 at 1000/s for 510 ms)
    /// over one stream, so that token's answer is the batch's last: it sends the batch back to
    /// the reader, and the connection, done with it, must not touch it when it then finds the
    /// schedule over (it once did: the recycled batch read as empty and the process trapped).
    @Test func aScheduleEndingWithABatchsLastAnswerLeavesTheRecycledBatchAlone() throws {
        let outcome = try SinkRun.send(2_048, connections: 1, streams: 1) {
            $0.shape.model.schedule = try! ArrivalSchedule(rate: 1000, duration: .milliseconds(510))
        }
        #expect(outcome.snapshot.sent == 510)
        #expect(outcome.snapshot.accepted == 510)
        #expect(outcome.reconciliation.agrees, "\(outcome.reconciliation.differences)")
    }

    /// `--start-at`: connections open and exchange SETTINGS at once, but nothing is sent before
    /// the time, and the schedule and the run's seconds count from it. Shard 2 of 3 of
    /// 3000/s for 1 s sends its 1000 arrivals.
    @Test func aStartTimeHoldsEverySendUntilThenAndTheScheduleCountsFromIt() throws {
        let startAt = Date().addingTimeInterval(0.8)
        let whole = try ArrivalSchedule(rate: 3000, duration: .seconds(1))
        let outcome = try SinkRun.send(5_000) {
            $0.shape.model.schedule = whole
            $0.shape.model.shard = try! TokenShard(2, of: 3)
            $0.shape.model.startAt = startAt
        }
        #expect(outcome.snapshot.sent == 1000)
        #expect(outcome.reconciliation.agrees, "\(outcome.reconciliation.differences)")
        #expect(outcome.report.schedule?.description == "shard 2/3 of \(whole)")
        #expect(outcome.report.scheduledStart == startAt)
        #expect(abs(outcome.report.started.timeIntervalSince(startAt)) < 0.001)
        let firstSend = try #require(outcome.report.firstSend)
        #expect(firstSend >= startAt.addingTimeInterval(-0.000_1), "first send \(firstSend), start \(startAt)")
        // The wait before the start is not the run's: its seconds begin at the start.
        #expect(outcome.report.elapsed < .seconds(30))
        #expect(outcome.snapshot.intervals.first?.second == 0)
    }

    @Test func theClosedModelWaitsForItsStartTimeToo() throws {
        let startAt = Date().addingTimeInterval(0.5)
        let outcome = try SinkRun.send(2_000) { $0.shape.model.startAt = startAt }
        #expect(outcome.snapshot.accepted == 2000)
        let firstSend = try #require(outcome.report.firstSend)
        #expect(firstSend >= startAt.addingTimeInterval(-0.000_1), "first send \(firstSend), start \(startAt)")
    }

    /// 500 tokens for a schedule of 60,000 arrivals: the run ends with the tokens, and the
    /// 59,500 arrivals left are counted as having had no token, from about 0.5 s in — not sent,
    /// not served late, not hidden.
    @Test func fewerTokensThanTheScheduleEndTheRunWithTheTokensAndCountTheArrivalsLeft() throws {
        let outcome = try SinkRun.send(500) {
            $0.shape.model.schedule = try! ArrivalSchedule(rate: 1000, duration: .seconds(60))
        }
        #expect(outcome.snapshot.sent == 500)
        #expect(outcome.snapshot.unscheduled == 0)
        let ranOut = try #require(outcome.report.tokensRanOut)
        #expect(ranOut.arrivals == 59_500 && ranOut.planned == 60_000)
        #expect(ranOut.at == .microseconds(500_000))
        #expect(!outcome.report.cancelled)
        #expect(outcome.report.elapsed < .seconds(30))
    }

    /// Physics: a sink holding each answer 50 ms over 1 connection × 5 streams carries 100/s.
    /// Offered half that, the sends end with the schedule; offered twice that, the 200 arrivals
    /// take about 2 s to go out, at the streams' rate, never above it (a loaded machine only
    /// slows them), and the queue is the latency.
    @Test func theSendsKeepTheScheduleBelowCapacityAndTheStreamsRateAboveIt() throws {
        var scenario = SinkScenario()
        scenario.latency = .fixed(.milliseconds(50))
        let below = try SinkRun.send(1_000, scenario: scenario, connections: 1, streams: 5, sinkStreams: 5) {
            $0.shape.model.schedule = try! ArrivalSchedule(rate: 50, duration: .seconds(1))
            $0.shape.model.maxLag = .seconds(1)
        }
        let kept = try #require(below.report.sendsEnded)
        #expect(below.snapshot.sent == 50)
        // The last arrival is due at 0.98 s and goes out then (a free stream waits for it).
        #expect(kept >= .milliseconds(980) && kept < .milliseconds(1_030 + 100), "\(kept)")
        let above = try SinkRun.send(1_000, scenario: scenario, connections: 1, streams: 5, sinkStreams: 5) {
            $0.shape.model.schedule = try! ArrivalSchedule(rate: 200, duration: .seconds(1))
            $0.shape.model.maxLag = .seconds(1)
        }
        #expect(above.snapshot.sent == 200)
        #expect(above.report.backlogCut == nil)
        let sends = try #require(above.report.sendsEnded)
        let carried = 199 / sends.seconds
        #expect(carried > 60 && carried <= 105, "\(carried)/s over \(sends)")
        #expect(above.snapshot.streamWaits.mostStreams == 5)
    }

    /// Offered 1,000/s for 2 s against the same 100/s with --max-backlog 300 ms: each arrival
    /// waits 9 ms longer than the one before, so about 0.35 s in one has waited past 300 ms and
    /// the schedule is cut there. The run ends with what was in flight, long before the
    /// schedule's 2 s; every arrival is sent or counted as cut, and the run is invalid.
    @Test func aQueuePastTheBacklogLimitCutsTheScheduleAndEndsTheRun() throws {
        var scenario = SinkScenario()
        scenario.latency = .fixed(.milliseconds(50))
        let outcome = try SinkRun.send(4_000, scenario: scenario, connections: 1, streams: 5, sinkStreams: 5) {
            $0.shape.model.schedule = try! ArrivalSchedule(rate: 1000, duration: .seconds(2))
            $0.shape.model.maxLag = .seconds(1)
            $0.shape.model.maxBacklog = .milliseconds(300)
        }
        let cut = try #require(outcome.report.backlogCut)
        #expect(cut.wait > .milliseconds(300) && cut.limit == .milliseconds(300))
        #expect(cut.planned == 2000)
        #expect(Int(cut.arrivals ?? 0) + outcome.snapshot.sent == 2000, "\(cut) sent \(outcome.snapshot.sent)")
        #expect(outcome.snapshot.sent >= 5 && outcome.snapshot.sent < 200, "\(outcome.snapshot.sent)")
        #expect(outcome.snapshot.accepted == outcome.snapshot.sent)
        #expect(outcome.report.sendsEnded == cut.after)
        #expect(outcome.report.tokensRanOut == nil)
        #expect(outcome.report.elapsed < .milliseconds(1_900), "\(outcome.report.elapsed)")
        #expect(outcome.reconciliation.agrees, "\(outcome.reconciliation.differences)")
        let reasons = outcome.report.engineReasons
        #expect(reasons.contains { if case .backlogExceeded = $0 { true } else { false } }, "\(reasons)")
        #expect(!outcome.report.generatorFellBehind)
    }

    /// As many tokens as arrivals: none is without a token.
    @Test func exactlyAsManyTokensAsArrivalsLeaveNoneWithoutAToken() throws {
        let outcome = try SinkRun.send(600) {
            $0.shape.model.schedule = try! ArrivalSchedule(rate: 1000, duration: .milliseconds(600))
        }
        #expect(outcome.snapshot.sent == 600)
        #expect(outcome.report.tokensRanOut == nil)
    }

    /// Tokens are shared to the last, whatever the batch size. A sink answering after 50 ms
    /// over 2 connections × 20 streams carries 800/s; 600/s (75%) for 2 s offers 1,200 tokens.
    /// In batches of 1,024 one connection takes 1,024 and the other 176: without sharing the
    /// second ran dry after 0.6 s, its tickets went to the first, whose 20 streams carry 400/s,
    /// and the queue grew for the rest of the run (p99 in the hundreds of ms). Shared, every
    /// second measures the sink's 50 ms. Batches of 1 and 7 tokens check the small end.
    @Test(arguments: [1, 7, 1024])
    func tokensAreSharedToTheLastWhateverTheBatchSize(batchTokens: Int) throws {
        var scenario = SinkScenario()
        scenario.latency = .fixed(.milliseconds(50))
        let outcome = try SinkRun.send(1_200, scenario: scenario, connections: 2, streams: 20, batchTokens: batchTokens)
        {
            $0.shape.model.schedule = try! ArrivalSchedule(rate: 600, duration: .seconds(2))
            $0.shape.model.maxLag = .seconds(1)
        }
        let snapshot = outcome.snapshot
        #expect(snapshot.accepted == 1_200)
        #expect(outcome.report.tokensRanOut == nil)
        #expect(outcome.reconciliation.agrees, "\(outcome.reconciliation.differences)")
        // The physics: 50 ms, plus what the sender and sink add in a debug build beside other
        // suites (under 0.1 s on an idle machine, 0.16 s once on a loaded one). Without sharing,
        // batches of 1,024 gave seconds with p99 0.25–0.99 s (tried): one connection's 20
        // streams carry 400/s of the 600/s from 0.6 s on, 280 queued by the end, whose waits
        // (0.7 s) are the run's p99. The bound sits between the two, not at the idle machine.
        let p99 = Self.seconds(snapshot.latency, at: 99)
        #expect(p99 >= 0.05 && p99 < 0.4, "p99 \(p99) s; seconds: \(snapshot.intervals.map(\.p99))")
    }

    /// The sink holds every answer for 0.5 s in each 2 s (from its start) while notifications
    /// are due at 1000/s for D = 3.8 s, one stall inside. A notification due at t inside the
    /// stall is answered at its end, S − t later, so P(latency > x) = (S − x) / D for x < S:
    /// the q-th percentile is S − (1 − q)·D (p95 0.31 s, p99 0.462 s, max S) while p50 sees no
    /// stall. Only 40 streams are open: during the stall the other 460 notifications due wait
    /// for a stream, and their latency still counts from when they were due (timed from their
    /// actual send, only the 40 would show the stall, and p95 would be milliseconds).
    /// The same from a token file read as shard 2 of 2 in batches of 1,024: 2,400 lines, of
    /// which this shard's 1,200 go out at its 600/s of the whole schedule's 1,200/s.
    @Test func tokensFromAFileShardAreSharedToTheLastToo() throws {
        let path = NSTemporaryDirectory() + "fanout-shared-\(UUID().uuidString).txt"
        defer { try? FileManager.default.removeItem(atPath: path) }
        let generator = TokenGenerator(count: 2_400, seed: 5)
        try (0..<2_400).map { generator.token($0) + "\n" }.joined().write(
            toFile: path,
            atomically: true,
            encoding: .utf8
        )
        var scenario = SinkScenario()
        scenario.latency = .fixed(.milliseconds(50))
        let shard = try TokenShard(2, of: 2)
        let outcome = try SinkRun.send(
            0,
            scenario: scenario,
            connections: 2,
            streams: 20,
            batchTokens: 1024,
            source: .file(path),
            shard: shard
        ) {
            $0.shape.model.schedule = try! ArrivalSchedule(rate: 1200, duration: .seconds(2))
            $0.shape.model.shard = shard
            $0.shape.model.maxLag = .seconds(1)
        }
        let snapshot = outcome.snapshot
        #expect(snapshot.accepted == 1_200)
        #expect(outcome.report.tokensRanOut == nil)
        #expect(outcome.reconciliation.agrees, "\(outcome.reconciliation.differences)")
        for interval in snapshot.intervals where interval.completed > 0 {
            #expect(Double(interval.p99) / 1e6 < 0.15, "second \(interval.second): p99 \(interval.p99) µs")
        }
    }

    @Test func aStallShowsInThePercentilesAsTheoryPredicts() throws {
        var scenario = SinkScenario()
        scenario.stall = (every: .seconds(2), length: .milliseconds(500))
        let stall = 0.5
        let length = 3.8
        func predicted(_ q: Double) -> Double { stall - (1 - q) * length }
        // The theory is a floor: nothing due in the stall can be answered before its end, so
        // every run must reach it (timed from the actual send instead, p95 falls to
        // milliseconds). On top of it come the sink's and the sender's own time and, after the
        // stall, draining the 460 waiting through 40 streams: tens of ms on a quiet machine,
        // but another tenant of this shared one can add hundreds. Noise only ever adds
        // latency, so the ceiling (which a stall counted twice would break) must hold in one
        // of up to three runs.
        var withinCeiling = false
        var seen: [String] = []
        for _ in 0..<3 where !withinCeiling {
            let outcome = try SinkRun.send(10_000, scenario: scenario, connections: 2, streams: 20) {
                $0.shape.model.schedule = try! ArrivalSchedule(rate: 1000, duration: .milliseconds(3800))
                $0.shape.model.maxLag = .seconds(1)
            }
            let latency = outcome.snapshot.latency
            #expect(outcome.snapshot.accepted == 3800)
            #expect(latency.totalCount == 3800)
            #expect(outcome.reconciliation.agrees, "\(outcome.reconciliation.differences)")
            let p95 = Self.seconds(latency, at: 95)
            let p99 = Self.seconds(latency, at: 99)
            let max = Self.seconds(latency, at: 100)
            seen.append(
                String(format: "p50 %.3f p95 %.3f p99 %.3f max %.3f", Self.seconds(latency, at: 50), p95, p99, max)
            )
            #expect(p95 > predicted(0.95) - 0.03, "p95 \(p95) s below the floor")
            #expect(p99 > predicted(0.99) - 0.03, "p99 \(p99) s below the floor")
            #expect(max > stall - 0.03, "max \(max) s below the stall")
            // The sink says the stall was the scenario's, not its own: it held the answers due in
            // the stall up to its length as told (only those: the scenario has no latency), and
            // wrote each about when it fell due.
            let delays = outcome.sink.ownDelays
            #expect(delays.lateness.count == 3800, "\(delays)")
            #expect(Double(delays.injected.max) / 1e6 < stall + 0.03, "held up to \(delays.injected.max) µs")
            #expect(Double(delays.lateness.max) / 1e6 < stall / 2, "the sink's own lateness \(delays.lateness.max) µs")
            // The longest hold is the stall's length for a request that arrives as it begins;
            // a sender descheduled then (it was, once, beside the other suites: 0.31 s) sends
            // the first one later, so this is a floor that noise lowers: one run must reach it.
            let heldTheStall = Double(delays.injected.max) / 1e6 > stall - 0.03
            seen.append("sink held up to \(delays.injected.max) µs")
            withinCeiling =
                Self.seconds(latency, at: 50) < 0.1 && p95 < predicted(0.95) + 0.12 && p99 < predicted(0.99) + 0.12
                && max < stall + 0.15 && heldTheStall
        }
        #expect(withinCeiling, "no run within the ceiling with the stall held whole: \(seen)")
    }

    @Test func aGeneratorThatFallsBehindMakesTheRunInvalid() throws {
        // The sender's only event loop is blocked for 300 ms once 200 notifications are done:
        // its connection has streams free but cannot send what falls due.
        let outcome = try SinkRun.send(10_000, connections: 1) {
            $0.shape.model.schedule = try! ArrivalSchedule(rate: 1000, duration: .seconds(2))
            $0.shape.model.maxLag = .milliseconds(100)
        } beforeRun: { engine, group in
            let loop = group.next()
            Thread.detachNewThread {
                poll(timeout: .seconds(60), every: .milliseconds(1)) { engine.statistics.finished >= 200 }
                // Blocking the loop is the behaviour under test: 300 ms, three times --max-lag.
                loop.execute { blockThread(for: .milliseconds(300)) }
            }
        }
        #expect(outcome.snapshot.sent == 2000)
        #expect(outcome.report.worstLag >= .milliseconds(250), "\(outcome.report.worstLag)")
        guard case .generatorBehind(let lag, let limit) = outcome.report.engineReasons.first else {
            Issue.record("the run's reasons name no generator lag: \(outcome.report.engineReasons)")
            return
        }
        #expect(lag >= 250 && limit == 100)
        // The notifications due while it was blocked carry the wait in their latency.
        #expect(Self.seconds(outcome.snapshot.latency, at: 100) >= 0.25)
    }

    @Test func aWarmUpIsLeftOutOfTheLatencies() throws {
        let outcome = try SinkRun.send(10_000) {
            $0.shape.model.schedule = try! ArrivalSchedule(rate: 1000, duration: .seconds(2))
            $0.shape.model.warmUp = .seconds(1)
        }
        let snapshot = outcome.snapshot
        #expect(snapshot.sent == 2000)
        // Those due in the schedule's first second are out (the warm-up counts from the
        // schedule's start, not the engine's: `WarmUpOrigin`): the other 1,000, less those of
        // the first pacing window after it that went out early, whose latency counts from their
        // send (the window is at most 12.8 ms: 13 arrivals at 1,000/s).
        #expect(
            snapshot.latency.totalCount >= 1000 - 13 && snapshot.latency.totalCount <= 1000,
            "\(snapshot.latency.totalCount)"
        )
        #expect(snapshot.intervals.map(\.completed).reduce(0, +) == 2000)
    }

    @Test func theClosedModelStopsStartingTokensAfterItsDuration() throws {
        let outcome = try SinkRun.send(50_000_000, streams: 10) {
            $0.shape.model.duration = .milliseconds(500)
        }
        let snapshot = outcome.snapshot
        #expect(snapshot.sent > 0 && snapshot.sent < 50_000_000)
        #expect(snapshot.failed.isEmpty)
        #expect(snapshot.accepted == snapshot.sent)
        #expect(!outcome.report.cancelled)
        #expect(outcome.report.elapsed < .seconds(20))
        #expect(outcome.reconciliation.agrees, "\(outcome.reconciliation.differences)")
    }
}
