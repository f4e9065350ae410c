import Crypto

/// A file a run took its settings from (a scenario, a thresholds file), as results record it:
/// where it was and what it held, so that two runs that name the same path are known to have
/// read the same text, or not.
///
/// ```
///   "scenario": { "path": "fixtures/scenarios/apns-80ms.scenario", "sha256": "9f86d08…" }
/// ```
public struct FileUse: Codable, Sendable, Hashable, CustomStringConvertible {
    public var path: String
    /// SHA-256 of the file's bytes, 64 lowercase hex digits.
    public var sha256: String

    public init(path: String, sha256: String) {
        self.path = path
        self.sha256 = sha256
    }

    /// The use of the file at `path` that held `text` (read as UTF-8, so its bytes are the text's).
    public init(path: String, text: String) {
        self.path = path
        sha256 = SHA256.hash(data: Array(text.utf8)).map { hexDigits[Int($0 >> 4)] + hexDigits[Int($0 & 15)] }.joined()
    }

    /// `path (sha256 1a2b3c4d5e6f)`: the first 12 hex digits tell files apart for a person.
    public var description: String { "\(path) (sha256 \(sha256.prefix(12)))" }
}

private let hexDigits = (0..<16).map { String($0, radix: 16) }
