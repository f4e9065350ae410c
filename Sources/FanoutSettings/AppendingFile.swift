import Foundation
import NIOConcurrencyHelpers

/// A file that several event loops append whole lines to (a run's gone tokens, the sink's
/// capture), each write under a lock. A write that fails (a full disk) closes it: what a run
/// writes on the side never ends the run.
public final class AppendingFile: Sendable {
    public let path: String
    private let file: NIOLockedValueBox<FileHandle?>

    /// A file that cannot be created, said with its path and the system's reason.
    public struct CannotCreate: Error, CustomStringConvertible {
        public var path: String
        public var reason: String
        public var description: String { "cannot create \(path): \(reason)" }
    }

    /// Creates (or empties) the file at `path`.
    public init(path: String) throws(CannotCreate) {
        self.path = path
        guard FileManager.default.createFile(atPath: path, contents: nil),
            let handle = FileHandle(forWritingAtPath: path)
        else {
            throw CannotCreate(path: path, reason: Self.reason(creating: path))
        }
        file = NIOLockedValueBox(handle)
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
                return false
            }
        }
    }

    /// Flushes and closes the file; later appends are dropped.
    public func close() {
        file.withLockedValue { file in
            try? file?.synchronize()
            try? file?.close()
            file = nil
        }
    }

    /// Why `path` cannot be created, in words: a missing folder, a folder in the way, or the
    /// system's message.
    private static func reason(creating path: String) -> String {
        let folder = (path as NSString).deletingLastPathComponent
        var isFolder: ObjCBool = false
        if !folder.isEmpty, !FileManager.default.fileExists(atPath: folder, isDirectory: &isFolder) {
            return "the folder \(folder) does not exist"
        }
        if !folder.isEmpty, !isFolder.boolValue { return "\(folder) is not a folder" }
        if FileManager.default.fileExists(atPath: path, isDirectory: &isFolder), isFolder.boolValue {
            return "it is a folder"
        }
        return String(cString: strerror(errno))
    }
}
