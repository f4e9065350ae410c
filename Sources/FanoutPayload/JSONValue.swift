/// Any JSON value, for custom keys beside `aps` and the free-form Live Activity dictionaries.
///
/// Strings may hold placeholders, and `.placeholder` stands for a whole value filled in per
/// notification. Object members keep their order: it is the order they are written in.
public indirect enum JSONValue: Sendable, Hashable {
    case null
    case bool(Bool)
    case integer(Int)
    /// A number written in its shortest round-trip form; NaN and infinities are refused.
    case number(Double)
    case string(TemplateText)
    case array([JSONValue])
    case object([JSONMember])
    /// A whole value taken from a placeholder, of the given type.
    case placeholder(Placeholder, Placeholder.ValueType)
}

/// A key and its value in a JSON object.
public struct JSONMember: Sendable, Hashable {
    /// The key, literal text.
    public var key: String
    /// The value.
    public var value: JSONValue

    /// Creates a member.
    public init(_ key: String, _ value: JSONValue) {
        self.key = key
        self.value = value
    }
}
