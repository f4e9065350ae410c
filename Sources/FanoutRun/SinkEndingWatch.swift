import FanoutInstrument
import FanoutListening
import NIOCore

/// Waits for the first of a sink's own ends (`SinkJob.Ending`), whichever service it mocks:
/// the expected notifications or tokens, its duration, idleness after the last request (or,
/// before any, no request within `firstRequestWithin`); a trigger that could not start ends the
/// wait with an error. It looks when the sink signals (`SinkActivity.changes`), when the
/// trigger ends, and at the next time an end falls due (timed on the loop), never by polling:
/// what it makes of each look is `SinkEndings`' decision.
struct SinkEndingWatch {
    var ending: SinkJob.Ending
    var activity: any SinkActivity
    /// `--expect-tokens`: complete, the watch ends.
    var expected: ExpectedTokens?
    var trigger: TriggerProcess?
    /// Told once, at once, when the trigger ended with a status other than 0 before any request
    /// arrived: the line a person needs while the sink waits on (a `curl` to a provider that is
    /// not there failed, and the sink said nothing until ^C).
    var triggerFailed: (@Sendable (String) -> Void)?

    /// The reason the sink ends. `everySecond` is told, once a second from the start, the
    /// seconds elapsed (the live page's figures).
    func wait(
        on loop: any EventLoop,
        everySecond: ((_ elapsed: Double) -> Void)? = nil
    ) async throws -> SinkJob.Ending.Reason {
        var endings = SinkEndings(ending, startedAt: NIODeadline.now().uptimeNanoseconds, ticks: everySecond != nil)
        if let expect = ending.expect { activity.signal(whenAccepted: expect) }
        var toldTriggerFailed = false
        while true {
            try Task.checkCancellation()
            if let trigger, let failure = trigger.startFailure {
                throw JobError.resource(.command, failure)
            }
            if let trigger, !toldTriggerFailed, let status = trigger.exitStatus, status != 0,
                activity.requestCount == 0
            {
                toldTriggerFailed = true
                triggerFailed?(
                    "trigger: \(trigger.command) exited with status \(status) before any request (its output: "
                        + "\(trigger.logPath)); the sink waits on for its end (--expect, --duration, --idle-exit) or ^C"
                )
            }
            let now = NIODeadline.now().uptimeNanoseconds
            let look = endings.look(
                now: now,
                requests: activity.requestCount,
                accepted: activity.acceptedCount,
                lastRequest: activity.lastRequestUptime,
                tokensComplete: expected?.isComplete ?? false
            )
            if let tick = look.tick { everySecond?(tick) }
            switch look.next {
            case .end(let reason):
                return reason
            case .wait(let due):
                await activity.changes.wait(until: due.map(NIODeadline.uptimeNanoseconds) ?? .distantFuture, on: loop)
            }
        }
    }
}

/// What a sink's ends make of one look at its counts, as a state machine: given the time and
/// what the sink counted, it says whether the sink ends (and why) or until when to wait. No
/// clock of its own and no I/O: the watch feeds it, tests feed it times.
///
/// ```
///   look(now, counts) ──► end(reason)  expected notifications or tokens, the duration, idle
///                     └─► wait(until)  the earliest of: the duration's end, the idle end
///                                      (the last request + idle; before any, the first
///                                      request's deadline), the next second (ticks)
/// ```
///
/// The last request's time is the sink's own when it keeps one (the FCM sink's: a request's
/// arrival, or the time its held answer leaves; the APNs sink's: the latest addition of a
/// connection's counts); else the look that saw the count move.
struct SinkEndings {
    let ending: SinkJob.Ending
    let startedAt: UInt64
    /// Whether a tick is asked each second.
    let ticks: Bool
    private var lastCount = 0
    private var lastChange: UInt64
    private var secondsTold: UInt64 = 0

    init(_ ending: SinkJob.Ending, startedAt: UInt64, ticks: Bool = false) {
        self.ending = ending
        self.startedAt = startedAt
        self.ticks = ticks
        lastChange = startedAt
    }

    enum Next: Equatable {
        case end(SinkJob.Ending.Reason)
        /// Until this uptime, or a signal (`nil`: a signal alone).
        case wait(UInt64?)
    }

    /// A look's outcome: what next, and the seconds elapsed when a second's tick fell due.
    struct Look: Equatable {
        var next: Next
        var tick: Double?
    }

    private static let second: UInt64 = 1_000_000_000

    mutating func look(
        now: UInt64,
        requests: Int,
        accepted: Int,
        lastRequest: UInt64?,
        tokensComplete: Bool
    ) -> Look {
        var tick: Double?
        if ticks, now - min(now, startedAt) >= (secondsTold + 1) * Self.second {
            tick = Double(now - startedAt) / 1e9
            secondsTold += 1
        }
        if let expect = ending.expect, accepted >= expect { return Look(next: .end(.expect), tick: tick) }
        if tokensComplete { return Look(next: .end(.expectTokens), tick: tick) }
        if requests != lastCount {
            lastCount = requests
            lastChange = lastRequest ?? now
        } else if let lastRequest, lastRequest > lastChange {
            // The sink's own time moved on without a new count: an answer held later.
            lastChange = lastRequest
        }
        var due = UInt64.max
        if let duration = ending.duration {
            if now - min(now, startedAt) >= duration.wholeNanoseconds { return Look(next: .end(.duration), tick: tick) }
            due = min(due, Self.after(startedAt, duration.wholeNanoseconds))
        }
        if let idle = ending.idleExit {
            if requests > 0 {
                if now >= lastChange, now - lastChange >= idle.wholeNanoseconds {
                    return Look(next: .end(.idleExit), tick: tick)
                }
                due = min(due, Self.after(lastChange, idle.wholeNanoseconds))
            } else {
                let within = max(idle, ending.firstRequestWithin).wholeNanoseconds
                if now - min(now, startedAt) >= within { return Look(next: .end(.noRequest), tick: tick) }
                due = min(due, Self.after(startedAt, within))
            }
        }
        if ticks { due = min(due, Self.after(startedAt, (secondsTold + 1) * Self.second)) }
        return Look(next: .wait(due == .max ? nil : due), tick: tick)
    }

    /// `span` after `base` (uptime nanoseconds), `UInt64.max` past the clock's range. The
    /// command line allows at most a year, but `SinkJob` is public and takes any `Duration`,
    /// whose `wholeNanoseconds` is at most `UInt64.max`: a plain add would trap.
    static func after(_ base: UInt64, _ span: UInt64) -> UInt64 {
        let (sum, overflow) = base.addingReportingOverflow(span)
        return overflow ? .max : sum
    }
}
