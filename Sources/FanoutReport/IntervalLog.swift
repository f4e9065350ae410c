import FanoutClient
import Foundation

/// HdrHistogram's interval log (`.hlog`, format 1.3): one line per second of the run, each a
/// V2 histogram, compressed and base64-coded, which HdrHistogram's readers (Java's
/// `HistogramLogReader`, Python's `hdrh.log`, `HistogramLogAnalyzer`) decode.
///
/// ```
///   #[Fanout <version>: latencies in microseconds, one interval a second]
///   #[Histogram log format version 1.3]
///   #[StartTime: 1795330800.000 (seconds since epoch), 2026-11-22T07:40:00Z]
///   #[BaseTime: 1795330800.000 (seconds since epoch)]
///   "StartTimestamp","Interval_Length","Interval_Max","Interval_Compressed_Histogram"
///   0.000,1.000,12.415,HISTFAAAACl4AQ…        start (s from BaseTime), length (s), max (ms)
/// ```
///
/// A histogram on a line:
///
/// ```
///   base64( compression header | zlib stream of ( encoding header | counts ) )
///   compression header  cookie 0x1c849314, length of the zlib stream       (u32 BE each)
///   encoding header     cookie 0x1c849313, counts length, normalizing index offset 0,
///                       significant digits 3 (u32 BE each), lowest 1, highest 3,600,000,000
///                       (u64 BE each), integer-to-double ratio 1.0 (f64 BE)
///   counts              ZigZag LEB128, runs of zeros as negative counts (`PackedHistogram`)
/// ```
///
/// The zlib stream holds DEFLATE stored blocks: the counts are already varints with zero runs,
/// and every inflater reads stored blocks.
public struct IntervalLog: Sendable {
    public var intervals: [LoadInterval]
    /// When the run started, seconds since the epoch.
    public var start: Double
    /// The run's length in seconds (the last interval ends there).
    public var length: Double

    public init(intervals: [LoadInterval], start: Double, length: Double) {
        self.intervals = intervals
        self.start = start
        self.length = length
    }

    public var text: String {
        let date = ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: start))
        var lines = [
            "#[Fanout \(FanoutVersion.current): latencies in microseconds, one interval a second]",
            "#[Histogram log format version 1.3]",
            String(format: "#[StartTime: %.3f (seconds since epoch), %@]", start, date),
            String(format: "#[BaseTime: %.3f (seconds since epoch)]", start),
            #""StartTimestamp","Interval_Length","Interval_Max","Interval_Compressed_Histogram""#,
        ]
        for interval in intervals {
            let from = Double(interval.second)
            let to = min(length, from + 1)
            lines.append(
                String(
                    format: "%.3f,%.3f,%.3f,%@",
                    from,
                    max(0, to - from),
                    Double(interval.latencies.maxValue) / 1000,
                    Self.encode(interval.latencies)
                )
            )
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// One histogram as the base64 text of a log line.
    public static func encode(_ histogram: PackedHistogram) -> String {
        var payload: [UInt8] = []
        payload.appendBigEndian(UInt32(0x1c84_9313))
        payload.appendBigEndian(UInt32(histogram.counts.count))
        payload.appendBigEndian(UInt32(0))
        payload.appendBigEndian(UInt32(3))
        payload.appendBigEndian(UInt64(1))
        payload.appendBigEndian(UInt64(3_600_000_000))
        payload.appendBigEndian((1.0 as Double).bitPattern)
        payload += histogram.counts
        let compressed = ZlibStored.wrap(payload)
        var bytes: [UInt8] = []
        bytes.appendBigEndian(UInt32(0x1c84_9314))
        bytes.appendBigEndian(UInt32(compressed.count))
        bytes += compressed
        return Data(bytes).base64EncodedString()
    }
}

/// A zlib stream (RFC 1950) of DEFLATE stored blocks (RFC 1951 §3.2.4):
///
/// ```
///   78 01                       CMF (deflate, 32 KiB window), FLG (no dictionary, check bits)
///   per block of ≤ 65,535 bytes:
///     01|00                     BFINAL on the last block, BTYPE 00 (stored)
///     LEN NLEN                  u16 LE each, NLEN = ~LEN
///     the bytes
///   Adler-32 of the data        u32 BE
/// ```
enum ZlibStored {
    static func wrap(_ data: [UInt8]) -> [UInt8] {
        var out: [UInt8] = [0x78, 0x01]
        var offset = 0
        repeat {
            let count = min(65_535, data.count - offset)
            let last = offset + count == data.count
            out.append(last ? 0x01 : 0x00)
            out += [UInt8(count & 0xFF), UInt8(count >> 8), UInt8(~count & 0xFF), UInt8((~count >> 8) & 0xFF)]
            out += data[offset..<offset + count]
            offset += count
        } while offset < data.count
        out.appendBigEndian(adler32(data))
        return out
    }

    static func adler32(_ data: [UInt8]) -> UInt32 {
        var a: UInt32 = 1
        var b: UInt32 = 0
        for byte in data {
            a = (a + UInt32(byte)) % 65_521
            b = (b + a) % 65_521
        }
        return b << 16 | a
    }
}

extension Array where Element == UInt8 {
    mutating func appendBigEndian<Integer: FixedWidthInteger>(_ value: Integer) {
        Swift.withUnsafeBytes(of: value.bigEndian) { append(contentsOf: $0) }
    }
}
