/// How Fanout writes durations everywhere (options, scenario files): a number and a unit,
/// `250us`, `5ms`, `1.5s`, `2m` or `1h`.
public enum DurationNotation {
    /// The duration `text` writes, or `nil` when it is not one: negative, infinite, not a
    /// number, longer than `longest`, or above zero but under half a nanosecond (`1e-400s`
    /// would round to zero and pass every check that a duration is not zero).
    public static func parse(_ text: some StringProtocol) -> Duration? {
        let text = text.trimmingBlanks
        let units: [(String, Double)] = [("us", 1e-6), ("µs", 1e-6), ("ms", 1e-3), ("s", 1), ("m", 60), ("h", 3600)]
        for (suffix, scale) in units where text.hasSuffix(suffix) {
            if let value = DecimalNotation.parse(text.dropLast(suffix.count)), value >= 0,
                value * scale <= longestSeconds
            {
                let nanoseconds = (value * scale * 1e9).rounded()
                // A written number that is not zero (its digits say so, whatever Double made of
                // them) must not become zero.
                let mantissa = text.dropLast(suffix.count).prefix { $0 != "e" && $0 != "E" }
                let writtenZero = mantissa.allSatisfy { "0.+-".contains($0) }
                guard nanoseconds > 0 || writtenZero else { return nil }
                return .nanoseconds(Int64(nanoseconds))
            }
        }
        return nil
    }

    /// The longest duration written anywhere: a year. Nothing Fanout times is longer, and the
    /// bound keeps every conversion to nanoseconds (64-bit) exact.
    public static let longest: Duration = .seconds(Int64(longestSeconds))
    private static let longestSeconds: Double = 366 * 24 * 3600

    /// `duration` as the notation writes it, in the largest unit that holds it whole: `30s`,
    /// `500ms`, `2m`, `250us`; `0s` for zero.
    public static func format(_ duration: Duration) -> String {
        let nanoseconds = duration.wholeNanoseconds
        guard nanoseconds != 0 else { return "0s" }
        let units: [(String, UInt64)] = [
            ("h", 3_600_000_000_000), ("m", 60_000_000_000), ("s", 1_000_000_000), ("ms", 1_000_000), ("us", 1_000),
        ]
        for (unit, scale) in units where nanoseconds % scale == 0 { return "\(nanoseconds / scale)\(unit)" }
        return "\(Double(nanoseconds) / 1000)us"
    }

    /// `duration` as a person says it, to about three figures: `850 ms`, `1.25 s`, `3 min 20 s`,
    /// `5 h 2 min`, `12 days 3 h` (a `--start-at` years past is `2,190 days 4 h`, not 189
    /// billion milliseconds).
    public static func roughly(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        guard seconds >= 0, attoseconds >= 0 else { return "-" + roughly(.zero - duration) }
        if seconds < 1 { return "\(attoseconds / 1_000_000_000_000_000) ms" }
        if seconds < 60 {
            let value = Double(seconds) + Double(attoseconds) / 1e18
            return String(format: "%g s", (value * 100).rounded(.down) / 100)
        }
        func pair(_ big: Int64, _ bigUnit: String, _ small: Int64, _ smallUnit: String) -> String {
            "\(big.formatted(.number.grouping(.automatic))) \(bigUnit)" + (small > 0 ? " \(small) \(smallUnit)" : "")
        }
        if seconds < 3_600 { return pair(seconds / 60, "min", seconds % 60, "s") }
        if seconds < 86_400 { return pair(seconds / 3_600, "h", seconds % 3_600 / 60, "min") }
        return pair(seconds / 86_400, seconds / 86_400 == 1 ? "day" : "days", seconds % 86_400 / 3_600, "h")
    }

    /// How to write one, for error messages.
    public static let hint = "write it like 250us, 5ms, 1.5s, 2m or 1h, at most a year (8784h)"
}
