import Testing

@testable import FanoutRun

/// A calibration's cost is taken once its connections' answers have spread: its first seconds
/// (cheaper a notification) and its last, partial second are left out.
@Suite struct SteadyCostTests {
    /// 20 seconds of 10,000 notifications: 8 µs each in the first five, 16 µs after; the last
    /// second partial at 2 µs.
    static func seconds() -> [SteadyCost.Second] {
        (0..<20).map { second in
            let cost: UInt64 = second < 5 ? 8_000 : second == 19 ? 2_000 : 16_000
            return (second, 10_000, 10_000 * cost)
        }
    }

    @Test func theSettledSecondsAreMeasured() throws {
        let steady = try #require(SteadyCost(seconds: Self.seconds(), settle: 5))
        #expect(steady.microseconds == 16)
        #expect((steady.first, steady.last) == (5, 18))
        #expect(steady.spoken == "measured over seconds 5–18, once the connections' answers had spread")
        // Counting from the start would have read it cheaper.
        let whole = try #require(SteadyCost(seconds: Self.seconds(), settle: 0))
        #expect(whole.microseconds < 14)
    }

    @Test func tooFewSettledSecondsGiveNoFigure() {
        // Seconds 0–10: 5 to 9 settled and whole (10 the last, partial): a figure; 0–9: not.
        #expect(SteadyCost(seconds: Array(Self.seconds().prefix(11)), settle: 5)?.last == 9)
        #expect(SteadyCost(seconds: Array(Self.seconds().prefix(10)), settle: 5) == nil)
        #expect(SteadyCost(seconds: [], settle: 5) == nil)
        var unmeasured = Self.seconds()
        unmeasured[7].cpuNanoseconds = nil
        #expect(SteadyCost(seconds: unmeasured, settle: 5) == nil)
    }
}
