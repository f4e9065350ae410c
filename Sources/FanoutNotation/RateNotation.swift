/// How Fanout writes a rate everywhere (the sender's `--rate` and `--stage`, `fanout search`'s
/// bounds, the sink's `token-rate` and `connection-rate`, options and scenario files alike):
///
/// ```
/// 5000        5000 a second
/// 5000/s      the same; a bare unit is one of it
/// 300/1m      300 a minute
/// 10/1.5s     10 every 1.5 seconds
/// ```
///
/// The count is a number (the sink's limits, which count requests, take whole ones); the
/// window a duration in `DurationNotation`.
public struct EventRate: Sendable, Hashable, CustomStringConvertible {
    public var count: Double
    /// `nil`: written without a window, a second.
    public var window: Duration?
    /// How it was written, for messages; `nil` for a rate made in code.
    private var written: String?

    public init(count: Double, window: Duration? = nil) {
        self.count = count
        self.window = window
    }

    /// The rate `text` writes, or `nil` when it is not one: a count that is not a finite number
    /// at least 0, or a window that is not a duration above 0.
    public init?(parsing text: some StringProtocol) {
        let text = text.trimmingBlanks
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count), let count = DecimalNotation.parse(parts[0]), count.isFinite, count >= 0
        else {
            return nil
        }
        var window: Duration?
        if parts.count == 2 {
            let written = parts[1].first?.isNumber == true ? String(parts[1]) : "1" + parts[1]
            guard let duration = DurationNotation.parse(written), duration > .zero else { return nil }
            window = duration
        }
        self.init(count: count, window: window)
        written = String(text)
    }

    /// Events per second.
    public var perSecond: Double {
        guard let window else { return count }
        return count * 1e9 / Double(window.wholeNanoseconds)
    }

    /// The window, a second when none was written.
    public var windowOrSecond: Duration { window ?? .seconds(1) }

    /// As it was written, or in the notation's shortest form (`5000`, `300/1m`).
    public var description: String {
        if let written { return written }
        let number = count == count.rounded() && abs(count) < 1e15 ? String(Int64(count)) : "\(count)"
        return window.map { "\(number)/\(DurationNotation.format($0))" } ?? number
    }

    /// How to write one, for error messages.
    public static let hint = "write N or N/WINDOW, like 5000/s or 300/1m"
}
