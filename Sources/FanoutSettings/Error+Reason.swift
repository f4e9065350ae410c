import Foundation

extension Error {
    /// The system's description of the error as a clause to put after a colon: without the
    /// full stop Foundation ends it with, so a message that adds its own does not say "..".
    public var reason: String {
        var text = localizedDescription
        while text.hasSuffix(".") { text.removeLast() }
        return text
    }
}
