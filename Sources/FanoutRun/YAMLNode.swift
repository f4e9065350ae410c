/// A YAML document as `fanout cluster render` writes it: block mappings and sequences, every
/// string a JSON string (YAML 1.2 reads JSON's escapes in double quotes), so no value is ever
/// read as another type — `"10"` stays a string, `"no"` is not `false`.
///
/// ```
/// metadata:
///   name: "fanout-shards"
///   labels:
///     app.kubernetes.io/name: "fanout"
/// spec:
///   completions: 8
///   args:
///     - "send"
/// ```
indirect enum YAMLNode: Sendable, ExpressibleByStringLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByBooleanLiteral, ExpressibleByArrayLiteral
{
    case string(String)
    case integer(Int)
    case boolean(Bool)
    case sequence([YAMLNode])
    /// Keys in the order given (Kubernetes readers do not care; people do).
    case mapping([(String, YAMLNode)])

    init(stringLiteral value: String) { self = .string(value) }
    init(integerLiteral value: Int) { self = .integer(value) }
    init(booleanLiteral value: Bool) { self = .boolean(value) }
    init(arrayLiteral elements: YAMLNode...) { self = .sequence(elements) }

    /// The document's text, ending in a newline.
    var text: String {
        var lines: [String] = []
        write(into: &lines, indent: "")
        return lines.joined(separator: "\n") + "\n"
    }

    private var isCollection: Bool {
        switch self {
        case .sequence(let items): !items.isEmpty
        case .mapping(let pairs): !pairs.isEmpty
        default: false
        }
    }

    /// A scalar, or an empty collection, on one line.
    private var inline: String {
        switch self {
        case .string(let value): Self.quoted(value)
        case .integer(let value): String(value)
        case .boolean(let value): value ? "true" : "false"
        case .sequence: "[]"
        case .mapping: "{}"
        }
    }

    private func write(into lines: inout [String], indent: String) {
        switch self {
        case .mapping(let pairs) where !pairs.isEmpty:
            for (key, value) in pairs {
                if value.isCollection {
                    lines.append("\(indent)\(key):")
                    // A sequence sits at its key's indentation, as kubectl writes it.
                    value.write(into: &lines, indent: value.isSequence ? indent : indent + "  ")
                } else {
                    lines.append("\(indent)\(key): \(value.inline)")
                }
            }
        case .sequence(let items) where !items.isEmpty:
            for item in items {
                guard item.isCollection else {
                    lines.append("\(indent)- \(item.inline)")
                    continue
                }
                var nested: [String] = []
                item.write(into: &nested, indent: indent + "  ")
                // The first line of the item follows its dash.
                nested[0] = indent + "- " + nested[0].dropFirst(indent.count + 2)
                lines += nested
            }
        default:
            lines.append(indent + inline)
        }
    }

    private var isSequence: Bool {
        if case .sequence = self { return true }
        return false
    }

    /// `text` as a JSON string: quotes, backslashes and control characters escaped.
    static func quoted(_ text: String) -> String {
        var result = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\t": result += "\\t"
            case "\r": result += "\\r"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F:
                result +=
                    "\\u" + String(repeating: "0", count: 4 - String(scalar.value, radix: 16).count)
                    + String(scalar.value, radix: 16)
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result + "\""
    }
}
