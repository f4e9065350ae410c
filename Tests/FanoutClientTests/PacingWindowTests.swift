import Testing

@testable import FanoutClient

/// The open model's pacing window: ¼ of the round trip on a ladder of 200 µs × 2ⁿ, following
/// the smallest answer time of the last two seconds, and the instants it puts tickets on.
struct PacingWindowTests {
    static let us: UInt64 = 1_000
    static let ms: UInt64 = 1_000_000

    @Test(arguments: [
        (100 * us, 200 * us),  // nghttpd on loopback: the floor, the grid of other timed work
        (800 * us, 200 * us),  // ¼ is 200 µs
        (1_599 * us, 200 * us),  // just short of 400 µs
        (1_600 * us, 400 * us),
        (10 * ms, 1_600 * us),  // a 10 ms sink: 2.5 ms → 1.6 ms
        (40 * ms, 6_400 * us),
        (80 * ms, 12_800 * us),  // APNs's: the ceiling, where h2load's bursts are 10 ms apart
        (1_000 * ms, 12_800 * us),
    ])
    func theWindowIsAnEighthOfTheRoundTripOnTheLadder(roundTrip: UInt64, window: UInt64) {
        #expect(PacingWindow.window(roundTrip: roundTrip) == window)
    }

    /// It follows the smallest answer time: a slower answer does not widen it, a faster one
    /// narrows it at once, and a round trip not seen for two seconds is forgotten.
    @Test func itFollowsTheSmallestRecentRoundTrip() {
        var pacing = PacingWindow(.auto)
        #expect(pacing.nanoseconds == 200 * Self.us, "the floor before any answer")
        pacing.answered(sentAt: 0, now: 40 * Self.ms)
        #expect(pacing.nanoseconds == 200 * Self.us, "and before two tickets")
        pacing.ticket { 100 * Self.ms }
        pacing.answered(sentAt: 0, now: 40 * Self.ms)
        #expect(pacing.nanoseconds == 6_400 * Self.us)
        pacing.answered(sentAt: 100 * Self.ms, now: 300 * Self.ms)
        #expect(pacing.nanoseconds == 6_400 * Self.us, "a slower answer leaves it")
        pacing.answered(sentAt: 400 * Self.ms, now: 410 * Self.ms)
        #expect(pacing.nanoseconds == 1_600 * Self.us, "a faster one narrows it")
        // The next second: the 10 ms answer is still within the last two.
        pacing.answered(sentAt: 1_500 * Self.ms, now: 1_540 * Self.ms)
        #expect(pacing.nanoseconds == 1_600 * Self.us)
        // Two seconds on, only 40 ms answers are left.
        pacing.answered(sentAt: 2_600 * Self.ms, now: 2_640 * Self.ms)
        #expect(pacing.nanoseconds == 6_400 * Self.us)
        #expect(pacing.largest == 6_400 * Self.us)
    }

    /// A window holds at most 40 of the connection's tickets: 5,000/s a connection (200 µs
    /// apart) gets 6.4 ms at 80 ms (and 180 µs apart too), 6,667/s 3.2 ms; 1,250/s
    /// the ceiling; before any answer, the floor.
    @Test func aWindowHoldsAtMost40Tickets() {
        #expect(PacingWindow.window(roundTrip: 80 * Self.ms, spacing: 200 * Self.us) == 6_400 * Self.us)
        #expect(PacingWindow.window(roundTrip: 80 * Self.ms, spacing: 180 * Self.us) == 6_400 * Self.us)
        #expect(PacingWindow.window(roundTrip: 80 * Self.ms, spacing: 150 * Self.us) == 3_200 * Self.us)
        #expect(PacingWindow.window(roundTrip: 80 * Self.ms, spacing: 800 * Self.us) == 12_800 * Self.us)
        #expect(PacingWindow.window(roundTrip: 80 * Self.ms, spacing: 5 * Self.us) == 200 * Self.us)
        var pacing = PacingWindow(.auto)
        for _ in 0..<64 { pacing.ticket { 200 * Self.us } }
        #expect(pacing.nanoseconds == 200 * Self.us, "no answer yet: the floor")
        pacing.answered(sentAt: 1_000 * Self.ms, now: 1_080 * Self.ms)
        #expect(pacing.nanoseconds == 6_400 * Self.us)
        // The rate falls to a quarter: within 16 tickets the window widens.
        for _ in 0..<16 { pacing.ticket { 800 * Self.us } }
        #expect(pacing.nanoseconds == 12_800 * Self.us)
    }

    /// A burst fits in half the spare streams: 4 × 50 streams at 90% of their 4,000/s against
    /// 50 ms (900/s a connection, 1.11 ms apart: 45 in flight, 5 spare) gets 1.6 ms, not the
    /// 6.4 ms of its round trip; at 75%, 6.4 ms; none spare, the floor. APNs's 1,000 streams
    /// at 80 ms leave the window to the round trip.
    @Test func aBurstFitsInHalfTheSpareStreams() {
        func window(streams: Int, spacing: UInt64, roundTrip: UInt64) -> UInt64 {
            PacingWindow.window(
                roundTrip: roundTrip,
                spacing: spacing,
                headroom: PacingWindow.headroom(streams: streams, spacing: spacing, meanRoundTrip: roundTrip)
            )
        }
        #expect(window(streams: 50, spacing: 1_111 * Self.us, roundTrip: 50 * Self.ms) == 1_600 * Self.us)
        #expect(window(streams: 50, spacing: 1_333 * Self.us, roundTrip: 50 * Self.ms) == 6_400 * Self.us)
        #expect(window(streams: 50, spacing: 900 * Self.us, roundTrip: 50 * Self.ms) == 200 * Self.us)
        #expect(window(streams: 1000, spacing: 800 * Self.us, roundTrip: 80 * Self.ms) == 12_800 * Self.us)
        // Through the connection's own figures: the window narrows once the limit is known.
        var pacing = PacingWindow(.auto)
        pacing.streamLimit(50)
        pacing.ticket { 1_111 * Self.us }
        pacing.answered(sentAt: 0, now: 50 * Self.ms)
        #expect(pacing.nanoseconds == 1_600 * Self.us)
    }

    @Test func aFixedWindowStaysAndZeroIsExactTimes() {
        var fixed = PacingWindow(.fixed(.milliseconds(2)))
        fixed.answered(sentAt: 0, now: 80 * Self.ms)
        #expect(fixed.nanoseconds == 2 * Self.ms)
        #expect(fixed.horizon(now: 5 * Self.ms + 300) == 6 * Self.ms - 1)
        #expect(fixed.wake(for: 7 * Self.ms + 5) == 6 * Self.ms)
        let exact = PacingWindow(.fixed(.zero))
        #expect(exact.horizon(now: 5 * Self.ms + 300) == 5 * Self.ms + 300)
        #expect(exact.wake(for: 7 * Self.ms + 5) == 7 * Self.ms + 5)
    }
}
