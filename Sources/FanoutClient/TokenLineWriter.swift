import FanoutFiles
import Foundation
import NIOCore

/// A file of device tokens, one per line, appended to by every connection (each hands over
/// what it gathered at most once a second and when it ends), e.g. the tokens APNs answered 410.
public final class TokenLineWriter: Sendable {
    private let file: AppendingFile

    public var path: String { file.path }

    /// Creates (or empties) the file.
    public init(path: String) throws(AppendingFile.CannotCreate) {
        file = try AppendingFile(path: path)
    }

    /// Appends the whole lines in `lines` and empties it.
    func write(_ lines: inout ByteBuffer) {
        file.append(lines.readableBytesView.withUnsafeBytes { Data($0) })
        lines.clear()
    }

    public func close() {
        file.close()
    }

    /// The first write that failed (path and reason), `nil` while every line went in.
    public var failure: String? { file.failure }
}
