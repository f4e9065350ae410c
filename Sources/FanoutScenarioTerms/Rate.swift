import FanoutNotation

/// `limit` events per `window`, written `LIMIT/WINDOW` (`100/s`, `10/1m`, `5000/1.5s`).
public struct Rate: Sendable, Hashable, CustomStringConvertible {
    /// The most events within one window.
    public var limit: Int
    /// The window the limit counts over.
    public var window: Duration

    /// `limit` events per `window`.
    public init(limit: Int, window: Duration) {
        self.limit = limit
        self.window = window
    }

    /// Events per second.
    public var perSecond: Double { Double(limit) * 1e9 / Double(window.wholeNanoseconds) }

    /// `LIMIT/WINDOW`, as written.
    public var description: String { "\(limit)/\(window)" }
}
