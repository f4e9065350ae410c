import FanoutEndpoint
import FanoutHTTP2

/// What a probe saw on its connection, handed over when the connection ends.
public struct ProbeOutcome: Sendable {
    public var record: ProbeState.Record
    public var finished: Bool
    /// The TLS version, `nil` over cleartext.
    public var tlsVersion: String?
    /// The server's SETTINGS as first received, and as in force at the end (after the first
    /// accepted request, when one was).
    public var settingsFirst: HTTP2Settings?
    public var settingsLast: HTTP2Settings?
    /// When the connection ended before its answers: why.
    public var failure: EndpointFailure?
    /// A GOAWAY the server sent: its code, and the APNs reason in its debug data.
    public var goAway: String?

    public init(
        record: ProbeState.Record = .init(),
        finished: Bool = false,
        tlsVersion: String? = nil,
        settingsFirst: HTTP2Settings? = nil,
        settingsLast: HTTP2Settings? = nil,
        failure: EndpointFailure? = nil,
        goAway: String? = nil
    ) {
        self.record = record
        self.finished = finished
        self.tlsVersion = tlsVersion
        self.settingsFirst = settingsFirst
        self.settingsLast = settingsLast
        self.failure = failure
        self.goAway = goAway
    }
}
