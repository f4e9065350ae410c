import FanoutFiles
import FanoutMeasure
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
    public var entries: [Entry]
    /// When the run started, seconds since the epoch.
    public var start: Double

    public init(entries: [Entry], start: Double) {
        self.entries = entries
        self.start = start
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
        for entry in entries {
            lines.append(
                String(
                    format: "%.3f,%.3f,%.3f,%@",
                    entry.start,
                    entry.length,
                    Double(entry.histogram.maxValue) / 1000,
                    Self.encode(entry.histogram)
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

extension IntervalLog {
    /// One interval read back from a log.
    public struct Entry: Sendable {
        /// Seconds from the log's base time.
        public var start: Double
        public var length: Double
        public var histogram: PackedHistogram

        /// An interval of `length` seconds from `start` (seconds from the log's base time).
        public init(start: Double, length: Double, histogram: PackedHistogram) {
            self.start = start
            self.length = length
            self.histogram = histogram
        }
    }

    /// The intervals of a log Fanout wrote, and its start time; errors say which line and what.
    public static func read(_ text: String, file: String) throws(ResultsError) -> (start: Double, entries: [Entry]) {
        var start = 0.0
        var entries: [Entry] = []
        for numbered in TextLines(text) where !numbered.text.isEmpty {
            let line = numbered.text
            let place = "\(file):\(numbered.number)"
            if line.hasPrefix("#[StartTime: ") {
                let value = line.dropFirst("#[StartTime: ".count).prefix { $0.isNumber || $0 == "." }
                guard let seconds = Double(value) else {
                    throw ResultsError(.malformed, "\(place): the start time is not a number")
                }
                start = seconds
                continue
            }
            if line.hasPrefix("#") || line.hasPrefix("\"") { continue }
            let fields = line.split(separator: ",")
            guard fields.count == 4, let from = Double(fields[0]), let length = Double(fields[1]) else {
                throw ResultsError(.malformed, "\(place): an interval is START,LENGTH,MAX,HISTOGRAM")
            }
            guard let histogram = decode(String(fields[3])) else {
                throw ResultsError(
                    .malformed,
                    "\(place): not a histogram Fanout wrote (V2, 1 µs to an hour, 3 digits, zlib stored blocks)"
                )
            }
            entries.append(Entry(start: from, length: length, histogram: histogram))
        }
        return (start, entries)
    }

    /// A histogram from a log line's base64 text, as `encode` writes it.
    static func decode(_ text: String) -> PackedHistogram? {
        guard let data = Data(base64Encoded: text) else { return nil }
        let bytes = [UInt8](data)
        guard bytes.count > 8, bytes.readBigEndian(UInt32.self, at: 0) == 0x1c84_9314,
            Int(bytes.readBigEndian(UInt32.self, at: 4)) == bytes.count - 8,
            let payload = ZlibStored.unwrap(Array(bytes[8...])), payload.count >= 40,
            payload.readBigEndian(UInt32.self, at: 0) == 0x1c84_9313,
            Int(payload.readBigEndian(UInt32.self, at: 4)) == payload.count - 40,
            payload.readBigEndian(UInt32.self, at: 8) == 0, payload.readBigEndian(UInt32.self, at: 12) == 3,
            payload.readBigEndian(UInt64.self, at: 16) == 1, payload.readBigEndian(UInt64.self, at: 24) == 3_600_000_000
        else { return nil }
        return PackedHistogram(counts: Array(payload[40...]))
    }
}

extension ZlibStored {
    /// The data of a zlib stream of stored blocks with a matching Adler-32; `nil` otherwise
    /// (a stream another tool compressed with Huffman blocks included).
    static func unwrap(_ stream: [UInt8]) -> [UInt8]? {
        guard stream.count >= 6, stream[0] == 0x78, (UInt16(stream[0]) << 8 | UInt16(stream[1])) % 31 == 0 else {
            return nil
        }
        var data: [UInt8] = []
        var position = 2
        while true {
            guard position + 5 <= stream.count, stream[position] & 0x06 == 0 else { return nil }
            let final = stream[position] & 1 == 1
            let length = Int(stream[position + 1]) | Int(stream[position + 2]) << 8
            let check = Int(stream[position + 3]) | Int(stream[position + 4]) << 8
            guard length == ~check & 0xFFFF, position + 5 + length <= stream.count else { return nil }
            data += stream[(position + 5)..<(position + 5 + length)]
            position += 5 + length
            if final { break }
        }
        guard position + 4 == stream.count, stream.readBigEndian(UInt32.self, at: position) == adler32(data) else {
            return nil
        }
        return data
    }
}

extension Array where Element == UInt8 {
    func readBigEndian<Integer: FixedWidthInteger>(_ type: Integer.Type, at offset: Int) -> Integer {
        var value: Integer = 0
        for index in offset..<(offset + MemoryLayout<Integer>.size) { value = value << 8 | Integer(self[index]) }
        return value
    }
}
