import NIOConcurrencyHelpers

/// Expositions other parts of a job append to an endpoint's `/metrics` (the return wave's to
/// the sink's and the sender's), added once they exist: a wave starts after the endpoint
/// listens. Each is its own families (its own subsystem), so the texts join as they are.
public final class MetricsAdditions: Sendable {
    private let parts = NIOLockedValueBox<[@Sendable () -> String]>([])

    public init() {}

    /// Appends `part`'s text to every scrape from now on.
    public func add(_ part: @escaping @Sendable () -> String) {
        parts.withLockedValue { $0.append(part) }
    }

    /// The parts' texts, in the order added.
    public var text: String { parts.withLockedValue { $0 }.map { $0() }.joined() }
}
