import NIOConcurrencyHelpers

/// Each slot's reconnect timer, numbered, so the run can replace one that has not fired
/// (`ConnectionPool.Action.hurry`) without a race: a timer fires only if it is still the
/// slot's current one, and one that fired cannot be replaced.
final class SlotTimers: Sendable {
    private let timers: NIOLockedValueBox<[(number: UInt64, fired: Bool)]>

    init(slots: Int) {
        timers = NIOLockedValueBox(Array(repeating: (0, true), count: max(1, slots)))
    }

    /// A new timer for `slot`; the previous one, if it has not fired, never will.
    func arm(_ slot: Int) -> UInt64 {
        timers.withLockedValue { timers in
            timers[slot] = (timers[slot].number &+ 1, false)
            return timers[slot].number
        }
    }

    /// A timer replacing `slot`'s current one, or `nil` when that one has fired already.
    func rearm(_ slot: Int) -> UInt64? {
        timers.withLockedValue { timers in
            guard !timers[slot].fired else { return nil }
            timers[slot].number &+= 1
            return timers[slot].number
        }
    }

    /// Whether timer `number` of `slot` may go ahead (it is the current one); it has fired.
    func fire(_ slot: Int, timer number: UInt64) -> Bool {
        timers.withLockedValue { timers in
            guard timers[slot].number == number, !timers[slot].fired else { return false }
            timers[slot].fired = true
            return true
        }
    }
}
