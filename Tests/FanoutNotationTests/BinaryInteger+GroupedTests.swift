import FanoutNotation
import Testing

@Suite struct GroupedTests {
    @Test func groupsOfThreeWithCommas() {
        #expect(0.grouped == "0")
        #expect(999.grouped == "999")
        #expect(1000.grouped == "1,000")
        #expect(240_000.grouped == "240,000")
        #expect(1_000_000.grouped == "1,000,000")
        #expect((-12_345).grouped == "-12,345")
        #expect(UInt64.max.grouped == "18,446,744,073,709,551,615")
        #expect(Int.min.grouped == "-9,223,372,036,854,775,808")
    }
}
