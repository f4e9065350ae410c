import Foundation

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

    /// `55%`, `45.01%`: a share in percent, to `places` decimals at most (two by default), no
    /// trailing zeros, and `0%` for a share that rounds to nothing from below (not `-0%`).
    public static func percent(_ share: Double, places: Int = 2) -> String {
        let scale = pow(10, Double(places))
        return String(format: "%g%%", (share * (100 * scale)).rounded() / scale + 0.0)
    }

    /// How to write one, for error messages.
    public static let hint = "write it like 5% or 0.05"
}
