import FanoutResults
import FanoutTestSupport
import Foundation
import Testing

@testable import FanoutReport
@testable import FanoutRun

/// `fanout plan --broadcast --verify`: how long a rehearsal lasts, its verdict, and rehearsals
/// run here against the embedded sink — one at the plan's rate, one whose prediction is wrong.
@Suite struct BroadcastVerificationTests {
    /// A plan small enough for a debug build: 100 channels of 1,000 subscribers updated every
    /// second, 20 ms from APNs — 100 broadcasts a second, 100,000 deliveries a second.
    static func plan(channels: UInt64 = 100, every: Duration = .seconds(1)) -> BroadcastPlan {
        var base = CapacityPlan.Question(
            devices: 1,
            deadline: .seconds(1),
            roundTrip: .milliseconds(20),
            coresPerMachine: 1
        )
        base.streams = 100
        return BroadcastPlan(.init(channels: channels, subscribers: 1000, updateEvery: every, base: base))
    }

    /// At least 3 rounds and 300 requests; at most 30 s, the interval scaled down past that.
    @Test(arguments: [
        (100, 10.0, 3, 10.0),  // the plan's own interval: 30 s
        (100, 60.0, 3, 10.0),  // 3 rounds of 60 s would be 180 s: every 10 s, 6× the rate
        (10, 1.0, 30, 1.0),  // 300 requests: 30 rounds of 1 s
        (1, 10.0, 300, 0.1),  // one channel: 300 rounds in 30 s
        (10_000, 0.1, 3, 0.1),  // 30,000 requests in 0.3 s
    ])
    func aRehearsalIsLongEnoughAndShortEnough(channels: Int, every: Double, updates: Int, rehearsed: Double) {
        let rehearsal = BroadcastRehearsal(channels: channels, updateEvery: .milliseconds(Int64(every * 1000)))
        #expect(rehearsal.updates == updates)
        #expect(rehearsal.every == .milliseconds(Int64(rehearsed * 1000)), "\(rehearsal.every)")
        #expect(rehearsal.updates * channels >= BroadcastRehearsal.fewestRequests)
        #expect(rehearsal.every * rehearsal.updates <= BroadcastRehearsal.longest)
    }

    static func verification() -> BroadcastVerification {
        BroadcastVerification(
            channels: 100,
            subscribers: 1000,
            updateEvery: .seconds(60),
            rehearsedEvery: .seconds(10),
            updates: 3,
            predictedRequestRate: 100.0 / 60,
            measuredRequestRate: 100.0 / 60 * 1.09,
            predictedDeliveryRate: 100_000.0 / 60,
            measuredDeliveryRate: 100_000.0 / 60 * 0.92,
            predictedConnections: 1,
            measuredConnections: 1,
            problems: []
        )
    }

