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

    /// Bytes handed over while the connection's last segment still waits for its link join it
    /// at no overhead; once that segment has begun to cross, or on an idle path, they start a
    /// segment of their own. At 1 MB/s a link byte is 1 µs.
    @Test func bytesJoinOnlyASegmentThatStillWaits() {
        // A 3000-byte chunk at 0: segments of 1448, 1448 and 104 (the last waits until 3 ms).
        var chunk = WireLine(bandwidth: 1_000_000)
        var left = 3000
        var arrivals: [WireLine.Piece] = []
        while left > 0 {
            let piece = chunk.nextPiece(of: left, now: 0, delay: 0)
            left -= piece.length
            arrivals.append(piece)
        }
        #expect(
            arrivals == [
                .init(length: 1448, joins: false, arrival: 1_500_000),
                .init(length: 1448, joins: false, arrival: 3_000_000),
                .init(length: 104, joins: false, arrival: 3_156_000),
            ]
        )
        // At 2 ms the 104-byte segment has not begun (it begins at 3 ms): 500 bytes join it.
        #expect(
            chunk.nextPiece(of: 500, now: 2_000_000, delay: 0) == .init(length: 500, joins: true, arrival: 3_656_000)
        )
        // At 3.2 ms it has begun: 100 bytes start a segment after it.
        #expect(
            chunk.nextPiece(of: 100, now: 3_200_000, delay: 0) == .init(length: 100, joins: false, arrival: 3_808_000)
        )
        // An idle path: its own segment.
        #expect(
            chunk.nextPiece(of: 100, now: 10_000_000, delay: 0) == .init(length: 100, joins: false, arrival: 10_152_000)
        )
    }

    /// With the sink's shared link alone nothing joins, and an empty chunk takes no room.
    @Test func theSharedLinkAloneJoinsNothing() {
        let shared = SharedLink(bandwidth: 1_000_000)
        var line = WireLine(bandwidth: nil)
        #expect(
            line.nextPiece(of: 100, now: 0, delay: 0, shared: shared)
                == .init(length: 100, joins: false, arrival: 152_000)
        )
        #expect(
            line.nextPiece(of: 100, now: 0, delay: 0, shared: shared)
                == .init(length: 100, joins: false, arrival: 304_000)
        )
        #expect(line.arrival(bytes: 0, now: 0, delay: 0, shared: shared) == 304_000)
        #expect(line.nextPiece(of: 100, now: 0, delay: 0, shared: shared).arrival == 456_000)
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
