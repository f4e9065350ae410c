/// FCM's `ErrorCode` (docs/fcm.md, "Errors"): what an `FcmError` detail says went wrong, each
/// code with the `google.rpc` status and HTTP status FCM answers it with.
///
/// | errorCode              | HTTP | status             |
/// |------------------------|------|--------------------|
/// | INVALID_ARGUMENT       | 400  | INVALID_ARGUMENT   |
/// | UNREGISTERED           | 404  | NOT_FOUND          |
/// | SENDER_ID_MISMATCH     | 403  | PERMISSION_DENIED  |
/// | QUOTA_EXCEEDED         | 429  | RESOURCE_EXHAUSTED |
/// | UNAVAILABLE            | 503  | UNAVAILABLE        |
/// | INTERNAL               | 500  | INTERNAL           |
/// | THIRD_PARTY_AUTH_ERROR | 401  | UNAUTHENTICATED    |
///
/// `UNSPECIFIED_ERROR` ("no more information is available") is in the enum and travels with no
/// status of its own; `APNS_AUTH_ERROR`, an older name of THIRD_PARTY_AUTH_ERROR, is read as it.
public enum FCMErrorCode: String, Sendable, Hashable, CaseIterable {
    case unspecifiedError = "UNSPECIFIED_ERROR"
    case invalidArgument = "INVALID_ARGUMENT"
    case unregistered = "UNREGISTERED"
    case senderIDMismatch = "SENDER_ID_MISMATCH"
    case quotaExceeded = "QUOTA_EXCEEDED"
    case unavailable = "UNAVAILABLE"
    case `internal` = "INTERNAL"
    case thirdPartyAuthError = "THIRD_PARTY_AUTH_ERROR"

    /// This code's position in `allCases`, the subscript of a count kept by code: a switch,
    /// so that counting one neither hashes nor allocates.
    public var index: Int {
        switch self {
        case .unspecifiedError: 0
        case .invalidArgument: 1
        case .unregistered: 2
        case .senderIDMismatch: 3
        case .quotaExceeded: 4
        case .unavailable: 5
        case .internal: 6
        case .thirdPartyAuthError: 7
        }
    }

    /// The code named `text` in an `FcmError` detail, the older `APNS_AUTH_ERROR` included.
    public init?(wire text: some StringProtocol) {
        if text == "APNS_AUTH_ERROR" {
            self = .thirdPartyAuthError
        } else if let code = Self(rawValue: String(text)) {
            self = code
        } else {
            return nil
        }
    }

    /// The `status` FCM answers this code with; `nil` for `UNSPECIFIED_ERROR`.
    public var status: GoogleStatus? {
        switch self {
        case .unspecifiedError: nil
        case .invalidArgument: .invalidArgument
        case .unregistered: .notFound
        case .senderIDMismatch: .permissionDenied
        case .quotaExceeded: .resourceExhausted
        case .unavailable: .unavailable
        case .internal: .internal
        case .thirdPartyAuthError: .unauthenticated
        }
    }

    /// Whether sending the same message again can succeed: after the `Retry-After` a quota or
    /// an unavailable service gives, or after a backoff from an internal error. The others are
    /// the message's, the token's or the credentials' and fail the same way every time, so a
    /// sender that retries them only adds load ("What FCM asks of senders").
    public var isRetryable: Bool {
        switch self {
        case .quotaExceeded, .unavailable, .internal: true
        case .unspecifiedError, .invalidArgument, .unregistered, .senderIDMismatch, .thirdPartyAuthError: false
        }
    }
}
