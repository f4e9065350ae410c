import FanoutAPNs

/// Fanout's binary token file: a small header and fixed-length records of raw token bytes, for
/// sets too large to keep as text (a 32-byte token takes 32 bytes instead of 65).
///
/// ```
///  0                 8         10        12                  16                            24
///  +-----------------+---------+---------+-------------------+-----------------------------+
///  | "FANOUTTK"      | version | length  | reserved, zero    | record count                |
///  +-----------------+---------+---------+-------------------+-----------------------------+
///  | record 0: `length` bytes | record 1 | …                              (little-endian)
/// ```
/// Records carry tokens only, no fields. A reader checks that the file's size is exactly the
/// header plus `count` records, so a truncated or padded file is an error, not a short run.
public enum BinaryTokenFormat {
    /// The file's first eight bytes.
    public static let magic: [UInt8] = Array("FANOUTTK".utf8)
    /// The format version this code writes and reads.
    public static let version: UInt16 = 1
    /// The header's size in bytes.
    public static let headerSize = 24

    /// What a header says.
    public struct Header: Sendable, Hashable {
        /// Bytes per token.
        public var tokenLength: Int
        /// Records that follow.
        public var count: UInt64

        /// Creates a header.
        public init(tokenLength: Int, count: UInt64) {
            self.tokenLength = tokenLength
            self.count = count
        }

        /// The header's bytes.
        public var bytes: [UInt8] {
            var bytes = BinaryTokenFormat.magic
            bytes += withUnsafeBytes(of: BinaryTokenFormat.version.littleEndian, Array.init)
            bytes += withUnsafeBytes(of: UInt16(tokenLength).littleEndian, Array.init)
            bytes += [0, 0, 0, 0]
            bytes += withUnsafeBytes(of: count.littleEndian, Array.init)
            return bytes
        }
    }

    /// Whether `prefix`, a file's first bytes, starts like a binary token file.
    public static func looksBinary(_ prefix: some Collection<UInt8>) -> Bool {
        prefix.starts(with: magic)
    }

    /// Reads and checks a header against the size of the file it came from; `fileSize` is
    /// `nil` for a stream (a pipe), whose records are checked as they are read instead.
    public static func header(
        _ bytes: [UInt8],
        fileSize: Int?,
        format: DeviceTokenFormat,
        source: String
    ) throws(TokenSetError) -> Header {
        guard bytes.count >= headerSize else {
            throw TokenSetError(
                "truncated header: \(bytes.count) of \(headerSize) bytes",
                source: source
            )
        }
        guard bytes.starts(with: magic) else {
            throw TokenSetError("not a Fanout binary token file (it does not start with FANOUTTK)", source: source)
        }
        let version = UInt16(bytes[8]) | UInt16(bytes[9]) << 8
        guard version == BinaryTokenFormat.version else {
            throw TokenSetError("format version \(version) is not one this Fanout reads (it reads 1)", source: source)
        }
        let length = Int(UInt16(bytes[10]) | UInt16(bytes[11]) << 8)
        let count = (0..<8).reduce(UInt64(0)) { $0 | UInt64(bytes[16 + $1]) << (8 * $1) }
        guard format.hexLengths.contains(2 * length) else {
            throw TokenSetError(
                "the header says tokens are \(length) bytes; accepted are \(format.hexLengths.lowerBound / 2) "
                    + "to \(format.hexLengths.upperBound / 2)",
                source: source
            )
        }
        guard let fileSize else { return Header(tokenLength: length, count: count) }
        let body = UInt64(max(0, fileSize - headerSize))
        let (expected, overflow) = count.multipliedReportingOverflow(by: UInt64(length))
        if overflow || body < expected {
            let whole = body / UInt64(length)
            let partial = body % UInt64(length)
            throw TokenSetError(
                "truncated: the header promises \(count) records of \(length) bytes but the file holds \(whole)"
                    + (partial > 0 ? " and \(partial) bytes of another" : ""),
                source: source
            )
        }
        if body > expected {
            throw TokenSetError(
                "the file has \(body - expected) bytes after the \(count) records its header promises",
                source: source
            )
        }
        return Header(tokenLength: length, count: count)
    }
}

/// Lowercase hex, eight bytes a step, for tokens read from binary files or generated.
enum HexEncoding {
    @inline(__always)
    static func write(_ bytes: UnsafeRawBufferPointer, to out: UnsafeMutableRawPointer) {
        let digits: StaticString = "0123456789abcdef"
        let table = digits.utf8Start
        for index in 0..<bytes.count {
            let byte = bytes[index]
            out.storeBytes(of: table[Int(byte >> 4)], toByteOffset: 2 &* index, as: UInt8.self)
            out.storeBytes(of: table[Int(byte & 0xF)], toByteOffset: 2 &* index &+ 1, as: UInt8.self)
        }
    }
}
