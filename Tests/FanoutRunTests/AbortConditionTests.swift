import FanoutClient
import FanoutReport
import FanoutRun
import Testing

/// `--abort-on` read in the gate's grammar: what each condition measures, over which window,
/// and the conditions a run cannot judge while it goes refused with the reason.
@Suite struct AbortConditionTests {
    @Test func conditionsReadAsTheGateReadsThem() throws {
        let p99 = try AbortCondition(parsing: "p99 > 200ms")
        #expect(p99.measure == .latency(percentile: 99))
        #expect(p99.comparison == .greater && p99.limit == 200 && p99.windowSeconds == 10)
        let own = try AbortCondition(parsing: "window(5s).max >= 1s", window: .seconds(30))
        #expect(own.measure == .latency(percentile: 100) && own.limit == 1000 && own.windowSeconds == 5)
        let share = try AbortCondition(parsing: "errors > 1%", window: .seconds(20))
        #expect(share.isShare && share.limit == 0.01 && share.windowSeconds == 20 && share.unit == "%")
        let reason = try AbortCondition(parsing: "rejected.TooManyRequests >= 10")
        #expect(reason.measure == .rejected(.apns(.tooManyRequests)) && !reason.isShare && reason.limit == 10)
        let floor = try AbortCondition(parsing: "throughput < 1000/s")
        #expect(floor.measure == .throughput && floor.unit == "/s")
    }

    @Test func whatARunCannotJudgeWhileItGoesIsRefused() {
        #expect(throws: ThresholdError.self) { try AbortCondition(parsing: "violations > 0") }
        #expect(throws: ThresholdError.self) { try AbortCondition(parsing: "p99 > baseline + 10%") }
        #expect(throws: ThresholdError.self) { try AbortCondition(parsing: "p99 > 1s", window: .milliseconds(1500)) }
        do {
            _ = try AbortCondition(parsing: "broadcast.p99 > 1s")
            Issue.record("a broadcast's figure was taken")
        } catch {
            #expect(error.kind == .metric)
            #expect(
                error.description
                    == "broadcast.p99 > 1s: broadcast.p99 is known only when the run has ended; --abort-on takes "
                    + "p50, p90, p99, p99.9, p99.99, max, throughput, lag, sent, errors, rejected, failed, "
                    + "rejected.REASON, failed.CAUSE and window(LENGTH).PERCENTILE",
                "\(error)"
            )
        }
    }
}
