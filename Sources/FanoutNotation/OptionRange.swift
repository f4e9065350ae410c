/// The values a count or size option takes, and why its bounds are where they are.
///
/// Built once per option from what the protocol allows and what this machine allows
/// (`MachineLimits`), and checked when the command line is parsed: a value outside is refused
/// with the range and its reason, before anything is allocated or opened.
public struct OptionRange: Sendable, Hashable {
    /// The option as the user types it: `--connections`.
    public var option: String
    /// The values taken; never empty.
    public var values: ClosedRange<Int>
    /// What sets the upper bound, as a clause: `this machine's open-file limit, 20,000, allows 19,936`.
    public var reason: String?
    /// The unit after the range in the message: `bytes`.
    public var unit: String?

    /// A range of at least `lowest` and at most `highest` (`lowest` when `highest` is lower).
    public init(_ option: String, _ lowest: Int, _ highest: Int, unit: String? = nil, reason: String? = nil) {
        self.option = option
        self.values = lowest...max(lowest, highest)
        self.unit = unit
        self.reason = reason
    }

    /// `value` when it is in range, else the error that says the range.
    @discardableResult
    public func check(_ value: Int) throws(OptionRangeError) -> Int {
        guard values.contains(value) else { throw OptionRangeError(self, given: value.grouped) }
        return value
    }

    /// `value` when it is in range, else the error that says the range.
    @discardableResult
    public func check(_ value: UInt64) throws(OptionRangeError) -> Int {
        guard value <= UInt64(values.upperBound), values.contains(Int(value)) else {
            throw OptionRangeError(self, given: value.grouped)
        }
        return Int(value)
    }

    /// `1…19,936 bytes (this machine's … allows 19,936)`.
    public var description: String {
        var text = "\(values.lowerBound.grouped)…\(values.upperBound.grouped)"
        if let unit { text += " \(unit)" }
        if let reason { text += " (\(reason))" }
        return text
    }
}

/// A count or size option's value outside its range: says the option, the range, what bounds
/// it and the value given.
public struct OptionRangeError: Error, Sendable, Hashable, CustomStringConvertible {
    public let range: OptionRange
    /// The value as given.
    public let given: String

    public init(_ range: OptionRange, given: String) {
        self.range = range
        self.given = given
    }

    /// `--connections must be 1…19,936 (this machine's open-file limit, 20,000, allows 19,936); got 100,000`.
    public var description: String { "\(range.option) must be \(range.description); got \(given)" }
}
