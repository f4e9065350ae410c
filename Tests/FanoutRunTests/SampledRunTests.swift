import FanoutClient
import FanoutScenarioTerms
import Testing

@testable import FanoutRun

/// `fanout run --sample` in the job: the campaign's count, schedule and devices' delays in the
/// sample's time, the network's own times kept.
@Suite struct SampledRunTests {
    @Test func aSampledJobSendsItsShareAndCompressesWhatTheModelDraws() throws {
        var job = RunJob()
        job.count = 2_000_000
        job.shape.streamTimeout = .seconds(30)
        job.shape.model.duration = .seconds(600)
        job.sink.scenario.devices.delay = .logNormal(median: .milliseconds(300), sigma: 0.5)
        job.sink.scenario.devices.returnAfter = .uniform(.seconds(60), .seconds(120))
        job.sink.scenario.devices.engagement.openAfter = .logNormal(median: .seconds(420), sigma: 1.2)
        job.sink.scenario.devices.engagement.mediaBudget = .seconds(30)
        #expect(try job.tokenCount == 2_000_000 && job.sampledShape().model.duration == .seconds(600))

        job.sample = try CampaignSample(parsing: "1%")
        #expect(job.campaignDevices == 2_000_000 && job.tokenCount == 20_000)
        let shape = try job.sampledShape()
        #expect(shape.model.duration == .seconds(6) && shape.streamTimeout == .seconds(30))
        let devices = job.sampledSink.scenario.devices
        #expect(devices.delay == .logNormal(median: .milliseconds(3), sigma: 0.5))
        #expect(devices.returnAfter == .uniform(.milliseconds(600), .milliseconds(1200)))
        #expect(devices.engagement.openAfter == .logNormal(median: .milliseconds(4200), sigma: 1.2))
        // The backend's latency is real: the media budget it is held to is not compressed.
        #expect(devices.engagement.mediaBudget == .seconds(30))
    }

    /// The open model: the schedule sets the campaign's devices, and its compressed form the
    /// sample's, at the campaign's rate.
    @Test func aSampledScheduleKeepsItsRate() throws {
        var job = RunJob()
        job.shape.model.schedule = try ArrivalSchedule(rate: 40_000, duration: .seconds(100))
        job.sample = try CampaignSample(parsing: "10%")
        #expect(job.campaignDevices == 4_000_000 && job.tokenCount == 400_000)
        let schedule = try #require(try job.sampledShape().model.schedule)
        #expect(schedule.duration == .seconds(10) && schedule.stages.map(\.target) == [40_000])
        // A count the compressed schedule cannot hold whole: 3,005 devices a second for a
        // second, 10% of it: 300.5 rounds to 301 devices, and 0.1 s × 3,005 holds 300 arrivals;
        // the run sends 300, none left past the schedule's end.
        job.shape.model.schedule = try ArrivalSchedule(rate: 3_005, duration: .seconds(1))
        job.count = 3_005
        #expect(job.sample?.devices(3_005) == 301 && job.tokenCount == 300)
        // A count under the schedule's limits it: 10% of 2,000 is 200 of the 301 it holds.
        job.count = 2_000
        #expect(job.tokenCount == 200)
    }
}
