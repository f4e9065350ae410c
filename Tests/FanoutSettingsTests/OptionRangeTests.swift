import FanoutSettings
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
        for value in [19, 5121, Int.min, Int.max] {
            let error = #expect(throws: OptionRangeError.self) { try range.check(value) }
            #expect(error?.description == "--body-bytes must be 20…5120 bytes (APNs takes at most 5120); got \(value)")
        }
        let error = #expect(throws: OptionRangeError.self) { try range.check(UInt64.max) }
        #expect(error?.given == "18446744073709551615")
    }

    /// A bound below the lowest (a machine with no files to spare) still leaves the lowest.
    @Test func anUpperBoundBelowTheLowestIsTheLowest() throws {
        let range = OptionRange("--connections", 1, -5)
        #expect(range.values == 1...1)
        #expect(try range.check(1) == 1)
        #expect(throws: OptionRangeError.self) { try range.check(2) }
    }
}
