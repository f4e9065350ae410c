import Histogram

/// A latency histogram's counts packed the way HdrHistogram's V2 encoding writes them, so that
/// a run keeps one per second in a few kilobytes instead of a 190 KB counts array, and the
/// interval log writes them as they are.
///
/// The histograms are `makeMicrosecondHistogram()`'s shape: 1 µs to an hour, three
/// significant digits, that is 2048 sub-buckets (unit magnitude 0, sub-bucket half-count
/// magnitude 10). The counts array, from index 0 to the last non-zero count, is written as
/// ZigZag LEB128 varints (HdrHistogram's `ZigZagEncoding`):
///
/// ```
///   count > 0          one varint: count
///   one zero           one varint: 0
///   a run of n > 1 0s  one varint: −n
///   varint: zigzag(v) = (v << 1) ^ (v >> 63), 7 bits a byte low first, high bit = more follow;
///           the 9th byte, if reached, carries 8 bits
/// ```
public struct PackedHistogram: Sendable, Hashable {
    /// The counts payload (V2's, before the header and compression).
    public private(set) var counts: [UInt8]
    public private(set) var totalCount: UInt64
    public private(set) var maxValue: UInt64

    public init(_ histogram: Histogram<UInt64>) {
        var bytes: [UInt8] = []
        var nextIndex = 0
        for value in histogram.recordedValues() {
            let index = Self.countsIndex(of: value.value)
            let zeros = index - nextIndex
            if zeros == 1 {
                Self.putVarint(0, into: &bytes)
            } else if zeros > 1 {
                Self.putVarint(-Int64(zeros), into: &bytes)
            }
            Self.putVarint(Int64(value.count), into: &bytes)
            nextIndex = index + 1
        }
        counts = bytes
        totalCount = histogram.totalCount
        maxValue = histogram.totalCount == 0 ? 0 : histogram.max
    }

    /// A V2 counts payload read back (from an interval log), its largest value the highest in
    /// its bucket, as `Histogram.max` gives it; `nil` when it is not one (a
    /// count below zero other than a zero run, or past the histogram's last index).
    public init?(counts bytes: [UInt8]) {
        var total: UInt64 = 0
        var index = 0
        var last = -1
        var position = 0
        let length = Self.countsIndex(of: 3_600_000_000) + 1
        while position < bytes.count {
            let value = Self.getVarint(bytes, at: &position)
            if value < 0 {
                index += Int(-value)
            } else {
                if value > 0 {
                    total += UInt64(value)
                    last = index
                }
                index += 1
            }
            if index > length + Self.subBucketHalfCount { return nil }
        }
        counts = bytes
        totalCount = total
        maxValue = last < 0 ? 0 : Self.value(atIndex: last + 1) - 1
    }

    /// Adds another's counts (shards of a run): every bucket's count is the sum.
    public static func + (left: PackedHistogram, right: PackedHistogram) -> PackedHistogram {
        var sum = left.unpacked()
        sum.add(right.unpacked())
        return PackedHistogram(sum)
    }

    /// The histogram again, count for count.
    public func unpacked() -> Histogram<UInt64> {
        var histogram = makeMicrosecondHistogram()
        forEachCount { _ = histogram.record(Self.value(atIndex: $0), count: $1) }
        return histogram
    }

    /// Calls `body` with each non-zero count and its counts-array index, in order: a
    /// second's few hundred buckets, without the 190 KB array (`value(atIndex:)` is the
    /// bucket's lowest value).
    public func forEachCount(_ body: (_ index: Int, _ count: UInt64) -> Void) {
        var index = 0
        var position = 0
        while position < counts.count {
            let value = Self.getVarint(counts, at: &position)
            if value < 0 {
                index += Int(-value)
            } else {
                if value > 0 { body(index, UInt64(value)) }
                index += 1
            }
        }
    }

    /// Entries in the counts array up to the last non-zero one (V2's payload covers these).
    public var countsLength: Int {
        var length = 0
        var position = 0
        while position < counts.count {
            let value = Self.getVarint(counts, at: &position)
            length += value < 0 ? Int(-value) : 1
        }
        return length
    }

    // MARK: The counts array's layout

    static let subBucketHalfCountMagnitude = 10
    static let subBucketHalfCount = 1 << subBucketHalfCountMagnitude
    static let subBucketMask: UInt64 = (1 << (subBucketHalfCountMagnitude + 1)) - 1
    /// 64 − unit magnitude (0) − sub-bucket count magnitude (11).
    static let leadingZeroCountBase = 64 - (subBucketHalfCountMagnitude + 1)

    static func countsIndex(of value: UInt64) -> Int {
        let bucket = leadingZeroCountBase - (value | subBucketMask).leadingZeroBitCount
        let subBucket = Int(value >> UInt64(bucket))
        return ((bucket + 1) << subBucketHalfCountMagnitude) + subBucket - subBucketHalfCount
    }

    public static func value(atIndex index: Int) -> UInt64 {
        var bucket = (index >> subBucketHalfCountMagnitude) - 1
        var subBucket = (index & (subBucketHalfCount - 1)) + subBucketHalfCount
        if bucket < 0 {
            subBucket -= subBucketHalfCount
            bucket = 0
        }
        return UInt64(subBucket) << UInt64(bucket)
    }

    // MARK: ZigZag LEB128

    static func putVarint(_ value: Int64, into bytes: inout [UInt8]) {
        var zigzag = UInt64(bitPattern: (value << 1) ^ (value >> 63))
        for _ in 0..<8 {
            if zigzag < 0x80 {
                bytes.append(UInt8(zigzag))
                return
            }
            bytes.append(UInt8(zigzag & 0x7F) | 0x80)
            zigzag >>= 7
        }
        bytes.append(UInt8(truncatingIfNeeded: zigzag))
    }

    static func getVarint(_ bytes: [UInt8], at position: inout Int) -> Int64 {
        var zigzag: UInt64 = 0
        var shift: UInt64 = 0
        while position < bytes.count {
            let byte = bytes[position]
            position += 1
            if shift == 56 {
                zigzag |= UInt64(byte) << 56
                break
            }
            zigzag |= UInt64(byte & 0x7F) << shift
            if byte < 0x80 { break }
            shift += 7
        }
        return Int64(bitPattern: zigzag >> 1) ^ -Int64(bitPattern: zigzag & 1)
    }
}
