import Foundation

/// How Fanout writes a moment (`--start-at`, `summary.json`'s start): RFC 3339, as
/// `2026-11-23T10:00:00Z` or with a fraction of a second and an offset,
/// `2026-11-23T11:00:00.250+01:00`. It is written back in UTC with milliseconds.
public enum TimeNotation {
    /// The moment `text` writes, or `nil` when it is not RFC 3339 date-time.
    public static func parse(_ text: some StringProtocol) -> Date? {
        let text = String(text.trimmingBlanks)
        return fractional().date(from: text) ?? whole().date(from: text)
    }

    /// `date` as RFC 3339 in UTC, to the millisecond.
    public static func format(_ date: Date) -> String {
        fractional().string(from: date)
    }

    /// How to write one, for error messages.
    public static let hint = "write it as RFC 3339, like 2026-11-23T10:00:00Z or 2026-11-23T10:00:00.250Z"

    // A formatter is not Sendable; one is made per use (a run parses and writes a handful).
    private static func whole() -> ISO8601DateFormatter {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        return formatter
    }

    private static func fractional() -> ISO8601DateFormatter {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter
    }
}
