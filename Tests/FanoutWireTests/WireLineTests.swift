import Testing

@testable import FanoutScenarioTerms
@testable import FanoutWire

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
}
