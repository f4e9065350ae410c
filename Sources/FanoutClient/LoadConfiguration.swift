import FanoutEndpoint
import FanoutHTTP2
import FanoutPayload

/// How a run sends: where and with which headers (the endpoint), which payload, and in what
/// shape.
public struct LoadConfiguration: Sendable {
    /// Where the requests go, their headers and their authorization.
    public var endpoint: APNsEndpoint
    public var encoder: PayloadEncoder
    /// Connections, streams, timeouts, tries, the load model.
    public var shape: LoadShape
    /// Where tokens answered 410 (Unregistered, ExpiredToken) are written, one per line, as a
    /// provider prunes them.
    public var goneTokens: TokenLineWriter?
    /// Whether connections keep a sample of the answers' ids (`LoadStatistics.answerIDs`, one
    /// answer in `AnswerIDSample.every`): `fanout send` writes it into its folder
    /// (answer-ids.json) for lookups at the endpoint; a run whose sink ends with it has no use
    /// for the sample and pays nothing for it.
    public var samplesAnswerIDs = false

    public init(endpoint: APNsEndpoint, encoder: PayloadEncoder, shape: LoadShape = LoadShape()) {
        self.endpoint = endpoint
        self.encoder = encoder
        self.shape = shape
    }

    /// A configuration sending to `host:port` with `headers`, the endpoint's other settings
    /// their defaults.
    public init(
        host: String,
        port: Int,
        transport: HTTP2Transport = .cleartext,
        headers: NotificationHeaders,
        encoder: PayloadEncoder,
        shape: LoadShape = LoadShape()
    ) {
        self.init(
            endpoint: APNsEndpoint(host: host, port: port, transport: transport, headers: headers),
            encoder: encoder,
            shape: shape
        )
    }
}
