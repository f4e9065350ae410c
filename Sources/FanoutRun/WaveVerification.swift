import FanoutClient
import FanoutDevices
import FanoutNotation
import FanoutPayload
import FanoutReport
import FanoutResults
import FanoutReturn
import FanoutScenarioTerms

/// `fanout plan --verify` of the return wave (issue #63): the plan's pace rehearsed as a sample
/// (`CampaignSample`) against the backend given, and the wave's busiest second against the
/// plan's.
///
/// The rehearsal is `fanout run --sample`: the embedded sink's devices open as the plan says
/// (the poll without mutable-content: the plan counts the opens' requests), the fan-out paced
/// at the plan's rate (the open model, `devices / T` a second over the sample's `s·T`), the
/// wave sent to the backend. A second of the sample holds `1/s` of the campaign's, so the busiest
/// one measured is the campaign's wave averaged over that many seconds: the prediction is the
/// plan's `w(t)` integrated over the same whole seconds (`WavePlan.busiestSecond`).
public struct WaveRehearsal: Sendable, Hashable {
    public var returnTo: ReturnURL
    public var settings = ReturnWaveSettings()
    public var sample: CampaignSample

    public init(returnTo: ReturnURL, sample: CampaignSample) {
        self.returnTo = returnTo
        self.sample = sample
    }

    /// The sample `--sample` leaves out: the share of the campaign that is 100,000 devices (all
    /// of a smaller one), enough for each second's count to be within a few percent.
    public static func defaultSample(devices: UInt64) -> CampaignSample {
        (try? CampaignSample(share: min(1, max(CampaignSample.smallestShare, 100_000 / Double(max(1, devices))))))
            ?? (try! CampaignSample(share: 1))
    }
}

/// What a wave's rehearsal measured against its plan.
public struct WaveVerification: RehearsalVerdict {
    public var sample: CampaignSample
    public var campaignDevices: UInt64
    public var devices: UInt64
    /// The paced fan-out, campaign seconds, and its rate (devices a second).
    public var fanOutSeconds: Double
    public var pace: Double
    /// Whether the fan-out kept its schedule (the open model's run was valid), and why not.
    public var paceKept: Bool
    public var paceProblems: [String]
    public var backend: String
    public var capacity: Double?
    public var predictedBusiest: Double
    public var measuredBusiest: Int
    public var answeredInBusiest: Int
    public var offered: Int
    public var predictedRequests: Double
    public var p99Micros: UInt64
    public var errors: Int
    public var knee: ReturnKnee?

    /// Within this share of the prediction the pace is verified (issue #63: 10%).
    public static let tolerance = 0.1

    public var deviation: Double {
        predictedBusiest > 0 ? (Double(measuredBusiest) - predictedBusiest) / predictedBusiest : 0
    }

    public var passed: Bool { paceKept && abs(deviation) <= Self.tolerance }

    public var text: String {
        var lines = [
            "the wave's rehearsal: \(devices.grouped) of \(campaignDevices.grouped) devices (\(sample)) at \(grouped(Int(pace.rounded()))) devices/s (a fan-out of \(WavePlan.time(fanOutSeconds)) in the campaign, \(WavePlan.time(fanOutSeconds * sample.share)) here), the wave to \(backend)",
            "  predicted: the busiest second \(grouped(Int(predictedBusiest.rounded())))/s (a second here is \(String(format: "%.4g", sample.timeFactor)) of the campaign's); \(grouped(Int(predictedRequests.rounded()))) requests",
            "  measured:  the busiest second \(grouped(measuredBusiest))/s offered, \(grouped(answeredInBusiest)) answered in it; \(grouped(offered)) requests, \(grouped(errors)) errors, p99 \(String(format: "%.2f", Double(p99Micros) / 1000)) ms",
        ]
        if let capacity {
            lines.append(
                "  against the capacity \(grouped(Int(capacity.rounded())))/s: the busiest second is \(ShareNotation.percent(Double(measuredBusiest) / capacity)) of it"
            )
        }
        if let knee {
            lines.append(
                "  the backend's knee: \(grouped(Int(knee.capacityPerSecond.rounded())))/s from second \(knee.second) (its \(knee.cause) rose at \(knee.roseAt))"
                    + (capacity.map {
                        knee.capacityPerSecond < 0.9 * $0 ? ": under the capacity the plan was given" : ""
                    }
                        ?? "")
            )
        }
        for problem in paceProblems { lines.append("  the fan-out did not keep its pace: \(problem)") }
        let percent = String(format: "%+.1f%%", deviation * 100)
        lines.append(
            passed
                ? "verified: the busiest second within \(Int(Self.tolerance * 100))% of the plan's (\(percent))"
                : paceKept
                    ? "NOT verified: the busiest second is \(percent) off the plan's (more than \(Int(Self.tolerance * 100))%)"
                    : "NOT verified: the fan-out's pace was not kept here, so the wave is not the plan's"
        )
        return lines.joined(separator: "\n")
    }
}

