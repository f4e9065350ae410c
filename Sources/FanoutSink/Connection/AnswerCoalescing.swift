/// How far a held answer drawn from a distribution with a spread (log-normal, normal, uniform,
/// empirical) may move so that answers drawn close together go out in one wake and one write:
/// `share` of its hold, at most `longest`, rounded down to a power of two nanoseconds. The hold
/// moves to the nearest multiple of that window on the uptime clock (`nearest`), up to half a
/// window sooner or later, and the sink serves and reports that hold as the scenario's: the
/// holds served are the distribution smoothed by a uniform kernel one window wide, whose mean
/// and quantiles move by far less than the window. Windows of powers of two nest, so an instant
/// of a long window is an instant of every shorter one, and answers with different holds meet.
///
/// ```
///   hold 80 ms, 3%: 2.4 ms → window 2²¹ ns (2.1 ms)      hold 10 ms: 300 µs → 2¹⁸ ns (262 µs)
///   2²¹ │       ╷               ╷               ╷
///   2¹⁸ │ ╷ ╷ ╷ ╷ ╷ ╷ ╷ ╷ ╷ ╷ ╷ ╷ ╷ ╷ ╷ ╷ ╷ ╷ ╷ ╷ ╷
///   drawn │  a b  c       d                           a, b, d (80 ms holds) move to the long
///         │       ▲  ▲      ▲                         window's nearest instants; c (10 ms) to
///                                                     the short one's; a and b go out together
/// ```
///
/// A floor — a fixed latency, a stall's end, `--connection-rate`'s pacing — never moves: its
/// answers come due together already (a read burst's requests share their receive time), and a
/// floor's wait would be lateness that every measurement against it carries (rounding 50 ms
/// floors up to their 1 ms window put two of three CI runs of GroundTruthTests' last seconds
/// over their 3 ms bound).
///
/// Why a share and not one window for every hold: 250 µs left answers at log-normal 80 ms
/// costing the sink 3.5 times what fixed 80 ms costs (they trickle out one by one); 2 ms would
/// move a 10 ms hold by as much as a 10 ms sink may be off (docs/sink.md).
public struct AnswerCoalescing: Sendable, Hashable {
    /// The share of a hold an answer may move.
    public var share: Double
    /// The longest window, in nanoseconds, whatever the hold.
    public var longest: UInt64

    public init(share: Double, longest: UInt64) {
        self.share = max(0, share)
        self.longest = longest
    }

    /// No moving: each answer at its drawn time.
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
}
