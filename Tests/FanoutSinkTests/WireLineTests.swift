import Testing

@testable import FanoutScenarioTerms
@testable import FanoutSink

/// The wire's arithmetic: a chunk's arrival from its size, when it was handed over and its
/// delay, through the connection's link and the sink's, in order.
@Suite struct WireLineTests {
    @Test func aChunkArrivesAfterItsDelay() {
        var line = WireLine(bandwidth: nil)
        #expect(line.arrival(bytes: 1000, now: 1_000, delay: 40_000_000) == 40_001_000)
        // A later chunk with a shorter delay does not overtake it (TCP keeps order).
        #expect(line.arrival(bytes: 10, now: 2_000, delay: 1_000) == 40_001_000)
        #expect(line.arrival(bytes: 10, now: 50_000_000, delay: 40_000_000) == 90_000_000)
    }

    /// 1,448 payload bytes are one segment: 1,500 bytes on the link; at 1.5 MB/s that is 1 ms,
    /// and the next chunk waits for the link before it.
    @Test func theLinkSerialisesWithTCPIPOverhead() {
        #expect(WireLine.linkBytes(1448) == 1500)
        #expect(WireLine.linkBytes(1449) == 1449 + 104)
        #expect(WireLine.linkBytes(1) == 53)
        var line = WireLine(bandwidth: 1_500_000)
        #expect(line.arrival(bytes: 1448, now: 0, delay: 10_000_000) == 11_000_000)
        #expect(line.arrival(bytes: 1448, now: 0, delay: 10_000_000) == 12_000_000)
        // An idle link starts from the handover.
        #expect(line.arrival(bytes: 1448, now: 100_000_000, delay: 0) == 101_000_000)
    }

    /// A chunk handed over while the connection's bytes still wait fills the last segment's
    /// room at no overhead, as TCP sends behind a full window; handed over to an idle path it
    /// starts its own segment. At 1 MB/s a link byte is 1 µs.
    @Test func aBackloggedChunkFillsTheLastSegment() {
        var line = WireLine(bandwidth: 1_000_000)
        #expect(line.arrival(bytes: 1000, now: 0, delay: 0) == 1_052_000)
        #expect(line.piece(of: 2000, now: 0) == 448)
        #expect(line.arrival(bytes: 448, now: 0, delay: 0) == 1_500_000)
        // The segment is full: the next bytes start one.
        #expect(line.piece(of: 2000, now: 0) == 1448)
        #expect(line.arrival(bytes: 100, now: 0, delay: 0) == 1_652_000)
        // Once they have crossed, the path is idle and a chunk pays for its own segment.
        #expect(line.piece(of: 2000, now: 2_000_000) == 1448)
        #expect(line.arrival(bytes: 100, now: 2_000_000, delay: 0) == 2_152_000)
        // Without a bandwidth nothing waits: each chunk is its own.
        var open = WireLine(bandwidth: nil)
        #expect(open.arrival(bytes: 1000, now: 0, delay: 5) == 5)
        #expect(open.piece(of: 2000, now: 0) == 1448)
    }

    /// Two connections share the sink's link: the second chunk waits for the first.
    @Test func connectionsShareTheSinksLink() {
        let shared = SharedLink(bandwidth: 1_500_000)
        var first = WireLine(bandwidth: nil)
        var second = WireLine(bandwidth: nil)
        #expect(first.arrival(bytes: 1448, now: 0, delay: 5, shared: shared) == 1_000_005)
        #expect(second.arrival(bytes: 1448, now: 0, delay: 5, shared: shared) == 2_000_005)
    }

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
