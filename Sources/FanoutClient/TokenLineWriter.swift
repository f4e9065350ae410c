import FanoutFiles
import FanoutTokens
import Foundation
import NIOCore

/// A file of device tokens, one per line, appended to by every connection (each hands over
/// what it gathered at most once a second and when it ends), e.g. the tokens APNs answered 410.
///
/// A campaign's two halves write one file, each line labelled with its service as a campaign's
/// token set is (`TokenLabel`): the APNs half's writer and `labelled(.fcm)`, sharing the file.
///
/// ```
///   apns:3f2a…c901
///   fcm:dXpL…:APA91b…
/// ```
public final class TokenLineWriter: Sendable {
    private let file: AppendingFile
    /// What each line begins with; `nil`: the token alone.
    public let label: TokenLabel?

    public var path: String { file.path }

    /// Creates (or empties) the file.
    public init(path: String, label: TokenLabel? = nil) throws(AppendingFile.CannotCreate) {
        file = try AppendingFile(path: path)
        self.label = label
    }

    private init(file: AppendingFile, label: TokenLabel) {
        self.file = file
        self.label = label
    }

    /// A writer of the same file whose connections begin each line with `label` (`Ledger`
    /// writes it before each token).
    public func labelled(_ label: TokenLabel) -> TokenLineWriter {
        TokenLineWriter(file: file, label: label)
    }

    /// Appends the whole lines in `lines` and empties it.
    func write(_ lines: inout ByteBuffer) {
        file.append(lines.readableBytesView.withUnsafeBytes { Data($0) })
        lines.clear()
    }

    /// Closes the file (for every writer sharing it).
    public func close() {
        file.close()
    }

    /// The first write that failed (path and reason), `nil` while every line went in.
    public var failure: String? { file.failure }
}
