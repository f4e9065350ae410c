import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Why a path could not be read, in the words a person acts on.
public enum FileProblem {
    /// What is wrong with reading `path`, or `nil` when it is a readable regular file (or, with
    /// `streams`, any readable file but a folder: a pipe, `--tokens <(…)`, or a device).
    public static func problem(reading path: String, streams: Bool = false) -> String? {
        var status = stat()
        guard stat(path, &status) == 0 else { return describe(errno: errno) }
        let type = status.st_mode & FileType.mask
        if type == FileType.directory { return "is a directory" }
        if !streams, type != FileType.regular { return "is not a regular file (\(kind(of: type)))" }
        if access(path, R_OK) != 0 { return describe(errno: errno) }
        return nil
    }

    /// `no such file`, `permission denied`, … for the POSIX error `code`.
    public static func describe(errno code: Int32) -> String {
        switch code {
        case ENOENT: "no such file"
        case EACCES, EPERM: "permission denied"
        case EISDIR: "is a directory"
        case ENOTDIR: "a part of the path is not a directory"
        case ELOOP: "too many symbolic links"
        case ENAMETOOLONG: "the name is too long"
        default: String(cString: strerror(code)).lowercased()
        }
    }

    /// A Foundation file error by what its path is, else by its code; `nil` when it is not
    /// about a file.
    static func describe(_ error: CocoaError) -> String? {
        if let path = error.filePath ?? (error.userInfo[NSFilePathErrorKey] as? String) ?? error.url?.path {
            if let problem = problem(reading: path) { return problem }
        }
        if let underlying = error.userInfo[NSUnderlyingErrorKey] as? NSError, underlying.domain == NSPOSIXErrorDomain {
            return describe(errno: Int32(truncatingIfNeeded: underlying.code))
        }
        switch error.code {
        case .fileNoSuchFile, .fileReadNoSuchFile: return "no such file"
        case .fileReadNoPermission, .fileWriteNoPermission: return "permission denied"
        case .fileReadInapplicableStringEncoding, .fileReadCorruptFile: return "is not UTF-8 text"
        case .fileReadTooLarge: return "is too large to read"
        case .fileReadUnknown, .fileWriteUnknown: return "could not be read"
        default: return nil
        }
    }

    /// `a character device`, `a FIFO`, …
    static func kind(of type: mode_t) -> String {
        switch type {
        case FileType.characterDevice: "a character device"
        case FileType.blockDevice: "a block device"
        case FileType.fifo: "a FIFO"
        case FileType.socket: "a socket"
        default: "not a file"
        }
    }

    /// `st_mode`'s file types (POSIX `S_IF…`; Glibc's macros do not reach Swift).
    enum FileType {
        static let mask: mode_t = 0o170000
        static let directory: mode_t = 0o040000
        static let regular: mode_t = 0o100000
        static let characterDevice: mode_t = 0o020000
        static let blockDevice: mode_t = 0o060000
        static let fifo: mode_t = 0o010000
        static let socket: mode_t = 0o140000
    }
}
