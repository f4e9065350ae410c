import FanoutNotation
import Testing

@Suite struct DurationNotationTests {
    @Test func everyUnitReads() {
        #expect(DurationNotation.parse("250us") == .microseconds(250))
        #expect(DurationNotation.parse("250µs") == .microseconds(250))
        #expect(DurationNotation.parse("5ms") == .milliseconds(5))
        #expect(DurationNotation.parse(" 1.5s ") == .milliseconds(1500))
        #expect(DurationNotation.parse("2m") == .seconds(120))
        #expect(DurationNotation.parse("1h") == .seconds(3600))
        #expect(DurationNotation.parse("8784h") == DurationNotation.longest)
    }

    /// What cannot be represented is refused, never trapped on: negative, infinite, not a
    /// number, or beyond a year.
    @Test(arguments: ["-1s", "1e300s", "1e30h", "inf s", "infs", "nans", "8785h", "1y", "", "s", "5", "5 parsecs"])
    func whatIsNotADurationIsRefused(text: String) {
        #expect(DurationNotation.parse(text) == nil)
    }

    /// A duration written above zero that would round to zero nanoseconds is refused: it would
    /// pass every check that a duration is not zero (`--warm-up 1e-400s`, `--coalesce 1e-12s`).
    @Test(arguments: ["1e-400s", "0.0000000001s", "1e-13ms", "0.0004us"])
    func aDurationThatRoundsToZeroIsRefused(text: String) {
        #expect(DurationNotation.parse(text) == nil, "\(text)")
    }

    @Test(arguments: ["0s", "0ms", "0.0s", "0e5us", "00h"])
    func zeroWrittenAsZeroIsZero(text: String) {
        #expect(DurationNotation.parse(text) == .zero, "\(text)")
    }

    @Test func wholeNanosecondsSaturates() {
        #expect(Duration.seconds(2).wholeNanoseconds == 2_000_000_000)
        #expect(Duration.seconds(-2).wholeNanoseconds == 0)
        #expect(Duration.seconds(Int64.max).wholeNanoseconds == .max)
        #expect(DurationNotation.longest.wholeNanoseconds == 366 * 24 * 3600 * 1_000_000_000)
    }
}

@Suite struct ShareNotationTests {
    @Test(arguments: [("5%", 0.05), ("0.05", 0.05), ("100%", 1.0), ("0%", 0.0), ("-2%", -0.02), ("12.5%", 0.125)])
    func sharesAreReadWithOrWithoutAPercentSign(text: String, share: Double) {
        #expect(ShareNotation.parse(text).map { abs($0 - share) < 1e-12 } == true, "\(text)")
    }

    @Test(arguments: ["", "%", "five%", "5 %", "nan", "inf%", "1e999"])
    func whatIsNotANumberIsNil(text: String) {
        #expect(ShareNotation.parse(text) == nil, "\(text)")
    }

    /// As a person says it: three figures at most, in the units that fit (a `--start-at` years
    /// past said 189,000,000,000 ms before, issue 64).
    static let spoken: [(Duration, String)] = [
        (.milliseconds(850), "850 ms"), (.milliseconds(1_250), "1.25 s"), (.seconds(59), "59 s"),
        (.seconds(200), "3 min 20 s"), (.seconds(180), "3 min"), (.seconds(18_150), "5 h 2 min"),
        (.seconds(93_600), "1 day 2 h"), (.seconds(189_230_400), "2,190 days 4 h"), (.milliseconds(-1_500), "-1.5 s"),
    ]

    @Test(arguments: spoken)
    func roughly(duration: Duration, text: String) {
        #expect(DurationNotation.roughly(duration) == text)
    }
}
