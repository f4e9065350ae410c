import FanoutAPNs
import FanoutHTTP2
import NIOCore

/// Where requests go and what each carries besides its path and body: the host and transport,
/// the APNs headers, the provider token. The load engine, the probe and channel management
/// reach an endpoint through it, each with HTTP/2 settings of its own. With `fcm` set, the
/// requests are FCM HTTP v1 sends instead (docs/fcm.md, "Endpoint and request"): one path for
/// every request, the token in the body, an OAuth2 bearer.
///
/// ```
///   APNsEndpoint ─ connect ─► TCP (+ TLS, ALPN h2) ─► the server's SETTINGS ─► the delegate
///        │                        └─ a failure ─► EndpointFailure (examine: the certificate)
///        └─ sharedFields ─► :method :scheme :authority apns-topic apns-push-type … authorization
///                      fcm: :method :scheme :authority content-type authorization
/// ```
public struct APNsEndpoint: Sendable {
    public var host: String
    public var port: Int
    public var transport: HTTP2Transport
    /// `:authority` and the TLS server name (defaults to `host`).
    public var authority: String?
    public var headers: NotificationHeaders
    /// Token auth: the provider tokens sent as `authorization`, renewed as they age.
    public var providerTokens: ProviderTokens?
    /// How long the endpoint may take to be reached: each TCP connect's limit, the limit for
    /// the server's SETTINGS after it, and how long refused and timed-out connects are tried
    /// again before a run ends unreachable.
    public var connectTimeout: Duration = Self.defaultConnectTimeout
    public static let defaultConnectTimeout: Duration = .seconds(10)
    /// The bundle id whose channels requests broadcast to (`fanout send --broadcast`): each
    /// "token" is then a channel id (`APNsRequestFields`); `nil` sends to devices.
    public var broadcastApp: String?
    /// FCM HTTP v1 instead of APNs (`fanout send --service fcm`); `headers` then go unused.
    public var fcm: FCMDestination?

    /// Where each request's `authorization` comes from: the FCM destination's bearer, or the
    /// APNs provider tokens; `nil` sends none (APNs certificate auth, or a sink without auth).
    package var authorizations: (any AuthorizationSource)? { fcm?.authorizations ?? providerTokens }

    public init(host: String, port: Int, transport: HTTP2Transport = .cleartext, headers: NotificationHeaders) {
        self.host = host
        self.port = port
        self.transport = transport
        self.headers = headers
    }

    /// Opens a connection to the endpoint on `loop` with this endpoint's transport, SNI name and
    /// connect timeout, and the caller's HTTP/2 `configuration`.
    package func connect<Delegate: HTTP2ConnectionDelegate>(
        on loop: any EventLoop,
        configuration: HTTP2Connection.Configuration,
        delegate: @escaping @Sendable () -> Delegate
    ) -> EventLoopFuture<(any Channel, NIOLoopBound<HTTP2ConnectionHandler<Delegate>>)> {
        HTTP2Channels.connect(
            host: host,
            port: port,
            group: loop,
            transport: transport,
            serverHostname: authority ?? host,
            configuration: configuration,
            // Reaching an HTTP/2 endpoint is its SETTINGS too: a listener that accepts and
            // says nothing is as unreachable as one that never accepts, in the same time.
            settingsTimeout: TimeAmount(connectTimeout),
            connectTimeout: TimeAmount(connectTimeout),
            delegate: delegate
        )
    }

    /// `failure`, with a certificate that failed verification looked at once more first:
    /// expired, or not trusted (`EndpointFailure.refined(byLeaf:)`).
    package func examine(_ failure: EndpointFailure?, on loop: any EventLoop) -> EventLoopFuture<EndpointFailure?> {
        guard let failure, failure.cause == .certificateNotTrusted else { return loop.makeSucceededFuture(failure) }
        return HTTP2Channels.peerCertificate(host: host, port: port, serverHostname: authority ?? host, group: loop)
            .map { failure.refined(byLeaf: $0) }
            .recover { _ in failure }
    }

    /// `:scheme`: the target URI's (RFC 9113 §8.3.1), http over h2c; APNs itself is https only.
    package var scheme: String {
        if case .cleartext = transport { "http" } else { "https" }
    }

    /// The header fields every request shares, in the order they are sent after `:path`.
    package func sharedFields(authorization: String?) -> HTTP2Fields {
        typealias Header = APNsRequest.Header
        var fields: [(name: String, value: String)] = [
            (":method", "POST"), (":scheme", scheme), (":authority", authority ?? host),
        ]
        if fcm != nil {
            fields.append(("content-type", "application/json"))
            var list = HTTP2Fields(fields)
            if let authorization { list.append(name: "authorization", value: authorization) }
            return list
        }
        // A broadcast names its app in the path (docs/apns.md, "Broadcast channels").
        if broadcastApp == nil { fields.append(("\(Header.topic)", headers.topic)) }
        fields.append(("\(Header.pushType)", headers.pushType.rawValue))
        if let priority = headers.priority { fields.append(("\(Header.priority)", priority.description)) }
        if let expiration = headers.expiration { fields.append(("\(Header.expiration)", String(expiration))) }
        if let collapseID = headers.collapseID { fields.append(("\(Header.collapseID)", collapseID.text)) }
        var list = HTTP2Fields(fields)
        if let authorization { list.append(name: "\(Header.authorization)", value: authorization) }
        return list
    }
}

/// An FCM HTTP v1 project to send to (docs/fcm.md, "Endpoint and request"): every request is
/// `POST /v1/projects/{project}/messages:send` with the message in its body, carrying an
/// OAuth2 access token as `authorization: Bearer …`.
public struct FCMDestination: Sendable {
    /// The project id (or number) the path names.
    public var project: String
    /// The bearer each request carries, renewed ahead of its expiry and after a 401.
    package var authorizations: any AuthorizationSource

    package init(project: String, authorizations: any AuthorizationSource) {
        self.project = project
        self.authorizations = authorizations
    }

    /// `/v1/projects/{project}/messages:send`.
    public var path: String { "/v1/projects/\(project)/messages:send" }

    /// What is wrong with `project` as the path's project id, if anything: a Google project id
    /// (or number) is letters, digits and hyphens, 1 to 63 of them, and travels in the path and
    /// in a success's name as it is (`fanout sink --service fcm --project` takes the same).
    public static func problem(inProject project: String) -> String? {
        guard (1...63).contains(project.count),
            project.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") })
        else { return "a project id is letters, digits and hyphens (1 to 63), not \"\(project)\"" }
        return nil
    }
}
