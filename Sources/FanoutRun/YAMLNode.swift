import Yams

/// A YAML document as `fanout cluster render` builds it, written by Yams (libyaml's emitter):
/// block mappings and sequences, keys in the order given, every string double-quoted (YAML 1.2
/// reads JSON's escapes there), so no value is ever read as another type — `"10"` stays a
/// string, `"no"` is not `false`.
///
/// ```
/// metadata:
///   name: "fanout-shards"
///   labels:
///     app.kubernetes.io/name: "fanout"
/// spec:
///   completions: 8
///   args:
///   - "send"
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

    /// The document's text, ending in a newline: lines as long as their values (no folding),
    /// indented by two, a sequence at its key's indentation (as kubectl writes it), an empty
    /// collection as `[]` or `{}`, text other than ASCII as it is.
    func text() throws(JobError) -> String {
        do {
            return try Yams.serialize(
                node: node,
                indent: 2,
                width: -1,
                allowUnicode: true,
                lineBreak: .ln,
                sequenceStyle: .block,
                mappingStyle: .block
            )
        } catch {
            throw JobError.output(.part("the manifests"), "they could not be written as YAML: \(error)")
        }
    }

    /// The document as Yams's node: strings tagged `!!str` and double-quoted, numbers and
    /// booleans plain.
    var node: Node {
        switch self {
        case .string(let value): .scalar(Node.Scalar(value, Tag(.str), .doubleQuoted))
        case .integer(let value): .scalar(Node.Scalar(String(value), Tag(.int), .plain))
        case .boolean(let value): .scalar(Node.Scalar(value ? "true" : "false", Tag(.bool), .plain))
        case .sequence(let items): .sequence(Node.Sequence(items.map(\.node), Tag(.seq), .block))
        case .mapping(let pairs):
            .mapping(
                Node.Mapping(
                    pairs.map { (.scalar(Node.Scalar($0.0, Tag(.str), .plain)), $0.1.node) },
                    Tag(.map),
                    .block
                )
            )
        }
    }
}
