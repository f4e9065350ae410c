import FanoutAPNs

#if canImport(Glibc)
import Glibc
#endif

/// A token list read whole into memory: the sink's `--unregistered-tokens`, `--bad-tokens` and
/// `--expect-tokens` files, in the lines `fanout send --tokens` reads.
///
/// ```
///  [BOM] token [\t field]* [\r] \n      a token; its fields are ignored here
///        # anything              \n      a comment
///                                \n      a blank line
/// ```
/// The lines are the run's (`TextTokenParser`), so one file serves both ends; a line that is not
/// a token stops the reading with an error naming the file, line and column.
public enum TokenListFile {
    /// The tokens of the text file at `path`, in the order of its lines, as their hex text.
    public static func tokens(
        at path: String,
        format: DeviceTokenFormat = .default
    ) throws(TokenSetError) -> [String] {
        let text = try contents(of: path)
        var parser = TokenTextParser(format: format, source: path)
        let batch = TokenBatch(byteCapacity: 64 * 1024, tokenCapacity: 1024)
        var tokens: [String] = []
        var failure: TokenSetError?
        text.withUnsafeBytes { bytes in
            var offset = 0
            do throws(TokenSetError) {
                while offset < bytes.count {
                    let rest = UnsafeRawBufferPointer(rebasing: bytes[offset...])
                    offset += try parser.parse(rest, into: batch, isLast: true)
                    for index in 0..<batch.count { tokens.append(String(decoding: batch[index].token, as: UTF8.self)) }
                    parser.recycle(batch)
                }
            } catch {
                failure = error
            }
        }
        if let failure { throw failure }
        return tokens
    }

    private static func tooLong(_ path: String) -> TokenSetError {
        TokenSetError(
            "cannot read: longer than \(largest / (1 << 30)) GiB (about 15 million tokens), the most a list is read into memory",
            source: path
        )
    }

    /// The most a list may hold: 1 GiB.
    static let largest = 1 << 30

    /// The file's bytes, read whole, at most `largest` (issue 61, review: `--expect-tokens
    /// /dev/zero` grew the sink to 24 GB until the kernel killed it). A device is refused; a
    /// FIFO is read (`<(grep … tokens.txt)`), within the same bound.
    private static func contents(of path: String) throws(TokenSetError) -> [UInt8] {
        var status = stat()
        if stat(path, &status) == 0, (status.st_mode & S_IFMT) == S_IFCHR || (status.st_mode & S_IFMT) == S_IFBLK {
            throw TokenSetError("cannot read: a device, not a token list", source: path)
        }
        let file = try TokenFile.open(reading: path)
        // A regular file says its size: one past the bound is refused before a byte is read (a
        // sparse 3 GB file was read to 1 GiB, 1.35 GB resident, before it was refused).
        if let size = try file.regularSize(), size > largest { throw tooLong(path) }
        var bytes: [UInt8] = []
        let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 1)
        defer { chunk.deallocate() }
        while true {
            let count = try file.read(into: chunk)
            guard bytes.count + count <= largest else { throw tooLong(path) }
            bytes += UnsafeRawBufferPointer(rebasing: chunk[..<count])
            if count < chunk.count { return bytes }
        }
    }
}
