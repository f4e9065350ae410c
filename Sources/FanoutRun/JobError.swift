/// A job that could not run, said in one line a person can act on: what, and where (the
/// option, the file, the address).
public struct JobError: Error, CustomStringConvertible, Sendable {
    public var description: String

    public init(_ description: String) {
        self.description = description
    }
}
