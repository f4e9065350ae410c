/// How Fanout writes durations everywhere (options, scenario files): a number and a unit,
/// `250us`, `5ms`, `1.5s`, `2m` or `1h`.
public enum DurationNotation {
    /// The duration `text` writes, or `nil` when it is not one: negative, infinite, not a
    /// number, or longer than `longest`.
    public static func parse(_ text: some StringProtocol) -> Duration? {
        let text = text.trimmingBlanks
        let units: [(String, Double)] = [("us", 1e-6), ("µs", 1e-6), ("ms", 1e-3), ("s", 1), ("m", 60), ("h", 3600)]
        for (suffix, scale) in units where text.hasSuffix(suffix) {
            if let value = Double(text.dropLast(suffix.count)), value >= 0, value * scale <= longestSeconds {
                return .nanoseconds(Int64((value * scale * 1e9).rounded()))
            }
        }
        return nil
    }

    /// The longest duration written anywhere: a year. Nothing Fanout times is longer, and the
    /// bound keeps every conversion to nanoseconds (64-bit) exact.
    public static let longest: Duration = .seconds(Int64(longestSeconds))
    private static let longestSeconds: Double = 366 * 24 * 3600

    /// How to write one, for error messages.
    public static let hint = "write it like 250us, 5ms, 1.5s, 2m or 1h, at most a year (8784h)"
}
