import FanoutEndpoint

/// Why a run gave up before every token had an outcome (`LoadEngine.Report.gaveUp`): what is
/// left fails with `connectionLost`, or with the unreachable endpoint's cause.
public struct GiveUp: Sendable, Hashable, CustomStringConvertible {
    public enum Why: Sendable, Hashable {
        /// Every connection slot ended `times` times in a row without progress; `last`, the
        /// latest reason a connection did not get as far as an answer.
        case noProgress(slots: Int, times: Int, last: EndpointFailure?)
        /// The endpoint was never reached (`APNsEndpoint.connectTimeout` ran out, a failure
        /// retrying cannot heal, or every slot's credentials refused): what stood in the way.
        case unreachable(EndpointFailure)
    }

    /// `host:port`.
    public var endpoint: String
    public var why: Why

    public init(endpoint: String, why: Why) {
        self.endpoint = endpoint
        self.why = why
    }

    /// What kept the run from ever reaching the endpoint, when that is why it gave up.
    public var unreachable: EndpointFailure? {
        if case .unreachable(let failure) = why { failure } else { nil }
    }

    /// "gave up on HOST:PORT: …", as summary.json's `abandoned` says it.
    public var description: String { "gave up on \(endpoint): \(why)" }
}

extension GiveUp.Why: CustomStringConvertible {
    public var description: String {
        switch self {
        case .noProgress(let slots, let times, let last):
            "every connection slot (\(slots)) ended \(times) times in a row without progress"
                + (last.map { " (the last: \($0))" } ?? "")
        case .unreachable(let failure):
            "could not reach the endpoint: \(failure)"
        }
    }
}
