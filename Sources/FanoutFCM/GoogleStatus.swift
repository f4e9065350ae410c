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

    /// The code an answer of `httpStatus` stands for when its body names none, as
    /// firebase-admin maps it (`_HTTP_STATUS_TO_ERROR_CODE`); `nil` for a status none of these
    /// travel with.
    public init?(httpStatus: Int) {
        guard let code = Self.allCases.first(where: { $0.httpStatus == httpStatus }) else { return nil }
        self = code
    }
}
