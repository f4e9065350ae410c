/// How far a held answer may move from its due time so that answers due close together go
/// out in one wake and one write: `share` of its hold, at most `longest`, rounded down to a
/// power of two nanoseconds. A floor is written at the next multiple of that window on the
/// uptime clock; windows of powers of two nest, so an instant of a long window is an instant
/// of every shorter one, and answers with different holds still meet.
///
/// ```
///   hold 80 ms, 3%: 2.4 ms → window 2²¹ ns (2.1 ms)      hold 10 ms: 300 µs → 2¹⁸ ns (262 µs)
///   2²¹ │       ╷               ╷               ╷
///   2¹⁸ │ ╷ ╷ ╷ ╷ ╷ ╷ ╷ ╷ ╷ ╷ ╷ ╷ ╷ ╷ ╷ ╷ ╷ ╷ ╷ ╷ ╷
///   due │   a  b      c    d                       a, b, d (80 ms holds) wait for the long
///       │       ▲     ▲    ▲                       window's instant; c (10 ms) for the next
///                                                  short one; b and a go out together
/// ```
///
/// A hold drawn from a distribution with a spread (log-normal, normal, uniform, empirical)
/// moves to its window's *nearest* instant instead (`nearest`): up to half a window sooner or
/// later, so the holds served keep the distribution's shape — its mean and quantiles move by
/// far less than the window — and the sink reports that hold as the scenario's. A floor — a
/// fixed latency, a stall's end, the pacing of `--connection-rate` — is never answered sooner:
/// it waits for the next instant, and that wait is the sink's lateness, timed from the due time
/// like any other (`SinkTiming`), so no figure hides it.
///
/// Why a share and not one window for every hold: 250 µs left answers at log-normal 80 ms
/// costing the sink 3.5 times what fixed 80 ms costs (they trickle out one by one); 2 ms would
/// put a 10 ms hold's lateness past what a 10 ms sink may add (docs/sink.md).
public struct AnswerCoalescing: Sendable, Hashable {
    /// The share of a hold an answer may wait past its due time.
    public var share: Double
    /// The longest wait, in nanoseconds, whatever the hold.
    public var longest: UInt64

    public init(share: Double, longest: UInt64) {
        self.share = max(0, share)
        self.longest = longest
    }

    /// No waiting: each answer at its due time.
    public static let off = AnswerCoalescing(share: 0, longest: 0)

    /// log₂ of the window (ns) for an answer held `hold` ns; 0: none (windows under 1 µs are
    /// not worth a shift).
    package func shift(forHold hold: UInt64) -> UInt8 {
        let allowed = min(UInt64(min(Double(hold) * share, Double(UInt64.max >> 1))), longest)
        guard allowed >= 1024 else { return 0 }
        return UInt8(63 - allowed.leadingZeroBitCount)
    }

    /// The instant of the window 2^`shift` ns nearest to `time` (the later one at a tie): where
    /// a drawn hold moves, half a window either way, so that the holds served keep the
    /// distribution's quantiles (smoothed by a uniform kernel one window wide, whose variance,
    /// window²/12, is 0.37 ms² for 80 ms holds against log-normal σ 0.25's 420 ms²).
    static func nearest(_ time: UInt64, shift: UInt8) -> UInt64 {
        guard shift > 0 else { return time }
        let half = UInt64(1) << (shift - 1)
        guard time <= UInt64.max - half else { return time }
        return (time + half) & ~((UInt64(1) << shift) - 1)
    }

    /// When an answer due at `due` with window 2^`shift` ns is written: the window's next
    /// instant, or `due` itself when it is one.
    static func writeTime(due: UInt64, shift: UInt8) -> UInt64 {
        guard shift > 0 else { return due }
        let mask = (UInt64(1) << shift) - 1
        guard due & mask != 0, due <= UInt64.max - mask else { return due }
        return (due | mask) + 1
    }
}
