import Foundation

/// A results file that cannot be read or does not say what a reader needs: the message names the
/// file and what is wrong.
public struct ResultsError: Error, Sendable, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

/// Milliseconds as the documents' texts and the charts write them: two decimals under 10 ms,
/// one above, with the unit ("4.27 ms", "81.3 ms").
public func millisecondsWithUnit(_ value: Double) -> String {
    String(format: value < 10 ? "%.2f ms" : "%.1f ms", value)
}
