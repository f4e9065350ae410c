import FanoutRandom
import Foundation
import Histogram
import Testing

@testable import FanoutMeasure

/// Histograms packed as HdrHistogram's V2 counts: nothing is lost.
struct PackedHistogramTests {
    @Test func packingAndUnpackingKeepsEveryCount() {
        var random = SeededRandom(seed: 42)
        var histogram = makeMicrosecondHistogram()
        for _ in 0..<200_000 {
            // Log-uniform from 1 µs to about an hour, with runs of equal values.
            let value = UInt64(exp(Double(random.next() % 1_000_000) / 1_000_000 * log(3.5e9)))
            _ = histogram.record(max(1, value), count: 1 + random.next() % 3)
        }
        let packed = PackedHistogram(histogram)
        let unpacked = packed.unpacked()
        #expect(packed.totalCount == histogram.totalCount)
        #expect(unpacked.totalCount == histogram.totalCount)
        #expect(unpacked.max == histogram.max)
        #expect(unpacked.min == histogram.min)
        for value in histogram.recordedValues() {
            #expect(unpacked.countForValue(value.value) == value.count)
        }
        for percentile in [0.0, 50, 90, 99, 99.9, 99.99, 100] {
            // The same bucket (a histogram keeps its largest value exactly, an unpacked one the
            // bucket's lowest).
            #expect(
                histogram.valuesAreEquivalent(
                    unpacked.valueAtPercentile(percentile),
                    histogram.valueAtPercentile(percentile)
                )
            )
        }
        // Far smaller than the counts array of 8-byte words.
        #expect(packed.counts.count < packed.countsLength * 8 / 2)
    }

    @Test func theLayoutMatchesTheLibrarys() {
        // Each index's value lands back in the same index, and at the library's bucket edges.
        let histogram = makeMicrosecondHistogram()
        for index in stride(from: 0, to: 23_000, by: 7) {
            let value = PackedHistogram.value(atIndex: index)
            #expect(PackedHistogram.countsIndex(of: value) == index)
            #expect(histogram.lowestEquivalentForValue(value) == value)
        }
    }

    @Test func varintsFollowZigZagLEB128() {
        func encoded(_ value: Int64) -> [UInt8] {
            var bytes: [UInt8] = []
            PackedHistogram.putVarint(value, into: &bytes)
            return bytes
        }
        #expect(encoded(0) == [0x00])
        #expect(encoded(-1) == [0x01])
        #expect(encoded(1) == [0x02])
        #expect(encoded(-3) == [0x05])
        #expect(encoded(64) == [0x80, 0x01])
        #expect(encoded(Int64.max).count == 9)
        for value: Int64 in [0, 1, -1, 63, -64, 64, 1 << 20, -(1 << 40), Int64.max, Int64.min] {
            var position = 0
            #expect(PackedHistogram.getVarint(encoded(value), at: &position) == value)
        }
    }
}
