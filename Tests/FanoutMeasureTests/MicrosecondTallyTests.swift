import FanoutRandom
import Histogram
import Testing

@testable import FanoutMeasure

/// `MicrosecondTally` against `Histogram` itself: the same values recorded both ways give the
/// same histogram, as everything Fanout reads of it.
@Suite struct MicrosecondTallyTests {
    /// Every index maps back to itself through its bucket's lowest value, and every value lies
    /// in its bucket: the tally's arithmetic is HdrHistogram's, index by index.
    @Test func indicesAndValuesAreHdrHistogramsBuckets() {
        var histogram = makeMicrosecondHistogram()
        for index in 0..<MicrosecondTally.length {
            let value = MicrosecondTally.lowestValue(at: index)
            #expect(MicrosecondTally.index(of: value) == index, "index \(index)")
            if index > 0 { #expect(MicrosecondTally.lowestValue(at: index - 1) < value) }
            #expect(histogram.lowestEquivalentForValue(value) == value)
        }
        // The first value past the last index is one `Histogram` refuses too.
        let past = MicrosecondTally.lowestValue(at: MicrosecondTally.length)
        let lastAccepted = histogram.record(past - 1)
        let pastAccepted = histogram.record(past)
        #expect(lastAccepted && !pastAccepted)
    }

    /// Delays from 0 to beyond an hour, log-spread, in two rounds (a tally starts again from
    /// nothing after `move(into:)`): counts, percentiles, the mean, the minimum and the maximum
    /// agree.
    @Test func aHistogramFilledThroughATallyReportsTheSame() {
        var random = SeededRandom(seed: 0x7A11)
        var direct = makeMicrosecondHistogram()
        var tallied = makeMicrosecondHistogram()
        var tally = MicrosecondTally()
        var recorded: [UInt64] = []
        for round in 0..<2 {
            for _ in 0..<20_000 {
                let nanoseconds = random.next() >> (random.next() % 64)
                direct.record(nanoseconds: nanoseconds)
                tally.record(nanoseconds: nanoseconds)
                let value = Swift.max(1, nanoseconds / 1000)
                if MicrosecondTally.index(of: value) < MicrosecondTally.length { recorded.append(value) }
            }
            #expect(tally.count == direct.totalCount - tallied.totalCount, "round \(round)")
            tally.move(into: &tallied)
            #expect(tally.count == 0)
            #expect(tallied.totalCount == direct.totalCount)
            #expect(tallied.max == direct.max)
            #expect(tallied.minNonZero == direct.minNonZero)
            #expect(tallied.min == direct.min)
            #expect(tallied.maxRecorded == direct.maxRecorded)
            #expect(tallied.mean == direct.mean)
            for percentile in [0.0, 1, 10, 50, 90, 99, 99.9, 99.99, 100] {
                #expect(tallied.valueAtPercentile(percentile) == direct.valueAtPercentile(percentile))
            }
            for value in recorded.prefix(2000) { #expect(tallied.countForValue(value) == direct.countForValue(value)) }
        }
        // Some values were over an hour, and both refused them.
        #expect(direct.totalCount == UInt64(recorded.count) && recorded.count < 40_000)
    }

    /// The smallest and the largest value in one bucket with others: they keep their exact
    /// values, as the percentiles that clamp to them need.
    @Test func theExtremesKeepTheirValuesInASharedBucket() {
        var direct = makeMicrosecondHistogram()
        var tallied = makeMicrosecondHistogram()
        var tally = MicrosecondTally()
        for microseconds: UInt64 in [5_001, 5_003, 5_002, 5_001] {  // one bucket: 5,000..<5,004
            direct.record(nanoseconds: microseconds * 1000)
            tally.record(nanoseconds: microseconds * 1000)
        }
        tally.move(into: &tallied)
        #expect(tallied.min == 5_001 && direct.min == 5_001)
        #expect(tallied.maxRecorded == 5_003 && direct.maxRecorded == 5_003)
        for percentile in [0.0, 25, 50, 99, 100] {
            #expect(tallied.valueAtPercentile(percentile) == direct.valueAtPercentile(percentile))
        }
        #expect(tallied.countForValue(5_000) == 4)
    }
}