extension WavePlan {
    /// The busiest whole second of the wave, from the fan-out's start, for a fan-out of
    /// `fanOut` seconds: `w(t)` integrated over each second, at most 200,000 evaluations in all
    /// (a millisecond's step for a wave of 200 s or less; a wave of hours is smooth on the
    /// coarser step it takes then).
    static func busiestSecond(_ question: Question, total: Double, fanOut: Double) -> Double {
        guard total > 0 else { return 0 }
        let span = fanOut + question.openAfter.quantile(0.9999)
        let seconds = Int(span.rounded(.up))
        let steps = max(1, min(1_000, 200_000 / max(1, seconds)))
        var busiest = 0.0
        for second in 0...seconds {
            var sum = 0.0
            for step in 0..<steps {
                sum += rate(
                    question,
                    total: total,
                    fanOut: fanOut,
                    at: Double(second) + (Double(step) + 0.5) / Double(steps)
                )
            }
            busiest = max(busiest, sum / Double(steps))
        }
        return busiest
    }
}

extension PlanJob {
    /// Rehearses `plan`'s wave at its pace, sampled, against the backend `rehearsal` names; its
    /// run folder goes to `output/verify` when there is an output.
    public func rehearseWave(_ plan: CapacityPlan, _ rehearsal: WaveRehearsal) throws -> WaveVerification {
        guard let wavePlan = wave(for: plan) else {
            throw JobError.option(.option("--verify"), "a wave's rehearsal needs its --device-open")
        }
        let question = wavePlan.question
        let devices = plan.question.devices
        let fanOut = wavePlan.pacedSeconds ?? wavePlan.fanOutSeconds
        let pace = Double(devices) / fanOut
        let sample = rehearsal.sample
        var job = RunJob()
        // The schedule sets the count: the campaign's devices over the paced fan-out, its rate
        // taken from the duration as the schedule holds it (whole nanoseconds), so that the
        // schedule holds every device; the sample's count is then its compressed schedule's.
        let duration = Duration.nanoseconds(Int64((fanOut * 1e9).rounded()))
        job.sample = sample
        job.template = try PayloadTemplate(
            json: Array(RunJob.poll.replacingOccurrences(of: #","mutable-content":1"#, with: "").utf8),
            file: "poll"
        )
        do {
            job.shape.model.schedule = try ArrivalSchedule(rate: Double(devices) / duration.seconds, duration: duration)
        } catch {
            throw JobError.outcome(.part("the plan's pace, \(pace) devices a second over \(fanOut) s"), "\(error)")
        }
        var engagement = EngagementSettings()
        engagement.open = question.open
        engagement.openAfter = question.openAfter
        engagement.requestsPerOpen = question.requestsPerOpen
        engagement.returnTo = rehearsal.returnTo
        job.sink.scenario.devices.engagement = engagement
        job.returnWave = rehearsal.settings
        job.reporter = reporter
        let summary = try job.run(
            started: following,
            waveStarted: { wave in stopSignals?.onStop { _ in wave.interrupt() } },
            progress: nil,
            linger: nil
        )
        if let output { _ = try summary.finish(into: output + "/" + Self.rehearsalFolder, reporter: reporter) }
        guard let wave = summary.returnWave else {
            throw JobError.outcome(.part("the rehearsal"), "it sent no return wave")
        }
        let busiest = wave.seconds.max { $0.offered < $1.offered }
        var sampled = question
        sampled.openAfter = sample.compressed(question.openAfter)
        let sampledDevices = Double(job.tokenCount)
        return WaveVerification(
            sample: sample,
            campaignDevices: job.campaignDevices,
            devices: job.tokenCount,
            fanOutSeconds: fanOut,
            pace: pace,
            paceKept: summary.valid,
            paceProblems: summary.invalidReasons.map(\.description),
            backend: rehearsal.returnTo.description,
            capacity: question.capacity,
            predictedBusiest: WavePlan.busiestSecond(
                sampled,
                total: sampledDevices * question.open * Double(question.requestsPerOpen),
                fanOut: fanOut * sample.share
            ),
            measuredBusiest: busiest?.offered ?? 0,
            answeredInBusiest: busiest?.answered ?? 0,
            offered: wave.offered,
            predictedRequests: sampledDevices * question.open * Double(question.requestsPerOpen),
            p99Micros: wave.latency.p99Micros,
            errors: wave.errors,
            knee: wave.knee
        )
    }
}