    /// Within 10% each, one connection as planned, everything accounted for: passed; any one of
    /// them off: not, with the row or the problem said.
    @Test func aBroadcastVerificationPassesWithin10Percent() {
        var verification = Self.verification()
        #expect(verification.passed, "\(verification.text)")
        #expect(verification.scale == 6)
        #expect(
            lines(of: verification.text, keyed: "  the plan's ")
                == [
                    "  the plan's 60 s scaled down 6× to keep the rehearsal short: the rates measured are divided by that "
                        + "to compare with the plan's"
                ],
            "\(verification.text)"
        )
        let rows = RehearsalRow.rows(verification.text)
        #expect(
            rows["broadcast requests"]
                == RehearsalRow(
                    name: "broadcast requests",
                    predicted: "1.67/s",
                    measured: "1.82/s",
                    gap: "+9.0%",
                    remarks: []
                ),
            "\(rows)"
        )
        #expect(verification.text.hasSuffix("verified: within 10%"))
        verification.measuredRequestRate = 100.0 / 60 * 1.11
        #expect(!verification.passed)
        #expect(RehearsalRow.rows(verification.text)["broadcast requests"]?.remarks == ["over 10%"])
        verification = Self.verification()
        verification.measuredDeliveryRate = 100_000.0 / 60 * 0.89
        #expect(!verification.passed)
        verification = Self.verification()
        verification.measuredConnections = 2
        #expect(!verification.passed)
        #expect(RehearsalRow.rows(verification.text)["connections"]?.remarks == ["over 10%", "not the plan's"])
        verification = Self.verification()
        verification.problems = ["the sink accepted 299 broadcasts, not 300"]
        #expect(!verification.passed)
        #expect(
            lines(of: verification.text, keyed: "NOT accounted for: ")
                == ["NOT accounted for: the sink accepted 299 broadcasts, not 300"],
            "\(verification.text)"
        )
        #expect(verification.text.hasSuffix("NOT verified: something was refused, failed or is unaccounted for"))
    }

    /// Rates as the plan writes them: whole and grouped from 100 a second, three figures below.
    @Test func ratesAreWrittenAsThePlanWritesThem() {
        #expect(BroadcastVerification.rate(100_000) == "100,000/s")
        #expect(BroadcastVerification.rate(10) == "10/s")
        #expect(BroadcastVerification.rate(100.0 / 60) == "1.67/s")
    }

    /// The plan's 100 broadcasts a second sent for 3 s by `fanout send --broadcast`'s sender to
    /// the embedded sink behind a 20 ms wire: measured where the sink accepted them, within 10%
    /// of the plan (the rate is the sender's schedule, not the machine's throughput, so a loaded
    /// machine keeps it), every broadcast reaching its 1,000 subscribers, the channels deleted.
    @Test func aBroadcastPlanIsRehearsedWithin10Percent() throws {
        let folder = NSTemporaryDirectory() + "fanout-broadcast-verify-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let plan = Self.plan()
        var job = PlanJob(question: plan.question.base)
        job.output = folder
        let verification = try job.rehearseBroadcast(plan)
        #expect(verification.problems == [], "\(verification.text)")
        #expect(verification.updates == 3 && verification.rehearsedEvery == .seconds(1))
        #expect(verification.predictedRequestRate == 100 && verification.predictedDeliveryRate == 100_000)
        #expect(abs(verification.measuredRequestRate - 100) <= 10, "\(verification.text)")
        #expect(abs(verification.measuredDeliveryRate - 100_000) <= 10_000, "\(verification.text)")
        #expect(verification.measuredConnections == 1)
        #expect(verification.passed, "\(verification.text)")
        let summary = try SummaryDocument.read(folder + "/verify/summary.json")
        let broadcast = try #require(summary.broadcast)
        #expect((broadcast.channels.created, broadcast.channels.deleted, broadcast.accepted) == (100, 100, 300))
        #expect(broadcast.devices?.delivered == 300_000)
    }

    /// A rehearsal that sends at 1.25 times the plan's rate — a plan whose prediction is wrong —
    /// measures that (125/s against the plan's 100/s) and fails with "over 10%": the measurement
    /// is the sink's, not the prediction echoed.
    @Test func aRehearsalOffItsPredictionFails() throws {
        let plan = Self.plan()
        let verification = try PlanJob(question: plan.question.base).rehearseBroadcast(plan, pace: 1.25)
        #expect(verification.problems == [], "\(verification.text)")
        #expect(verification.measuredRequestRate > 115, "\(verification.text)")
        #expect(!verification.passed)
        let requests = RehearsalRow.rows(verification.text)["broadcast requests"]
        #expect(requests?.remarks == ["over 10%"], "\(verification.text)")
        #expect(verification.text.hasSuffix("NOT verified: a measurement is more than 10% from its prediction"))
    }

    /// A plan whose `--template` is not a Live Activity update (an alert): the sink refuses every
    /// broadcast, and the rehearsal says so with the counts and fails, whatever the rates.
    @Test func aRehearsalWithRefusedBroadcastsFails() throws {
        let template = NSTemporaryDirectory() + "fanout-alert-\(UUID().uuidString).json"
        defer { try? FileManager.default.removeItem(atPath: template) }
        try #"{"aps":{"alert":{"title":"Poll","body":"Do you like the new design?"}}}"#
            .write(toFile: template, atomically: true, encoding: .utf8)
        var plan = Self.plan()
        var question = plan.question
        question.base.flow.templatePath = template
        question.base.flow.bodyBytes = try PlanJob.bodyBytes(template: template)  // as `--template` sets it
        plan = BroadcastPlan(question)
        let verification = try PlanJob(question: question.base).rehearseBroadcast(plan)
        #expect(!verification.passed)
        #expect(
            verification.problems.contains { $0.hasPrefix("the sender had 0 of 300 broadcasts accepted (rejected: ") },
            "\(verification.problems)"
        )
        #expect(verification.problems.contains("the sink accepted 0 broadcasts, not 300"), "\(verification.problems)")
        #expect(
            lines(of: verification.text, keyed: "NOT accounted for: ")
                == [
                    "NOT accounted for: the sender had 0 of 300 broadcasts accepted (rejected: BadPayload 300; failed: none)",
                    "NOT accounted for: the sink accepted 0 broadcasts, not 300",
                    "NOT accounted for: the sink timed 0 broadcasts: a rate needs two",
                ],
            "\(verification.text)"
        )
        #expect(verification.text.hasSuffix("NOT verified: something was refused, failed or is unaccounted for"))
    }
}
