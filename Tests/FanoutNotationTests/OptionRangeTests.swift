import FanoutNotation
import Testing

@Suite struct OptionRangeTests {
    @Test func aValueInRangeIsReturned() throws {
        let range = OptionRange("--repeat", 1, 1000)
        #expect(try range.check(1) == 1)
        #expect(try range.check(1000) == 1000)
        #expect(try range.check(UInt64(7)) == 7)
    }

    @Test func aValueOutsideSaysTheOptionTheRangeItsReasonAndTheValue() {
        let range = OptionRange("--body-bytes", 20, 5120, unit: "bytes", reason: "APNs takes at most 5120")
        for (value, written) in [
            (19, "19"), (5121, "5,121"), (Int.min, "-9,223,372,036,854,775,808"),
            (Int.max, "9,223,372,036,854,775,807"),
        ] {
            let error = #expect(throws: OptionRangeError.self) { try range.check(value) }
            #expect(
                error?.description == "--body-bytes must be 20…5,120 bytes (APNs takes at most 5120); got \(written)"
            )
        }
        let error = #expect(throws: OptionRangeError.self) { try range.check(UInt64.max) }
        #expect(error?.given == "18,446,744,073,709,551,615")
    }

    /// A bound below the lowest (a machine with no files to spare) still leaves the lowest.
    @Test func anUpperBoundBelowTheLowestIsTheLowest() throws {
        let range = OptionRange("--connections", 1, -5)
        #expect(range.values == 1...1)
        #expect(try range.check(1) == 1)
        #expect(throws: OptionRangeError.self) { try range.check(2) }
    }
}
