#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads a template file whole; templates are small, so a size bound keeps a wrong path (a
/// token set, a device file) from being read into memory.
enum TemplateFile {
    /// Larger files are refused: a payload is at most 5 KiB, so 1 MiB leaves room for formatting.
    static let maximumSize = 1 << 20

    static func contents(of path: String) throws(PayloadTemplateError) -> [UInt8] {
        let descriptor = open(path, O_RDONLY)
        guard descriptor >= 0 else { throw failure(path, "cannot open") }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw failure(path, "cannot read")
            }
            if count == 0 { return bytes }
            bytes.append(contentsOf: chunk[0..<count])
            if bytes.count > maximumSize {
                throw PayloadTemplateError(
                    .unreadableFile,
                    "\(path) is over \(maximumSize) bytes; a notification template is far smaller "
                        + "(is this a token file?)"
                )
            }
        }
    }

    private static func failure(_ path: String, _ action: String) -> PayloadTemplateError {
        let reason = String(cString: strerror(errno))
        return PayloadTemplateError(.unreadableFile, "\(action) \(path): \(reason)")
    }
}
