import CFanoutSIMD

/// Checks that received bytes are one JSON object (RFC 8259) in valid UTF-8, in place and
/// without allocating: what the sink needs to answer a malformed payload without building it.
///
/// The reading is C's (`fanout_json_object_check`, Sources/CFanoutSIMD): one pass without
/// recursion, the open containers a stack of bits, so nesting is bounded (`maximumDepth`) and a
/// hostile payload cannot exhaust the stack. It replaced a Swift recursive descent that cost 15
/// instructions a byte (scripts/cost.sh, json-check); that reading stays in the tests as the
/// reference every verdict and offset is compared with.
public enum PayloadSyntax {
    /// The deepest nesting accepted: the outer object is at depth 0, a value at this depth is
    /// refused.
    public static let maximumDepth = Int(FANOUT_JSON_MAXIMUM_DEPTH)

    /// Where and why `bytes` is not a JSON object, or `nil` when it is one.
    public static func problem(in bytes: UnsafeRawBufferPointer) -> PayloadSyntaxProblem? {
        guard let base = bytes.baseAddress else { return PayloadSyntaxProblem(offset: 0, kind: .notAnObject) }
        var offset = 0
        let verdict = fanout_json_object_check(base.assumingMemoryBound(to: UInt8.self), bytes.count, &offset)
        return PayloadSyntaxProblem.Kind(verdict).map { PayloadSyntaxProblem(offset: offset, kind: $0) }
    }
}

/// Why received bytes are not a JSON object, and the byte offset where that shows.
public struct PayloadSyntaxProblem: Error, Sendable, Hashable, CustomStringConvertible {
    /// The first way the bytes stop being one JSON object.
    public enum Kind: Sendable, Hashable, CaseIterable, CustomStringConvertible {
        case notAnObject
        case textAfterTheObject
        case tooDeep
        case endsWhereAValueShouldBe
        case expectedValue
        case expectedKey
        case expectedColon
        case expectedCommaOrBrace
        case expectedCommaOrBracket
        case shortUnicodeEscape
        case unknownEscape
        case controlCharacter
        case notUTF8
        case unclosedString
        case numberWithoutDigits
        case noFractionDigits
        case noExponentDigits

        /// The checker's verdict as a kind; `nil` for "one JSON object".
        init?(_ verdict: fanout_json_verdict) {
            switch verdict {
            case FANOUT_JSON_OBJECT: return nil
            case FANOUT_JSON_NOT_AN_OBJECT: self = .notAnObject
            case FANOUT_JSON_TEXT_AFTER: self = .textAfterTheObject
            case FANOUT_JSON_TOO_DEEP: self = .tooDeep
            case FANOUT_JSON_END_WHERE_VALUE: self = .endsWhereAValueShouldBe
            case FANOUT_JSON_EXPECTED_VALUE: self = .expectedValue
            case FANOUT_JSON_EXPECTED_KEY: self = .expectedKey
            case FANOUT_JSON_EXPECTED_COLON: self = .expectedColon
            case FANOUT_JSON_EXPECTED_COMMA_OR_BRACE: self = .expectedCommaOrBrace
            case FANOUT_JSON_EXPECTED_COMMA_OR_BRACKET: self = .expectedCommaOrBracket
            case FANOUT_JSON_SHORT_UNICODE_ESCAPE: self = .shortUnicodeEscape
            case FANOUT_JSON_UNKNOWN_ESCAPE: self = .unknownEscape
            case FANOUT_JSON_CONTROL_CHARACTER: self = .controlCharacter
            case FANOUT_JSON_NOT_UTF8: self = .notUTF8
            case FANOUT_JSON_UNCLOSED_STRING: self = .unclosedString
            case FANOUT_JSON_NUMBER_WITHOUT_DIGITS: self = .numberWithoutDigits
            case FANOUT_JSON_NO_FRACTION_DIGITS: self = .noFractionDigits
            case FANOUT_JSON_NO_EXPONENT_DIGITS: self = .noExponentDigits
            default: preconditionFailure("fanout_json_object_check returned \(verdict.rawValue), not a verdict")
            }
        }

        public var description: String {
            switch self {
            case .notAnObject: "the payload is not a JSON object"
            case .textAfterTheObject: "text after the object"
            case .tooDeep: "nesting deeper than \(PayloadSyntax.maximumDepth)"
            case .endsWhereAValueShouldBe: "the payload ends where a value should be"
            case .expectedValue: "expected a value"
            case .expectedKey: "expected a key in quotes"
            case .expectedColon: "expected ':' after a key"
            case .expectedCommaOrBrace: "expected ',' or '}'"
            case .expectedCommaOrBracket: "expected ',' or ']'"
            case .shortUnicodeEscape: "\\u needs four hex digits"
            case .unknownEscape: "an unknown escape"
            case .controlCharacter: "a control character inside a string"
            case .notUTF8: "bytes that are not UTF-8"
            case .unclosedString: "a string without its closing quote"
            case .numberWithoutDigits: "a number without digits"
            case .noFractionDigits: "no digits after the decimal point"
            case .noExponentDigits: "no digits in the exponent"
            }
        }
    }

    public var offset: Int
    public var kind: Kind

    public init(offset: Int, kind: Kind) {
        self.offset = offset
        self.kind = kind
    }

    /// The words for `kind`.
    public var reason: String { kind.description }

    public var description: String { "\(reason) at byte \(offset)" }
}
