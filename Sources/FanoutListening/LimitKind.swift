/// What a listener or a connection refused, or which of its limits was reached: the first words
/// of its log line (`fanout sink: refused 127.0.0.2:41234: …`), and what such lines are thinned
/// by (the sink's `LimitLog`: at most one line a second of each kind).
public enum LimitKind: String, Sendable, Hashable, CaseIterable {
    /// Accepting a connection failed (out of descriptors): the listener pauses (`AcceptBackoff`).
    case acceptFailed = "accept failed"
    /// Accepting works again after a burst of failures.
    case acceptingAgain = "accepting again"
    /// A connection turned away at its admission (per-peer or total limit).
    case refused
    /// A connection closed to make room for a new one.
    case evicted
    /// A connection that broke a rule or a flood limit, ending with GOAWAY.
    case ended
    /// A peer that left this side's SETTINGS unacknowledged too long (RFC 9113 §6.5.3).
    case settingsTimeout = "settings timeout"
    /// Streams, or a text endpoint's connection, whose request did not arrive whole in time.
    case requestTimeout = "request timeout"
    /// A text endpoint's connection that sent no request in time.
    case idleTimeout = "idle timeout"

    /// Its place in `allCases`: the subscript of a count kept by kind.
    public var index: Int { Self.allCases.firstIndex(of: self)! }
}
