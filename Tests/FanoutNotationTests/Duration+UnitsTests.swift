import FanoutNotation
import Testing

/// One conversion a meaning: a duration in seconds, in milliseconds, and a count of microseconds
/// in milliseconds, each to the nanosecond the way every document has written them.
@Suite struct DurationUnitsTests {
    @Test func secondsAndMillisecondsToTheNanosecond() {
        #expect(Duration.milliseconds(1500).seconds == 1.5)
        #expect(Duration.microseconds(250).milliseconds == 0.25)
        #expect(Duration.nanoseconds(1).seconds == 1e-9)
        #expect(Duration.seconds(-3).seconds == 0)
        #expect(Duration.seconds(-3).milliseconds == 0)
        // The figure the reports wrote before: whole nanoseconds over 1e9 (a finer part dropped).
        let odd = Duration(secondsComponent: 7, attosecondsComponent: 123_456_789_000_000_400)
        #expect(odd.seconds == Double(odd.wholeNanoseconds) / 1e9)
        #expect(odd.milliseconds == Double(odd.wholeNanoseconds) / 1e6)
    }

    @Test func microsecondsInMilliseconds() {
        #expect(UInt64(86_850).microsecondsInMilliseconds == 86.85)
        #expect(0.microsecondsInMilliseconds == 0)
        #expect(UInt64(1).microsecondsInMilliseconds == 0.001)
    }
}
