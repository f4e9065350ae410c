import Foundation
import NIOConcurrencyHelpers

/// A file that several event loops append whole lines to (a run's gone tokens, the sink's
/// capture), each write under a lock. A write that fails (a full disk) closes it and is kept
/// (`failure`): what a run writes on the side never stops the run, and the run says the file
/// is incomplete instead of losing it silently.
public final class AppendingFile: Sendable {
    public let path: String
    private let file: NIOLockedValueBox<FileHandle?>
    private let firstFailure = NIOLockedValueBox<String?>(nil)

    /// A file that cannot be created, said with its path and the system's reason.
    public struct CannotCreate: Error, CustomStringConvertible {
        public var path: String
        public var reason: String
        public var description: String { "cannot create \(path): \(reason)" }
    }

    /// Creates (or empties) the file at `path`, in place: a device (`/dev/null`, `/dev/full`)
    /// or a pipe stays what it is (`FileManager.createFile` writes a new file and renames it
    /// over the path).
    public init(path: String) throws(CannotCreate) {
        self.path = path
        // Without waiting: a FIFO nobody reads fails at once (ENXIO) instead of holding the
        // command in open() past every stop signal (issue 61, review); one with a reader
        // (`>(gzip > capture.gz)`) opens, and is written blocking as a file is.
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NONBLOCK, 0o644)
        guard descriptor >= 0 else {
            throw CannotCreate(path: path, reason: Self.reason(creating: path, error: errno))
        }
        _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) & ~O_NONBLOCK)
        file = NIOLockedValueBox(FileHandle(fileDescriptor: descriptor, closeOnDealloc: true))
    }

    /// Appends `bytes`; false once the file is closed (by `close()` or a failed write).
    @discardableResult
    public func append(_ bytes: Data) -> Bool {
        file.withLockedValue { file in
            guard let handle = file else { return false }
            do {
                try handle.write(contentsOf: bytes)
                return true
            } catch {
                try? handle.close()
                file = nil
                noteFailure("cannot write: \(Self.reason(error))")
                return false
            }
        }
    }

    /// Flushes and closes the file; later appends are dropped.
    public func close() {
        file.withLockedValue { file in
            guard let handle = file else { return }
            // fsync fails on what is not a disk file (a pipe, /dev/null): not a lost line.
            try? handle.synchronize()
            do { try handle.close() } catch { noteFailure("cannot write: \(Self.reason(error))") }
            file = nil
        }
    }

    /// The first write that failed, with the path: `/dev/full: cannot write: No space left on
    /// device`; `nil` while every byte went in.
    public var failure: String? { firstFailure.withLockedValue { $0.map { "\(path): \($0)" } } }

    private func noteFailure(_ reason: String) {
        firstFailure.withLockedValue { if $0 == nil { $0 = reason } }
    }

    /// The system's words for a failed write (Foundation wraps errno in a Cocoa error).
    private static func reason(_ error: any Error) -> String {
        let underlying = (error as NSError).userInfo[NSUnderlyingErrorKey] as? NSError
        if let underlying, underlying.domain == NSPOSIXErrorDomain {
            return String(cString: strerror(Int32(underlying.code)))
        }
        if (error as NSError).domain == NSPOSIXErrorDomain {
            return String(cString: strerror(Int32((error as NSError).code)))
        }
        return "\(error)"
    }

    /// Why `path` cannot be created, in words: a missing folder, a folder in the way, or the
    /// system's message.
    private static func reason(creating path: String, error: Int32) -> String {
        let folder = (path as NSString).deletingLastPathComponent
        var isFolder: ObjCBool = false
        if !folder.isEmpty, !FileManager.default.fileExists(atPath: folder, isDirectory: &isFolder) {
            return "the folder \(folder) does not exist"
        }
        if !folder.isEmpty, !isFolder.boolValue { return "\(folder) is not a folder" }
        if FileManager.default.fileExists(atPath: path, isDirectory: &isFolder), isFolder.boolValue {
            return "it is a folder"
        }
        if error == ENXIO { return "a FIFO nobody reads: start its reader first" }
        return String(cString: strerror(error))
    }
}
