/// The `reason` of an APNs error response, with the status APNs sends it with
/// (docs/apns.md, "Response"). The sender reads them; the sink answers with them.
public enum APNsReason: String, CaseIterable, Sendable, Hashable {
    // 400
    case badCollapseId = "BadCollapseId"
    case badDeviceToken = "BadDeviceToken"
    case badExpirationDate = "BadExpirationDate"
    case badMessageId = "BadMessageId"
    case badPriority = "BadPriority"
    case badTopic = "BadTopic"
    case deviceTokenNotForTopic = "DeviceTokenNotForTopic"
    case duplicateHeaders = "DuplicateHeaders"
    case idleTimeout = "IdleTimeout"
    case invalidPushType = "InvalidPushType"
    case missingDeviceToken = "MissingDeviceToken"
    case missingTopic = "MissingTopic"
    case payloadEmpty = "PayloadEmpty"
    case topicDisallowed = "TopicDisallowed"
    /// A payload that is not a JSON object. APNs documents no reason for it; this one is
    /// Fanout's choice (docs/apns.md, "Payload", marks it "choose").
    case badPayload = "BadPayload"
    // 403
    case badCertificate = "BadCertificate"
    case badCertificateEnvironment = "BadCertificateEnvironment"
    case expiredProviderToken = "ExpiredProviderToken"
    case forbidden = "Forbidden"
    case invalidProviderToken = "InvalidProviderToken"
    case missingProviderToken = "MissingProviderToken"
    case unrelatedKeyIdInToken = "UnrelatedKeyIdInToken"
    case badEnvironmentKeyInToken = "BadEnvironmentKeyInToken"
    // 404, 405
    case badPath = "BadPath"
    case methodNotAllowed = "MethodNotAllowed"
    // 410
    case expiredToken = "ExpiredToken"
    case unregistered = "Unregistered"
    // 413
    case payloadTooLarge = "PayloadTooLarge"
    // 429
    case tooManyProviderTokenUpdates = "TooManyProviderTokenUpdates"
    case tooManyRequests = "TooManyRequests"
    // 500, 503
    case internalServerError = "InternalServerError"
    case serviceUnavailable = "ServiceUnavailable"
    case shutdown = "Shutdown"

    /// The HTTP status APNs answers this reason with.
    public var status: Int {
        switch self {
        case .badCollapseId, .badDeviceToken, .badExpirationDate, .badMessageId, .badPriority, .badTopic,
            .deviceTokenNotForTopic, .duplicateHeaders, .idleTimeout, .invalidPushType, .missingDeviceToken,
            .missingTopic, .payloadEmpty, .topicDisallowed, .badPayload:
            400
        case .badCertificate, .badCertificateEnvironment, .expiredProviderToken, .forbidden, .invalidProviderToken,
            .missingProviderToken, .unrelatedKeyIdInToken, .badEnvironmentKeyInToken:
            403
        case .badPath: 404
        case .methodNotAllowed: 405
        case .expiredToken, .unregistered: 410
        case .payloadTooLarge: 413
        case .tooManyProviderTokenUpdates, .tooManyRequests: 429
        case .internalServerError: 500
        case .serviceUnavailable, .shutdown: 503
        }
    }

    /// Whether a provider may send the notification again (APNs' guidance): 429 after a delay,
    /// 5xx with backoff; everything else is final.
    public var isRetryable: Bool { status == 429 || status >= 500 }
}
