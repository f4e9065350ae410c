import Atomics

/// Counts notifications per device token in fixed windows, across every connection, in a
/// table whose size does not grow with the number of tokens (8 MiB whatever the run's length).
///
/// A token's hash picks one of `slotCount` slots; each slot is one atomic word:
///
///      63            40 39            16 15             0
///     ┌────────────────┬────────────────┬────────────────┐
///     │  tag (24 bits) │ window (24 b.) │ count (16 b.)  │
///     └────────────────┴────────────────┴────────────────┘
///
/// `tag` is the hash's top bits, `window` the index of the window (time since start / window
/// length), `count` the notifications the token has had in it. A token that finds another's tag
/// or an older window takes the slot and starts from 1. So the limiter never answers 429 to a
/// token below its limit (short of a 44-bit hash collision); a token sharing its slot with
/// another busy token in the same window may get past it. With a million tokens a window, about
/// 37% of them have their slot to themselves; scenarios that hammer a few tokens are exact.
final class TokenRateLimiter: @unchecked Sendable {
    static let slotCount = 1 << 20
    /// The largest limit a count field holds.
    static let maximumLimit = 0xFFFF

    private let limit: UInt64
    private let window: UInt64
    private let startedAt: UInt64
    private let slots: UnsafeMutablePointer<UnsafeAtomic<UInt64>.Storage>

    /// `limit` notifications per token per `window` nanoseconds, windows counted from `startedAt`.
    init(limit: Int, window: UInt64, startedAt: UInt64) {
        precondition(limit > 0 && limit <= Self.maximumLimit && window > 0)
        self.limit = UInt64(limit)
        self.window = window
        self.startedAt = startedAt
        slots = .allocate(capacity: Self.slotCount)
        slots.initialize(repeating: .init(0), count: Self.slotCount)
    }

    deinit {
        slots.deallocate()
    }

    /// Counts one notification to the token with `hash` at `now` (uptime nanoseconds); false
    /// when it is over the limit (it is still counted: a client that keeps trying stays limited
    /// until the window ends).
    func admit(hash: UInt64, now: UInt64) -> Bool {
        let tag = hash >> 40
        let windowIndex = ((now - min(now, startedAt)) / window) & 0xFF_FFFF
        let slot = UnsafeAtomic<UInt64>(at: slots + Int(hash & UInt64(Self.slotCount - 1)))
        var current = slot.load(ordering: .relaxed)
        while true {
            let sameWindow = current >> 16 == tag << 24 | windowIndex
            let count = sameWindow ? min(current & 0xFFFF, 0xFFFE) + 1 : 1
            let next = tag << 40 | windowIndex << 16 | count
            let (exchanged, original) = slot.weakCompareExchange(
                expected: current,
                desired: next,
                ordering: .relaxed
            )
            if exchanged { return count <= limit }
            current = original
        }
    }
}
