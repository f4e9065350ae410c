/// How Fanout writes a share everywhere (options and scenario files): `5%` or `0.05`, both
/// 0.05.
public enum ShareNotation {
    /// The share `text` writes, or `nil` when it is not a finite number (with or without `%`).
    public static func parse(_ text: some StringProtocol) -> Double? {
        let text = text.trimmingBlanks
        let percent = text.hasSuffix("%")
        guard let number = DecimalNotation.parse(percent ? text.dropLast() : text.dropLast(0)), number.isFinite else {
            return nil
        }
        return percent ? number / 100 : number
    }

    /// `55%`, `45.01%`: a share in percent, to two decimals at most.
    public static func percent(_ share: Double) -> String {
        String(format: "%g%%", (share * 10_000).rounded() / 100)
    }

    /// How to write one, for error messages.
    public static let hint = "write it like 5% or 0.05"
}
