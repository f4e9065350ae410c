/// The canonical `google.rpc.Code` names Google's front end puts in an error's `status`
/// (docs/fcm.md, "Responses" and "Errors"), those FCM's answers use, each with the HTTP status
/// it travels with.
///
/// ```
///   {"error":{"code":404,"message":"…","status":"NOT_FOUND","details":[…]}}
///                  └ httpStatus              └ rawValue
/// ```
public enum GoogleStatus: String, Sendable, Hashable, CaseIterable {
    case invalidArgument = "INVALID_ARGUMENT"
    case unauthenticated = "UNAUTHENTICATED"
    case permissionDenied = "PERMISSION_DENIED"
    case notFound = "NOT_FOUND"
    case resourceExhausted = "RESOURCE_EXHAUSTED"
    case `internal` = "INTERNAL"
    case unavailable = "UNAVAILABLE"

    /// The HTTP status an answer with this code has.
    public var httpStatus: Int {
        switch self {
        case .invalidArgument: 400
        case .unauthenticated: 401
        case .permissionDenied: 403
        case .notFound: 404
        case .resourceExhausted: 429
        case .internal: 500
        case .unavailable: 503
        }
    }

    /// The FCM code an answer with this status and no FcmError detail is counted as (Google's
    /// own refusals of a body too large or a data value not a string carry none): the message's
    /// fate for the four a message can meet, `nil` for a bearer refused (401), a project the
    /// account may not send to (403) and a method not found (404), which are not one
    /// message's.
    public var errorCode: FCMErrorCode? {
        switch self {
        case .invalidArgument: .invalidArgument
        case .resourceExhausted: .quotaExceeded
        case .internal: .internal
        case .unavailable: .unavailable
        case .unauthenticated, .permissionDenied, .notFound: nil
        }
    }

    /// The code an answer of `httpStatus` stands for when its body names none, as
    /// firebase-admin maps it (`_HTTP_STATUS_TO_ERROR_CODE`); `nil` for a status none of these
    /// travel with.
    public init?(httpStatus: Int) {
        guard let code = Self.allCases.first(where: { $0.httpStatus == httpStatus }) else { return nil }
        self = code
    }
}
