import Testing

@testable import FanoutScenarioTerms

/// A scaled rehearsal's terms (`--sample`): a share of the devices, every duration the model
/// draws times that share, and the shares it refuses.
@Suite struct CampaignSampleTests {
    @Test func aSampleCompressesEveryDurationASpreadNamesAndKeepsItsShape() throws {
        let sample = try CampaignSample(parsing: "1%")
        #expect(sample.share == 0.01 && sample.timeFactor == 100)
        #expect(sample.devices(50_000_000) == 500_000 && sample.devices(40) == 1)
        #expect(sample.compressed(.seconds(420)) == .milliseconds(4200))
        #expect(
            sample.compressed(.uniform(.seconds(10), .seconds(30))) == .uniform(.milliseconds(100), .milliseconds(300))
        )
        #expect(sample.compressed(.fixed(.seconds(1))) == .fixed(.milliseconds(10)))
        #expect(
            sample.compressed(.normal(mean: .seconds(8), deviation: .seconds(3)))
                == .normal(mean: .milliseconds(80), deviation: .milliseconds(30))
        )
        #expect(
            sample.compressed(.logNormal(median: .seconds(420), sigma: 1.2))
                == .logNormal(median: .milliseconds(4200), sigma: 1.2)
        )
        #expect(
            sample.compressed(.empirical([.seconds(1), .seconds(2)]))
                == .empirical([.milliseconds(10), .milliseconds(20)])
        )
        // Draws of the compressed spread are the campaign's draws times the share.
        let spread = LatencyDistribution.logNormal(median: .seconds(420), sigma: 1.2)
        var (campaign, sampled) = (SinkRandom(seed: 4), SinkRandom(seed: 4))
        for _ in 0..<1_000 {
            let whole = Double(spread.sample(&campaign))
            let part = Double(sample.compressed(spread).sample(&sampled))
            #expect(abs(part - whole / 100) <= max(1, whole * 1e-9))
        }
        #expect(try CampaignSample(parsing: "0.25").description == "25% of the devices, time ×4")
        #expect(try CampaignSample(parsing: "100%").timeFactor == 1)
    }

    @Test(arguments: ["0%", "0", "150%", "-1%", "1e-9", "one percent", "nan"])
    func aShareThatIsNoSampleIsRefusedByName(_ text: String) {
        #expect(throws: SinkScenarioError.self) { try CampaignSample(parsing: text) }
    }
}
