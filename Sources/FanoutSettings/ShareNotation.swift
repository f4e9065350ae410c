/// A share as options write it: `5%` or `0.05`, both 0.05.
public enum ShareNotation {
    /// The share `text` writes, or `nil` when it is not a finite number (with or without `%`).
    public static func parse(_ text: String) -> Double? {
        let percent = text.hasSuffix("%")
        guard let number = Double(percent ? String(text.dropLast()) : text), number.isFinite else { return nil }
        return percent ? number / 100 : number
    }
}
