// What befell a notification that APNs did not answer: the sender's outcome vocabulary, shared
// by the engine that counts it (FanoutClient) and the documents that write it (FanoutResults,
// which import neither NIO nor the engine). Each raw value is the name summary.json counts the
// notification under; each type is a dictionary key the documents encode by that name.

/// Why a connection to the endpoint never got as far as an answer (FanoutEndpoint's
/// `EndpointFailure` says what happened in detail and what to do about it).
public enum UnreachableCause: String, Sendable, Hashable, CaseIterable, Codable, CodingKeyRepresentable {
    case nameNotResolved = "NameNotResolved"
    case connectionRefused = "ConnectionRefused"
    case connectTimeout = "ConnectTimeout"
    /// Another socket error (network unreachable, reset during connect).
    case connectFailed = "ConnectFailed"
    case certificateNotTrusted = "CertificateNotTrusted"
    case certificateExpired = "CertificateExpired"
    case certificateNameMismatch = "CertificateNameMismatch"
    case tlsHandshakeFailed = "TLSHandshakeFailed"
    case alpnNotH2 = "ALPNNotH2"
    case notHTTP2 = "NotHTTP2"
    /// Closed (or silent) before its first HTTP/2 frame: a TLS server given http://, or
    /// one turning connections away.
    case closedBeforeSettings = "ClosedBeforeSettings"
    case goAwayBeforeAnswer = "GoAwayBeforeAnswer"
    /// Its SETTINGS allowed no concurrent stream (0), and no more came within the stream
    /// timeout: nothing could be sent on it.
    case noStreamsAllowed = "NoStreamsAllowed"
    case forbidden = "Forbidden"
}

/// Notifications the server answered: accepted, rejected with the service's reason (APNs' or
/// FCM's, `PushReason`), or answered without one (`FailureCause.unexpectedResponse`). The one
/// rule by which the engine's counts and summary.json's are both said to be answered.
public func answeredCount<Reason>(accepted: Int, rejected: [Reason: Int], failed: [FailureCause: Int]) -> Int {
    accepted + rejected.values.reduce(0, +) + (failed[.unexpectedResponse] ?? 0)
}

/// Why a notification failed without an APNs answer. Its raw value is the name summary.json
/// counts it under; an endpoint never reached fails with `UnreachableCause`, by that
/// cause's name, so a new cause there is a failed reason here without another word.
public enum FailureCause: Sendable, Hashable, CaseIterable, RawRepresentable, Codable, CodingKeyRepresentable {
    /// Its connection closed (or could not be opened) every time it was tried.
    case connectionLost
    /// No answer within the stream timeout, every time.
    case timeout
    /// The server reset its stream (other than REFUSED_STREAM, which is sent again).
    case streamReset
    /// An answer without a known APNs reason, e.g. a gateway's 502 without a body.
    case unexpectedResponse
    /// The run was stopped before it could be sent.
    case cancelled
    /// The endpoint was never reached: what stood in the way.
    case unreachable(UnreachableCause)

    public static let allCases: [FailureCause] =
        [.connectionLost, .timeout, .streamReset, .unexpectedResponse, .cancelled]
        + UnreachableCause.allCases.map { .unreachable($0) }

    package static let all = FailureCause.allCases

    public var rawValue: String {
        switch self {
        case .connectionLost: "ConnectionLost"
        case .timeout: "Timeout"
        case .streamReset: "StreamReset"
        case .unexpectedResponse: "UnexpectedResponse"
        case .cancelled: "Cancelled"
        case .unreachable(let cause): cause.rawValue
        }
    }

    public init?(rawValue: String) {
        guard let cause = Self.allCases.first(where: { $0.rawValue == rawValue }) else { return nil }
        self = cause
    }

    /// What a notification failed with when the endpoint could not be reached.
    public init(_ cause: UnreachableCause) {
        self = .unreachable(cause)
    }
}

/// Why a token was not sent at all.
public enum SkipCause: String, Sendable, Hashable, CaseIterable, Codable, CodingKeyRepresentable {
    /// Its payload was over the push type's limit.
    case payloadTooLarge = "PayloadTooLarge"
    /// Its fields did not fit the template (a missing or malformed field).
    case badFields = "BadFields"

    package static let all = SkipCause.allCases
}
