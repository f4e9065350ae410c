import Foundation
import NIOConcurrencyHelpers
import NIOCore

/// A file of device tokens, one per line, appended to by every connection (each hands over
/// what it gathered at most once a second and when it ends), e.g. the tokens APNs answered 410.
public final class TokenLineWriter: Sendable {
    public let path: String
    private let file: NIOLockedValueBox<FileHandle?>

    /// Creates (or empties) the file.
    public init(path: String) throws {
        self.path = path
        guard FileManager.default.createFile(atPath: path, contents: nil) else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path])
        }
        file = NIOLockedValueBox(try FileHandle(forWritingTo: URL(fileURLWithPath: path)))
    }

    /// Appends the whole lines in `lines` and empties it.
    func write(_ lines: inout ByteBuffer) {
        let data = lines.readableBytesView.withUnsafeBytes { Data($0) }
        lines.clear()
        file.withLockedValue { file in
            guard let handle = file else { return }
            do {
                try handle.write(contentsOf: data)
            } catch {
                try? handle.close()
                file = nil
            }
        }
    }

    public func close() {
        file.withLockedValue { file in
            try? file?.synchronize()
            try? file?.close()
            file = nil
        }
    }
}
