/// A place in a template's source text, as editors count it: lines and columns from 1.
///
/// Columns count Unicode scalars, so a column points at the character a person sees even on a
/// line with non-ASCII text.
public struct TemplateLocation: Sendable, Hashable, CustomStringConvertible {
    /// The file the text came from, as the caller named it.
    public var file: String
    /// The line, from 1.
    public var line: Int
    /// The column, from 1, in Unicode scalars.
    public var column: Int

    /// Creates a location.
    public init(file: String, line: Int, column: Int) {
        self.file = file
        self.line = line
        self.column = column
    }

    public var description: String { "\(file):\(line):\(column)" }
}

/// Why a notification template could not be loaded or compiled.
///
/// The description reads like a compiler's: `poll.json:1:31: aps.badge must be an integer…`,
/// so a person can go straight to the place and see what was expected there.
public struct PayloadTemplateError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of problem this is; new kinds may be added without breaking callers.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Base: String, Hashable {
            case unreadableFile
            case malformedJSON
            case invalidUTF8
            case invalidPlaceholder
            case invalidPayload
            case unrepresentableNumber
            case tooLarge
        }

        private let base: Base

        /// The file could not be opened or read.
        public static let unreadableFile = Code(base: .unreadableFile)
        /// The text is not JSON (RFC 8259).
        public static let malformedJSON = Code(base: .malformedJSON)
        /// The text is not valid UTF-8.
        public static let invalidUTF8 = Code(base: .invalidUTF8)
        /// A `{{…}}` placeholder is unknown, unterminated or used where its type cannot go.
        public static let invalidPlaceholder = Code(base: .invalidPlaceholder)
        /// The JSON is well formed but not an APNs payload: no `aps`, a wrong type, a bad value.
        public static let invalidPayload = Code(base: .invalidPayload)
        /// A number JSON cannot carry: NaN or an infinity.
        public static let unrepresentableNumber = Code(base: .unrepresentableNumber)
        /// The template's fixed bytes alone exceed the payload size limit.
        public static let tooLarge = Code(base: .tooLarge)

        public var description: String { base.rawValue }
    }

    /// What kind of problem this is.
    public var code: Code
    /// Where in the source the problem is, when the template came from text.
    public var location: TemplateLocation?
    /// What is wrong and, where it helps, what was expected.
    public var message: String

    /// Creates an error.
    public init(_ code: Code, _ message: String, at location: TemplateLocation? = nil) {
        self.code = code
        self.message = message
        self.location = location
    }

    public var description: String {
        if let location { return "\(location): \(message)" }
        return message
    }
}
