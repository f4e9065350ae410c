/// The `reason` of an APNs error response, with the status APNs sends it with
/// (docs/apns.md, "Response"). The sender reads them; the sink answers with them.
public enum APNsReason: String, CaseIterable, Sendable, Hashable, Codable, CodingKeyRepresentable {
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
    // Broadcast channels (docs/apns.md, "Broadcast channels"); after the others, so that the
    // indices of counts kept before them do not move.
    case missingChannelId = "MissingChannelId"
    case badChannelId = "BadChannelId"
    case channelNotRegistered = "ChannelNotRegistered"
    case cannotCreateChannelConfig = "CannotCreateChannelConfig"
    case missingPushType = "MissingPushType"

    /// Every reason in declaration order, made once (`allCases` builds an array per call).
    /// Counts kept by reason are arrays in this order: `all[reason.index]` is `reason`.
    public static let all = allCases

    /// This reason's position in `all`, the subscript of its count: a switch, so that counting
    /// a rejection neither hashes nor allocates.
    public var index: Int {
        switch self {
        case .badCollapseId: 0
        case .badDeviceToken: 1
        case .badExpirationDate: 2
        case .badMessageId: 3
        case .badPriority: 4
        case .badTopic: 5
        case .deviceTokenNotForTopic: 6
        case .duplicateHeaders: 7
        case .idleTimeout: 8
        case .invalidPushType: 9
        case .missingDeviceToken: 10
        case .missingTopic: 11
        case .payloadEmpty: 12
        case .topicDisallowed: 13
        case .badPayload: 14
        case .badCertificate: 15
        case .badCertificateEnvironment: 16
        case .expiredProviderToken: 17
        case .forbidden: 18
        case .invalidProviderToken: 19
        case .missingProviderToken: 20
        case .unrelatedKeyIdInToken: 21
        case .badEnvironmentKeyInToken: 22
        case .badPath: 23
        case .methodNotAllowed: 24
        case .expiredToken: 25
        case .unregistered: 26
        case .payloadTooLarge: 27
        case .tooManyProviderTokenUpdates: 28
        case .tooManyRequests: 29
        case .internalServerError: 30
        case .serviceUnavailable: 31
        case .shutdown: 32
        case .missingChannelId: 33
        case .badChannelId: 34
        case .channelNotRegistered: 35
        case .cannotCreateChannelConfig: 36
        case .missingPushType: 37
        }
    }

    /// The HTTP status APNs answers this reason with.
    public var status: Int {
        switch self {
        case .badCollapseId, .badDeviceToken, .badExpirationDate, .badMessageId, .badPriority, .badTopic,
            .deviceTokenNotForTopic, .duplicateHeaders, .idleTimeout, .invalidPushType, .missingDeviceToken,
            .missingTopic, .payloadEmpty, .topicDisallowed, .badPayload, .missingChannelId, .badChannelId,
            .channelNotRegistered, .cannotCreateChannelConfig, .missingPushType:
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
