/// A per-notification value spliced into a template: the device token, the notification's
/// sequence number, or a field that travels with the token.
///
/// ## Syntax
/// Placeholders live inside JSON strings, so a template stays valid JSON that any tool can read:
///
/// | written in the template | becomes |
/// |---|---|
/// | `{{token}}` | the device token's hex text |
/// | `{{seq}}` | the notification's sequence number (0 for the first token of a run) |
/// | `{{field.1}}`, `{{field.2}}`… | the token file's first, second… tab-separated field after the token |
/// | `{{field.NAME}}` | the field the caller named NAME (`fieldNames` in the template options) |
/// | `{{open}}` | the two characters `{{`, for text that needs them literally |
///
/// A placeholder in the middle of text is spliced in as string content, JSON-escaped. A string
/// that is *only* a placeholder may give a type, which makes it a whole JSON value instead of a
/// string: `"{{field.1:int}}"` becomes `3`, not `"3"`. The types are `string` (the default),
/// `int`, `number` and `bool`; a value that is not of its type skips that notification with a
/// reason, it never sends broken JSON. Spaces inside the braces are ignored.
///
/// Every `{{` opens a placeholder and an unknown name is an error at load time, so ordinary text
/// can never be taken for a placeholder silently.
public struct Placeholder: Sendable, Hashable, CustomStringConvertible {
    /// Where a placeholder's value comes from.
    public enum Source: Sendable, Hashable, CustomStringConvertible {
        /// The device token, as hex text.
        case token
        /// The notification's sequence number in the run.
        case sequence
        /// A tab-separated field after the token, numbered from 1.
        case field(Int)

        /// The name as written inside the braces.
        var bareName: String {
            switch self {
            case .token: "token"
            case .sequence: "seq"
            case .field(let index): "field.\(index)"
            }
        }

        public var description: String { "{{\(bareName)}}" }
    }

    /// What a whole-value placeholder becomes.
    public enum ValueType: String, Sendable, Hashable, CaseIterable {
        /// A JSON string holding the value, escaped.
        case string
        /// A JSON integer; the value must match `-?(0|[1-9][0-9]*)`.
        case int
        /// A JSON number, written as given; the value must match RFC 8259's number grammar.
        case number
        /// `true` or `false`.
        case bool
    }

    /// Where the value comes from.
    public var source: Source

    /// Creates a placeholder for `source`.
    public init(_ source: Source) {
        self.source = source
    }

    /// The device token.
    public static let token = Placeholder(.token)
    /// The sequence number.
    public static let sequence = Placeholder(.sequence)
    /// Field `index` (from 1) after the token.
    public static func field(_ index: Int) -> Placeholder { Placeholder(.field(index)) }

    public var description: String { source.description }
}

/// Text that may contain placeholders: the value of a JSON string in a template.
public struct TemplateText: Sendable, Hashable, ExpressibleByStringLiteral, CustomStringConvertible {
    /// A run of literal text or a placeholder.
    public enum Part: Sendable, Hashable {
        case text(String)
        case placeholder(Placeholder)
    }

    /// The parts in order.
    public var parts: [Part]

    /// Creates text from parts.
    public init(_ parts: [Part]) {
        self.parts = parts
    }

    /// Literal text; braces in it are not placeholders.
    public init(_ text: String) {
        self.parts = text.isEmpty ? [] : [.text(text)]
    }

    public init(stringLiteral value: String) {
        self.init(value)
    }

    /// Text that is one placeholder.
    public static func placeholder(_ placeholder: Placeholder) -> TemplateText {
        TemplateText([.placeholder(placeholder)])
    }

    /// The text as template syntax, with `{{open}}` for literal braces.
    public var description: String {
        parts.map { part in
            switch part {
            case .text(let text): text.replacing("{{", with: "{{open}}")
            case .placeholder(let placeholder): placeholder.description
            }
        }.joined()
    }
}

/// A number that is fixed in the template or taken from a placeholder per notification.
public enum TemplateInteger: Sendable, Hashable, ExpressibleByIntegerLiteral {
    case literal(Int)
    case placeholder(Placeholder)

    public init(integerLiteral value: Int) {
        self = .literal(value)
    }
}

/// A floating-point number that is fixed in the template or taken from a placeholder.
public enum TemplateNumber: Sendable, Hashable, ExpressibleByFloatLiteral, ExpressibleByIntegerLiteral {
    case literal(Double)
    case placeholder(Placeholder)

    public init(floatLiteral value: Double) {
        self = .literal(value)
    }

    public init(integerLiteral value: Int) {
        self = .literal(Double(value))
    }
}
