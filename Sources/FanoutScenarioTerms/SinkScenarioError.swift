/// A scenario that cannot be run, said in one line.
public struct SinkScenarioError: Error, Sendable, CustomStringConvertible {
    /// The line, naming the option or the file's line it comes from.
    public var description: String

    /// An error saying `description`.
    public init(_ description: String) {
        self.description = description
    }
}
