import FanoutInstrument
import FanoutListening
import NIOCore

/// Waits for the first of a sink's own ends (`SinkJob.Ending`), whichever service it mocks:
/// the expected notifications or tokens, its duration, idleness after the last request (or,
/// before any, no request within `firstRequestWithin`); a trigger that could not start ends the
/// wait with an error. It looks when the sink signals (`SinkActivity.changes`), when the
/// trigger ends, and at the next time an end falls due (timed on the loop), never by polling.
///
/// ```
///   look ──► an end reached? ──yes──► its reason
///        └─no──► wait: changes signalled │ the next due time (duration, idle, first request,
///                                          the next second) ──► look
/// ```
struct SinkEndingWatch {
    var ending: SinkJob.Ending
    var activity: any SinkActivity
    /// `--expect-tokens`: complete, the watch ends.
    var expected: ExpectedTokens?
    var trigger: TriggerProcess?

    /// The reason the sink ends. `everySecond` is told, once a second from the start, the
    /// seconds elapsed (the live page's figures).
    func wait(
        on loop: any EventLoop,
        everySecond: ((_ elapsed: Double) -> Void)? = nil
    ) async throws -> SinkJob.Ending.Reason {
        let second: UInt64 = 1_000_000_000
        let started = NIODeadline.now().uptimeNanoseconds
        if let expect = ending.expect { activity.signal(whenAccepted: expect) }
        var lastCount = 0
        var lastChange = started
        var secondsTold: UInt64 = 0
        while true {
            try Task.checkCancellation()
            let now = NIODeadline.now().uptimeNanoseconds
            if let everySecond, now - started >= (secondsTold + 1) * second {
                everySecond(Double(now - started) / 1e9)
                secondsTold += 1
            }
            if let trigger, let failure = trigger.startFailure { throw JobError.resource(failure) }
            if let expect = ending.expect, activity.acceptedCount >= expect { return .expect }
            if let expected, expected.isComplete { return .expectTokens }
            let count = activity.requestCount
            if count != lastCount {
                lastCount = count
                lastChange = activity.lastRequestUptime ?? now
            }
            // The times at which an end falls due, or the next second's.
            var due = UInt64.max
            if let duration = ending.duration {
                if now - started >= duration.wholeNanoseconds { return .duration }
                due = min(due, Self.after(started, duration.wholeNanoseconds))
            }
            if let idle = ending.idleExit {
                if count > 0 {
                    if now - min(now, lastChange) >= idle.wholeNanoseconds { return .idleExit }
                    due = min(due, Self.after(lastChange, idle.wholeNanoseconds))
                } else {
                    let within = max(idle, ending.firstRequestWithin).wholeNanoseconds
                    if now - started >= within { return .noRequest }
                    due = min(due, Self.after(started, within))
                }
            }
            if everySecond != nil { due = min(due, Self.after(started, (secondsTold + 1) * second)) }
            await activity.changes.wait(until: due == .max ? .distantFuture : .uptimeNanoseconds(due), on: loop)
        }
    }

    /// `span` after `base` (uptime nanoseconds), `UInt64.max` past the clock's range. The
    /// command line allows at most a year, but `SinkJob` is public and takes any `Duration`,
    /// whose `wholeNanoseconds` is at most `UInt64.max`: a plain add would trap.
    static func after(_ base: UInt64, _ span: UInt64) -> UInt64 {
        let (sum, overflow) = base.addingReportingOverflow(span)
        return overflow ? .max : sum
    }
}
