import Foundation

/// A results file that cannot be read or does not say what a reader needs: the message names the
/// file and what is wrong.
public struct ResultsError: Error, Sendable, CustomStringConvertible, Equatable {
    /// What is wrong with the file or folder.
    public enum Kind: Sendable, Hashable {
        /// It does not exist or cannot be read.
        case unreadable
        /// It is not the document (or the run folder) the reader asked for.
        case notADocument
        /// A document of a schema or version this Fanout does not read (older or newer).
        case version
        /// The right document, with a field or a line that is not what it must be.
        case malformed
        /// Files that contradict each other: counts that disagree, two runs in one folder,
        /// shards that are not one run.
        case inconsistent
    }

    public var kind: Kind
    public var description: String

    public init(_ kind: Kind, _ description: String) {
        self.kind = kind
        self.description = description
    }
}

/// Milliseconds as the documents' texts and the charts write them: two decimals under 10 ms,
/// one above, with the unit ("4.27 ms", "81.3 ms").
public func millisecondsWithUnit(_ value: Double) -> String {
    String(format: value < 10 ? "%.2f ms" : "%.1f ms", value)
}
