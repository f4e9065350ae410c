#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The formats a token set is written in.
public enum TokenFileFormat: String, Sendable, Hashable, CaseIterable {
    /// One hex token per line.
    case text
    /// `BinaryTokenFormat`: a header and fixed-length raw records.
    case binary
}

/// Writes a token set to a file in large chunks.
public final class TokenSetWriter {
    private var file: TokenFile?
    private let format: TokenFileFormat
    private let path: String
    private let chunk: UnsafeMutableRawBufferPointer
    private var used = 0
    private var tokenLength: Int?
    /// Tokens written so far.
    public private(set) var count: UInt64 = 0

    /// Creates (or truncates) `path`.
    public init(path: String, format: TokenFileFormat) throws(TokenSetError) {
        file = try TokenFile.open(writing: path)
        self.format = format
        self.path = path
        chunk = .allocate(byteCount: 1 << 20, alignment: 16)
        if format == .binary {
            // A placeholder header; `finish()` writes the real one once the count is known.
            let header = BinaryTokenFormat.Header(tokenLength: 0, count: 0).bytes
            chunk.copyBytes(from: header)
            used = header.count
        }
    }

    deinit {
        chunk.deallocate()
    }

    /// Appends a token given as hex text, with its fields (each preceded by a tab, as
    /// `TokenRecord.fields` holds them); `line` names it in errors. The binary format has no
    /// room for fields: a token with fields is an error there.
    public func append(
        hex token: UnsafeRawBufferPointer,
        fields: UnsafeRawBufferPointer = UnsafeRawBufferPointer(start: nil, count: 0),
        line: Int
    ) throws(TokenSetError) {
        switch format {
        case .text:
            let length = token.count + fields.count + 1
            try reserve(length)
            guard length <= chunk.count else {
                throw TokenSetError("the line is longer than \(chunk.count) bytes", source: path, line: line)
            }
            (chunk.baseAddress! + used).copyMemory(from: token.baseAddress!, byteCount: token.count)
            if let start = fields.baseAddress {
                (chunk.baseAddress! + used + token.count).copyMemory(from: start, byteCount: fields.count)
            }
            chunk[used + length - 1] = UInt8(ascii: "\n")
            used += length
        case .binary:
            guard fields.isEmpty else {
                throw TokenSetError(
                    "this line has fields, which the binary format cannot carry",
                    source: path,
                    line: line
                )
            }
            let length = token.count / 2
            if let tokenLength, tokenLength != length {
                throw TokenSetError(
                    "this token has \(length) bytes but the first had \(tokenLength); a binary file's records "
                        + "are all one length",
                    source: path,
                    line: line
                )
            }
            tokenLength = length
            try reserve(length)
            for index in 0..<length {
                chunk[used + index] = Self.nibble(token[2 * index]) << 4 | Self.nibble(token[2 * index + 1])
            }
            used += length
        }
        count += 1
    }

    /// Appends a token given as raw bytes.
    public func append(raw token: UnsafeRawBufferPointer, line: Int) throws(TokenSetError) {
        let hex = UnsafeMutableRawBufferPointer.allocate(byteCount: 2 * token.count, alignment: 1)
        defer { hex.deallocate() }
        HexEncoding.write(token, to: hex.baseAddress!)
        try append(hex: UnsafeRawBufferPointer(hex), line: line)
    }

    /// Flushes what is buffered and, for binary files, writes the header with the final count.
    public func finish() throws(TokenSetError) {
        guard let file = file.take() else { return }
        try file.write(UnsafeRawBufferPointer(rebasing: chunk[0..<used]))
        used = 0
        if format == .binary {
            let header = BinaryTokenFormat.Header(tokenLength: tokenLength ?? 0, count: count).bytes
            let written = header.withUnsafeBytes { pwrite(file.descriptor, $0.baseAddress, $0.count, 0) }
            guard written == header.count else {
                throw TokenSetError("cannot write the header: \(String(cString: strerror(errno)))", source: path)
            }
        }
    }

    private func reserve(_ bytes: Int) throws(TokenSetError) {
        if used + bytes > chunk.count {
            try file?.write(UnsafeRawBufferPointer(rebasing: chunk[0..<used]))
            used = 0
        }
    }

    private static func nibble(_ digit: UInt8) -> UInt8 {
        digit <= UInt8(ascii: "9") ? digit - UInt8(ascii: "0") : (digit | 0x20) - UInt8(ascii: "a") + 10
    }
}
