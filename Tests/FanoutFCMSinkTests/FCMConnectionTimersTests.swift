import Testing

@testable import FanoutFCMSink

/// An FCM connection's idle and request timeouts (`FCMConnectionTimers`), fed times by hand.
@Suite struct FCMConnectionTimersTests {
    static let second: UInt64 = 1_000_000_000

    @Test func anIdleConnectionIsClosedBetweenOneAndTwoIdleTimeoutsAfterItsLastRequest() {
        var timers = FCMConnectionTimers(idleTimeout: .seconds(10), requestTimeout: nil, openedAt: 0)
        #expect(timers.nextCheck == 10 * Self.second)
        // A request at 4 s: the check at 10 s finds it, and looks again at 20 s.
        timers.requestArrived()
        var idle = timers.isIdle(now: 10 * Self.second, busy: false)
        #expect(idle == false)
        #expect(timers.nextCheck == 20 * Self.second)
        // Nothing since, but a stream open (or an answer held): not idle.
        idle = timers.isIdle(now: 20 * Self.second, busy: true)
        #expect(idle == false)
        #expect(timers.nextCheck == 30 * Self.second)
        idle = timers.isIdle(now: 30 * Self.second, busy: false)
        #expect(idle)
        // Said once: no idle check is left behind to wake the loop while the connection ends.
        #expect(timers.nextCheck == nil)
        idle = timers.isIdle(now: 31 * Self.second, busy: false)
        #expect(idle == false)
        // Before its check, never.
        var early = FCMConnectionTimers(idleTimeout: .seconds(10), requestTimeout: nil, openedAt: 0)
        idle = early.isIdle(now: 9 * Self.second, busy: false)
        #expect(idle == false)
    }

    @Test func requestsAreCheckedAtTheOldestIncompletesTime() {
        var timers = FCMConnectionTimers(idleTimeout: nil, requestTimeout: .seconds(10), openedAt: 0)
        #expect(timers.requestCutoff(now: 9 * Self.second) == nil)
        #expect(timers.requestCutoff(now: 10 * Self.second) == 0)
        // One still incomplete, begun at 7 s: looked at again at 17 s, its cutoff 7 s.
        timers.requestsChecked(now: 10 * Self.second, oldestLeft: 7 * Self.second)
        #expect(timers.nextCheck == 17 * Self.second)
        #expect(timers.requestCutoff(now: 17 * Self.second) == 7 * Self.second)
        // None left: a timeout on.
        timers.requestsChecked(now: 17 * Self.second, oldestLeft: nil)
        #expect(timers.nextCheck == 27 * Self.second)
        let none = FCMConnectionTimers(idleTimeout: nil, requestTimeout: nil, openedAt: 0)
        #expect(none.nextCheck == nil)
    }
}
