import FanoutNotation
import Testing

/// `DecimalNotation`: numbers as people write them, and nothing Swift's `Double(String)` reads
/// besides (hexadecimal, `inf`, `nan`).
@Suite struct DecimalNotationTests {
    @Test(arguments: [
        ("5", 5.0), ("0.05", 0.05), (".5", 0.5), ("2.", 2.0), ("1e6", 1e6), ("1.5E-3", 1.5e-3), ("+3", 3.0),
        ("-2.5", -2.5), ("007", 7.0),
    ])
    func decimalsAreRead(text: String, value: Double) {
        #expect(DecimalNotation.parse(text) == value)
    }

    @Test(arguments: [
        "0x10", "0x1p1", "inf", "-inf", "nan", "infinity", "1_000", " 5", "5 ", ".", "e5", "+", "1e", "1e+", "", "--5",
        "5..1", "١٢",
    ])
    func anythingElseIsNot(text: String) {
        #expect(DecimalNotation.parse(text) == nil, "\(text)")
    }

    /// Thousands grouped by `,` or `_` in the whole part are read; anything a decimal comma
    /// could mean is refused (issue 61, review: `2,5ms` read as 25 ms, `10,00` as 1000).
    @Test(arguments: [
        ("100,000", 100_000.0), ("1_000_000.5", 1_000_000.5), ("-12,345", -12_345.0), ("1,000e3", 1e6), ("25", 25.0),
    ])
    func groupedThousandsAreRead(text: String, value: Double) {
        #expect(DecimalNotation.parseGrouped(text) == value)
    }

    @Test(arguments: ["2,5", "10,00", "1,0,0,0", ",100", "100,", "1,0000", "0.1,5", "1e1,000", "1,,000", "0,009"])
    func aGroupNotOfThreeIsRefused(text: String) {
        #expect(DecimalNotation.parseGrouped(text) == nil, "\(text)")
    }

    /// The notations built on it refuse what it refuses (issue 61, review: `--rate 0x10` ran
    /// at 16 a second, `--duration 0x1p1s` for 2 s).
    @Test func theNotationsTakeDecimalsOnly() {
        #expect(DurationNotation.parse("0x1p1s") == nil)
        #expect(DurationNotation.parse("1.5s") == .milliseconds(1500))
        #expect(EventRate(parsing: "0x10/s") == nil)
        #expect(EventRate(parsing: "16/s") != nil)
        #expect(ShareNotation.parse("0x1p-1") == nil)
        #expect(ShareNotation.parse("50%") == 0.5)
        #expect(BandwidthNotation.parse("0x10Mbit") == nil)
        #expect(BandwidthNotation.parse("10Mbit") != nil)
    }
}
