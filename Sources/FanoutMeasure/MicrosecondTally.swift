import Histogram

/// Delays counted in the buckets of `makeMicrosecondHistogram()`, in memory of its own, and
/// added to such a histogram when they are read (`move(into:)`): for a per-request delay on a
/// hot path. `Histogram.record` checks its counts array for sharing on every call (one
/// copy-on-write check per answer in the sink's turn, counted with callgrind on the cost
/// workload); here recording is a shift, a count of leading zeros and an increment.
///
/// The buckets are HdrHistogram's for 1 µs to an hour at three significant digits — 2,048
/// sub-buckets, the first bucket at unit resolution, each later one half as fine over twice
/// the range — so a count lands at the index `Histogram` would give it:
///
/// ```
///   value v (µs)  ─►  bucket    b = 53 − leadingZeros(v | 2047)     0 below 2,048
///                     sub-bucket s = v >> b                       1,024..<2,048 when b > 0
///                     index       = (b + 1) · 1,024 + s − 1,024    counts[index] += 1
///   index         ─►  the lowest value of its bucket, s << b
/// ```
/// `move(into:)` records each index's count at its lowest value, except that the smallest and
/// the largest value counted go in as they were (within their buckets): a histogram filled
/// through a tally holds the same counts, minimum and maximum as one filled value by value, so
/// its percentiles, `min`, `max` and mean are the same.
public struct MicrosecondTally: ~Copyable {
    /// Sub-buckets per half bucket: 2^10 (HdrHistogram's `subBucketHalfCount` for 3 digits).
    private static let halfMagnitude = 10
    /// HdrHistogram's `leadingZeroCountBase`: 64 − unit magnitude (0) − 11.
    private static let leadingZeroBase = 53
    /// The length of the counts array of `makeMicrosecondHistogram()`: a value indexed past
    /// it is not recorded, as `Histogram.record` refuses it.
    static let length: Int = {
        let highest = makeMicrosecondHistogram().highestTrackableValue
        var buckets = 1
        var smallestUntrackable: UInt64 = 2048
        while smallestUntrackable <= highest {
            smallestUntrackable <<= 1
            buckets += 1
        }
        return (buckets + 1) << halfMagnitude
    }()

    private let counts: UnsafeMutablePointer<UInt64>
    /// The length of `counts`, read once (the static is a lazily made global).
    private let length: Int
    /// The smallest and largest values (µs) counted since the last `move(into:)`.
    private var minimum = UInt64.max
    private var maximum: UInt64 = 0
    /// Values counted since the last `move(into:)`.
    public private(set) var count: UInt64 = 0

    public init() {
        length = Self.length
        counts = .allocate(capacity: length)
        counts.initialize(repeating: 0, count: length)
    }

    deinit {
        counts.deallocate()
    }

    /// The counts index of `value` (HdrHistogram's `countsIndexForValue`).
    @inline(__always)
    static func index(of value: UInt64) -> Int {
        let bucket = leadingZeroBase - (value | 2047).leadingZeroBitCount
        let subBucket = Int(truncatingIfNeeded: value >> UInt64(bucket))
        return ((bucket + 1) << halfMagnitude) + subBucket - (1 << halfMagnitude)
    }

    /// The lowest value counted at `index` (HdrHistogram's `valueFromIndex`).
    static func lowestValue(at index: Int) -> UInt64 {
        var bucket = (index >> halfMagnitude) - 1
        var subBucket = (index & ((1 << halfMagnitude) - 1)) + (1 << halfMagnitude)
        if bucket < 0 {
            subBucket -= 1 << halfMagnitude
            bucket = 0
        }
        return UInt64(subBucket) << UInt64(bucket)
    }

    /// Counts a delay of `nanoseconds` in microseconds, at least 1, as
    /// `Histogram.record(nanoseconds:)` does.
    @inline(__always)
    public mutating func record(nanoseconds: UInt64) {
        let value = Swift.max(1, nanoseconds / 1000)
        let index = Self.index(of: value)
        guard index < length else { return }
        counts[index] += 1
        minimum = Swift.min(minimum, value)
        maximum = Swift.max(maximum, value)
        count += 1
    }

    /// Adds what was counted to `histogram` (of `makeMicrosecondHistogram()`'s shape) and
    /// starts again from nothing; visits only the indices between the smallest and the largest
    /// value counted.
    public mutating func move(into histogram: inout Histogram<UInt64>) {
        guard count > 0 else { return }
        let highest = Self.index(of: maximum)
        for index in Self.index(of: minimum)...highest where counts[index] > 0 {
            // The smallest value's bucket starts below it: its counts go in at the value itself.
            let value = Swift.max(Self.lowestValue(at: index), minimum)
            let count = counts[index]
            counts[index] = 0
            guard index == highest else {
                histogram.record(value, count: count)
                continue
            }
            if count > 1 { histogram.record(value, count: count - 1) }
            histogram.record(maximum, count: 1)
        }
        minimum = .max
        maximum = 0
        count = 0
    }
}
