import Testing

@testable import FanoutScenarioTerms
@testable import FanoutSink

/// The wire as a scenario sets it (`rtt`, `bandwidth`, `sink-bandwidth`, the windows): what is
/// taken, what is refused and why (the wire's arithmetic is FanoutWireTests').
@Suite struct WireSettingsTests {
    /// Bandwidth × one-way delay past the cap is refused, naming the options; so is a
    /// bandwidth of 0.
    @Test func bytesInFlightPastTheCapAreRefused() throws {
        var scenario = SinkScenario()
        try scenario.set("rtt", "1s")
        try scenario.set("bandwidth", "10Gbit")
        #expect(throws: SinkScenarioError.self) { try scenario.validate() }
        do {
            try scenario.validate()
        } catch {
            #expect(
                error.description
                    == "rtt and bandwidth put 596 MiB on the wire each way, over the cap of 64 MiB a connection: lower the "
                    + "bandwidth or the round trip"
            )
        }
        try scenario.set("bandwidth", "100Mbit")
        try scenario.validate()
        #expect(scenario.wire?.bytesInFlight == 12_500_000 * 0.5)
    }

    @Test(arguments: [
        ("rtt", "0ms", "rtt must be longer than 0"),
        ("rtt", "-5ms", "rtt is a duration"),
        ("rtt", "fast", "rtt is a duration"),
        ("bandwidth", "0Mbit", "bandwidth must be above 0"),
        ("bandwidth", "-1Mbit", "bandwidth must be above 0"),
        ("bandwidth", "100", "bandwidth must be above 0"),
        ("sink-bandwidth", "1Gbps", "sink-bandwidth must be above 0"),
        ("connection-window", "2147483648", "must be from 65535 to 2^31−1"),
        ("connection-window", "1000", "can only be raised"),
        ("stream-window", "-1", "must be from 1 to 2^31−1"),
        ("stream-window", "0", "must be from 1 to 2^31−1"),
        ("stream-window", "2GiB", "must be from 1 to 2^31−1"),
        ("window-refill", "sometimes", "window-refill is half or each-frame"),
    ])
    func badWireSettingsAreRefused(name: String, value: String, message: String) {
        var scenario = SinkScenario()
        do {
            try scenario.set(name, value)
            Issue.record("\(name) = \(value) was taken")
        } catch {
            #expect(error.description.contains(message), "\(error.description)")
        }
    }

    @Test func goodWireSettingsAreTaken() throws {
        var scenario = SinkScenario()
        try scenario.set("bandwidth", "100Mbit/s")
        try scenario.set("rtt", "normal:80ms,5ms")
        try scenario.set("sink-bandwidth", "12.5MB")
        try scenario.set("connection-window", "64KiB")
        try scenario.set("stream-window", "1")
        try scenario.set("window-refill", "each-frame")
        #expect(scenario.wire?.bandwidth == 12_500_000)
        #expect(scenario.wire?.sinkBandwidth == 12_500_000)
        #expect(scenario.wire?.roundTrip == .normal(mean: .milliseconds(80), deviation: .milliseconds(5)))
        #expect(scenario.windows.connection == 65_536)
        #expect(scenario.windows.stream == 1)
        #expect(scenario.windows.refill == .eachFrame)
        var configuration = SinkConfiguration()
        configuration.scenario = scenario
        let http2 = Sink.http2Configuration(configuration)
        #expect(
            http2.connectionWindowSize == 65_536 && http2.initialWindowSize == 1 && http2.windowRefill == .eachFrame
        )
    }
}
