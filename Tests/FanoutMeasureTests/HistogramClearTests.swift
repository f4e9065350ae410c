import FanoutMeasure
import Histogram
import Testing

/// `clear()` empties a histogram by sharing one made empty: what is recorded afterwards must
/// be all it holds, and must never reach the shared empty one or another cleared histogram.
@Suite struct HistogramClearTests {
    @Test func aClearedHistogramHoldsOnlyWhatIsRecordedAfter() {
        var histogram = makeMicrosecondHistogram()
        for value in 1...10_000 { _ = histogram.record(UInt64(value)) }
        histogram.clear()
        #expect(histogram.totalCount == 0)
        #expect(histogram.max == 0)
        for _ in 0..<3 { _ = histogram.record(250) }
        _ = histogram.record(7_000)
        #expect(histogram.totalCount == 4)
        #expect(histogram.valueAtPercentile(50) == 250)
        #expect(histogram.max == histogram.highestEquivalentForValue(7_000))
        #expect(histogram.min == 250)
    }

    @Test func clearedHistogramsDoNotShareWhatTheyRecord() {
        var a = makeMicrosecondHistogram()
        var b = makeMicrosecondHistogram()
        _ = a.record(5)
        _ = b.record(6)
        a.clear()
        b.clear()
        _ = a.record(1_000)
        #expect(b.totalCount == 0)
        _ = b.record(2_000)
        #expect(a.totalCount == 1 && a.valueAtPercentile(100) == a.highestEquivalentForValue(1_000))
        #expect(b.totalCount == 1 && b.valueAtPercentile(100) == b.highestEquivalentForValue(2_000))
        // A third, cleared after both recorded, is still empty.
        var c = makeMicrosecondHistogram()
        _ = c.record(9)
        c.clear()
        #expect(c.totalCount == 0 && c.max == 0)
        // And merging stays exact.
        a.add(b)
        #expect(a.totalCount == 2)
    }

    @Test func aHistogramOfAnotherShapeIsReset() {
        var other = Histogram<UInt64>(highestTrackableValue: 1_000, numberOfSignificantValueDigits: .two)
        _ = other.record(10)
        other.clear()
        #expect(other.totalCount == 0)
        #expect(other.highestTrackableValue == 1_000)
        #expect(other.numberOfSignificantValueDigits == .two)
        _ = other.record(20)
        #expect(other.totalCount == 1)
    }
}
