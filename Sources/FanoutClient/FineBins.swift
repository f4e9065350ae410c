/// A short run's completions in 100 ms bins, for the report's throughput chart: a whole second
/// is as long as a 1.1 s fan-out, so seconds alone draw it as two bars.
///
/// ```
///   time from the run's start:  0      100 ms   200 ms        9.9 s     10 s
///   bin:                        [  0  ][   1  ][  2  ] …  [   99   ]  past it: not filed
/// ```
public enum FineBins {
    /// A bin's length, nanoseconds.
    public static let width: UInt64 = 100_000_000
    /// Bins kept: the run's first 10 s.
    public static let count = 100
}

/// One event loop's `FineBins`, filed without touching the hot path: the loop's recorder counts
/// its completions anyway, so a bin's count is that running total at the bin's end less the
/// total at its start. The recorder calls `advance(to:total:)` only once `now` reaches `next`
/// (one compare a notification, shared with the check for the end of its second), that is ten
/// times a second for the first 10 s, then never.
///
/// ```
///   total:     3      41          97         …
///   boundary:  start  start+100ms start+200ms …  start+10s → next = .max
///   counts:           [38]        [56]       …
/// ```
struct FineBinRecorder {
    /// The completions in each bin, from the run's start; the array is made once, with the
    /// recorder.
    private(set) var counts = [Int](repeating: 0, count: FineBins.count)
    /// When the next boundary falls: the run's start, then each bin's end; `.max` past the last.
    private(set) var next: UInt64
    private let start: UInt64
    /// The bin in progress: -1 before the run's start (completions then are not filed).
    private var bin = -1
    /// The running total at the start of `bin`.
    private var mark = 0

    init(start: UInt64) {
        self.start = start
        next = start
    }

    /// Closes every bin that ended by `now`; `total` completions were counted before `now`.
    mutating func advance(to now: UInt64, total: Int) {
        while now >= next {
            if bin >= 0 { counts[bin] = total - mark }
            mark = total
            bin += 1
            next = bin < FineBins.count ? start &+ UInt64(bin + 1) * FineBins.width : .max
        }
    }

    /// Closes the bin in progress (the run's end), `total` completions counted in all.
    mutating func finish(total: Int) {
        if bin >= 0 && bin < FineBins.count { counts[bin] = total - mark }
        bin = FineBins.count
        next = .max
    }
}
