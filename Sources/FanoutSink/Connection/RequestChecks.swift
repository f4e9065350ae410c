import FanoutAPNs
import FanoutHTTP2

/// What APNs's rules say of one request (`APNsRequestCheck`'s order): rejected with a reason,
/// or passed; the token when the request line held one (the card and the scenario read it).
struct RequestVerdict {
    /// The device token's place in the header list's bytes; `nil` when the request line was
    /// refused (or the sink is draining) before it was read.
    var token: APNsRequestCheck.Slice?
    /// The reason APNs would answer with; `nil`: the request passed every rule.
    var rejection: APNsReason?
    /// Whether the request brought a provider token issued later than the connection's last
    /// (the card notes each new one).
    var newProviderToken = false
    /// Whether the provider proved who it is: rule 4 passed (its certificate or token, or auth
    /// is off), whatever the rules after it or the scenario answer.
    var authenticated = false
}

/// One connection's APNs checks, in Apple's order: the request line (rules 1–3), the provider's
/// authentication (rule 4: its certificate, else its token), the notification (rules 5–11).
/// Header bytes in, a `RequestVerdict` out; the state it changes is the connection's token
/// authentication (the token it has accepted, when it was issued) and the last payload found to
/// be one JSON object (`CheckedPayload`: memory every copy of the checks shares, on the
/// connection's one loop). No clock, no socket.
struct RequestChecks {
    private let tokenFormat: DeviceTokenFormat
    private let tokenAuthentication: TokenAuthentication?
    private let certificateRequired: Bool
    private var authentication = TokenAuthentication.ConnectionState()
    /// The bundle ids of the client's verified certificate, when it authenticated with one.
    private var certificateTopics: Set<[UInt8]>?
    /// The topics a request may name: the certificate's bundles, else `--bundle`'s (`nil`: any).
    /// Kept apart from the two it comes from so that a request borrows it rather than building
    /// it (`??` made a copy, a reference count up and down, per request).
    private var allowedTopics: Set<[UInt8]>?
    /// The topic a request without `apns-topic` gets: the certificate's bundle when it names
    /// one (then `hasDefaultTopic`), else empty.
    private var defaultTopic: [UInt8] = []
    private var hasDefaultTopic = false
    /// The last payload found to be a JSON object (rule 11 without reading the same bytes again).
    private let checkedPayloadStorage = CheckedPayload.Storage()
    private let checkedPayload: CheckedPayload

    init(_ configuration: SinkConfiguration) {
        tokenFormat = configuration.tokenFormat
        tokenAuthentication = configuration.tokenAuthentication
        certificateRequired = configuration.certificateAuthentication
        allowedTopics = configuration.bundleBytes
        checkedPayload = checkedPayloadStorage.payload
    }

    /// The connection's token-auth state (for tests).
    var authenticationState: TokenAuthentication.ConnectionState { authentication }

    /// The client's TLS certificate was verified, naming these bundle ids: its topics are the
    /// ones allowed, and its one bundle (if one) is the topic of requests that name none.
    mutating func certificateVerified(topics: [[UInt8]]) {
        certificateTopics = Set(topics)
        allowedTopics = certificateTopics
        defaultTopic = topics.count == 1 ? topics[0] : []
        hasDefaultTopic = topics.count == 1
    }

    /// The verdict on one request whose fields (`APNsRequestCheck.fields`) lie in `bytes`.
    /// A draining sink refuses every request with Shutdown, as APNs does before it closes.
    mutating func verdict(
        _ fields: APNsRequestCheck.Fields,
        in bytes: UnsafeRawBufferPointer,
        body: UnsafeRawBufferPointer,
        bodyLength: Int,
        draining: Bool
    ) -> RequestVerdict {
        if draining { return RequestVerdict(token: nil, rejection: .shutdown) }
        let token: APNsRequestCheck.Slice
        switch APNsRequestCheck.checkRequestLine(fields, in: bytes, tokenFormat: tokenFormat) {
        case .failure(let rejection): return RequestVerdict(token: nil, rejection: rejection.reason)
        case .success(let slice): token = slice
        }
        let issuedBefore = authentication.tokenIssuedAt
        if let reason = authenticate(fields, in: bytes) { return RequestVerdict(token: token, rejection: reason) }
        let newProviderToken = authentication.tokenIssuedAt != issuedBefore
        // No closure over `self` on the way: a method of `self` handed one that captures it
        // makes the compiler copy the whole struct for each request (measured: 90 instructions
        // and two reference counts a request in the cost gate's sink stage).
        let rejection: Rejection?
        if hasDefaultTopic {
            let allowed = allowedTopics
            let checkedPayload = checkedPayload
            rejection = defaultTopic.withUnsafeBytes { defaultTopic in
                APNsRequestCheck.checkNotification(
                    fields,
                    in: bytes,
                    body: body,
                    bodyLength: bodyLength,
                    allowedBundles: allowed,
                    defaultTopic: defaultTopic,
                    checkedPayload: checkedPayload
                )
            }
        } else {
            rejection = APNsRequestCheck.checkNotification(
                fields,
                in: bytes,
                body: body,
                bodyLength: bodyLength,
                allowedBundles: allowedTopics,
                checkedPayload: checkedPayload
            )
        }
        return RequestVerdict(
            token: token,
            rejection: rejection?.reason,
            newProviderToken: newProviderToken,
            authenticated: true
        )
    }

    /// Rule 4 for a channel or broadcast request (docs/apns.md, "Broadcast channels"): the
    /// provider's certificate or token as for a notification, and the app in the path one the
    /// connection may name (400 TopicDisallowed otherwise, Fanout's choice). `authenticated`:
    /// the provider proved who it is, whether or not the app is one it may name.
    mutating func authenticateApp(
        _ fields: APNsRequestCheck.Fields,
        in bytes: UnsafeRawBufferPointer,
        bundle: UnsafeRawBufferPointer
    ) -> (authenticated: Bool, rejection: APNsReason?) {
        if let reason = authenticate(fields, in: bytes) { return (false, reason) }
        if let allowedTopics, !allowedTopics.contains(where: { $0.elementsEqual(bundle) }) {
            return (true, .topicDisallowed)
        }
        return (true, nil)
    }

    /// When the provider's token was issued (its `iat`, seconds), once one was accepted.
    var providerTokenIssuedAt: Int64 { authentication.tokenIssuedAt }

    /// The request's topic: its `apns-topic`, else the certificate's one bundle (empty: none).
    func topic<Result>(
        _ fields: APNsRequestCheck.Fields,
        in bytes: UnsafeRawBufferPointer,
        _ body: (UnsafeRawBufferPointer) -> Result
    ) -> Result {
        if fields.topic.isPresent { return body(APNsRequestCheck.view(fields.topic, bytes)) }
        return defaultTopic.withUnsafeBytes(body)
    }

    /// Rule 4 of `APNsRequestCheck`: the client's certificate, else its provider token.
    private mutating func authenticate(
        _ fields: APNsRequestCheck.Fields,
        in bytes: UnsafeRawBufferPointer
    ) -> APNsReason? {
        if let certificateTopics { return certificateTopics.isEmpty ? .badCertificate : nil }
        if let tokenAuthentication {
            let field = fields.authorization.isPresent ? APNsRequestCheck.view(fields.authorization, bytes) : nil
            return tokenAuthentication.check(field, state: &authentication)
        }
        return certificateRequired ? .missingProviderToken : nil
    }
}
