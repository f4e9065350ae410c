import FanoutNotation

/// A scaled rehearsal's terms (`fanout run --sample`; `CampaignSample`), in summary.json as
/// `sample` and in the first line of every report of the run: its rates are the campaign's,
/// its durations `share` of the campaign's, and its counts too.
public struct SampleSummary: Sendable, Codable, Equatable {
    /// The devices' share, (0, 1].
    public var share: Double
    /// How many times faster the rehearsal's time ran than the campaign's (1 / share).
    public var timeFactor: Double
    /// The campaign's devices, and the rehearsal's.
    public var campaignDevices: UInt64
    public var devices: UInt64

    public init(share: Double, campaignDevices: UInt64, devices: UInt64) {
        self.share = share
        self.timeFactor = 1 / share
        self.campaignDevices = campaignDevices
        self.devices = devices
    }

    enum CodingKeys: String, CodingKey {
        case share
        case timeFactor = "time_factor"
        case campaignDevices = "campaign_devices"
        case devices
    }

    /// "a scaled rehearsal (1% of the devices, time ×100)": a report's title says it.
    public var title: String {
        "a scaled rehearsal (\(ShareNotation.percent(share)) of the devices, time ×\(String(format: "%.4g", timeFactor)))"
    }

    /// "10,000 of the campaign's 1,000,000 devices (1%), time ×100 — every
    /// rate is the campaign's; every count and duration 1% of it (a second here is 100 of the
    /// campaign's)".
    public var headline: String {
        let factor = String(format: "%.4g", timeFactor)
        return
            "\(devices.grouped) of the campaign's \(campaignDevices.grouped) devices (\(ShareNotation.percent(share))), time ×\(factor) — every rate is the campaign's; every count and duration \(ShareNotation.percent(share)) of it (a second here is \(factor) of the campaign's)"
    }
}
