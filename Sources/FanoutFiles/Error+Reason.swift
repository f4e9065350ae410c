import Foundation

extension Error {
    /// The system's description of the error as a clause to put after a colon: without the
    /// full stop Foundation ends it with, so a message that adds its own does not say "..".
    ///
    /// A file that could not be read is described by what the path is (`is a directory`, `no
    /// such file`, `is not a regular file (a character device)`, `permission denied`), never by
    /// Foundation's domain and code: the caller has already named the path.
    public var reason: String {
        if let cocoa = self as? CocoaError, let described = FileProblem.describe(cocoa) { return described }
        if let posix = self as? POSIXError { return FileProblem.describe(errno: posix.code.rawValue) }
        var text = localizedDescription
        while text.hasSuffix(".") { text.removeLast() }
        return text
    }
}
