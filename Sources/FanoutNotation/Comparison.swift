/// A threshold's comparison, as `fanout gate --threshold` and `--abort-on` write it.
public enum Comparison: String, Sendable, CaseIterable {
    case lessOrEqual = "<="
    case greaterOrEqual = ">="
    case equal = "=="
    case notEqual = "!="
    case less = "<"
    case greater = ">"

    /// Whether `left COMPARISON right` holds.
    public func holds(_ left: Double, _ right: Double) -> Bool {
        switch self {
        case .less: left < right
        case .lessOrEqual: left <= right
        case .greater: left > right
        case .greaterOrEqual: left >= right
        case .equal: left == right
        case .notEqual: left != right
        }
    }

    /// Whether it holds for values above a bound: an abort on `p99 > 200ms` is met by answers
    /// known to be slower than 200 ms, though not how much slower.
    public var looksUp: Bool { self == .greater || self == .greaterOrEqual }
}
