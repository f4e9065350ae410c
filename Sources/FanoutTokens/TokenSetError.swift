/// Why a token set could not be read, with the place when there is one:
/// `tokens.txt:12:5: 'x' is not a hex digit`.
public struct TokenSetError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The file (or `<stdin>`, `<generated>`).
    public var source: String
    /// The line in a text file or the record in a binary one, from 1; `nil` for the whole file.
    public var line: Int?
    /// The column, from 1, when the problem is inside a line.
    public var column: Int?
    /// What is wrong.
    public var message: String

    /// Creates an error.
    public init(_ message: String, source: String, line: Int? = nil, column: Int? = nil) {
        self.message = message
        self.source = source
        self.line = line
        self.column = column
    }

    public var description: String {
        switch (line, column) {
        case (let line?, let column?): "\(source):\(line):\(column): \(message)"
        case (let line?, nil): "\(source):\(line): \(message)"
        default: "\(source): \(message)"
        }
    }
}

/// One device token a reader turned down, as written to a reject file.
public struct RejectedToken: Sendable, Hashable {
    /// The line (text) or record (binary), from 1.
    public var line: Int
    /// The column of the problem, from 1.
    public var column: Int
    /// Why.
    public var reason: String
    /// The line as it was, without its line ending.
    public var text: [UInt8]
}
