import NIOCore

/// One FCM error answer as Google's front end writes it (docs/fcm.md, "Errors"): a
/// `google.rpc.Status` in Google's JSON envelope, and the `Retry-After` it may carry.
///
/// ```
///   HTTP 429, retry-after: 30
///   {"error":{"code":429,"message":"…","status":"RESOURCE_EXHAUSTED","details":[
///     {"@type":"type.googleapis.com/google.firebase.fcm.v1.FcmError","errorCode":"QUOTA_EXCEEDED"},
///     {"@type":"type.googleapis.com/google.rpc.QuotaFailure","violations":[
///       {"subject":"projects/P","description":"message rate exceeded"}]}]}}
/// ```
///
/// The SDKs classify an answer by its `FcmError` detail's `errorCode`, then by `status` (the
/// `@type` and both names must be exact: "How firebase-admin classifies errors"); `message`
/// becomes the exception's text. The answers below are the ones docs/fcm.md records: observed,
/// Google's own examples, or, where Google is silent, marked there as our assumption. Each is a
/// value made once and written as often as it is answered.
public struct FCMError: Error, Sendable, Hashable, CustomStringConvertible {
    public var status: GoogleStatus
    public var message: String
    public var details: [Detail]
    /// Seconds for a `retry-after` header (429 and 503); `nil` sends none.
    public var retryAfter: Int?

    /// A `details` entry: an object whose `@type` names its kind.
    public enum Detail: Sendable, Hashable {
        /// `google.firebase.fcm.v1.FcmError`: the `errorCode` the SDKs map to their exceptions.
        case fcmError(FCMErrorCode)
        /// `google.rpc.BadRequest` with one field violation (`message.data[0].value`, …).
        case badRequest(field: String, description: String)
        /// `google.rpc.QuotaFailure` with one violation: which quota, and how it was exceeded.
        case quotaFailure(subject: String, description: String)
    }

    public init(_ status: GoogleStatus, _ message: String, details: [Detail] = [], retryAfter: Int? = nil) {
        self.status = status
        self.message = message
        self.details = details
        self.retryAfter = retryAfter
    }

    /// The HTTP status the answer has.
    public var httpStatus: Int { status.httpStatus }

    /// `400 INVALID_ARGUMENT: Recipient of the message is not set.`
    public var description: String { "\(httpStatus) \(status.rawValue): \(message)" }

    /// The code of its `FcmError` detail; `nil` when it has none (a bad bearer, a data value
    /// that is not a string, a message too large).
    public var errorCode: FCMErrorCode? {
        for case .fcmError(let code) in details { return code }
        return nil
    }
}

// MARK: The answers FCM gives

extension FCMError {
    /// The message Google's front end says "invalid argument" with, and no more.
    public static let invalidArgumentText = "Request contains an invalid argument."
    /// The 401 text for a request with no bearer (and for THIRD_PARTY_AUTH_ERROR).
    public static let missingCredentialText =
        "Request is missing required authentication credential. Expected OAuth 2 access token, login cookie or other valid authentication credential. See https://developers.google.com/identity/sign-in/web/devconsole-project."
    /// The 401 text for a bearer that is expired, revoked or not a token.
    public static let invalidCredentialText =
        "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential. See https://developers.google.com/identity/sign-in/web/devconsole-project."

    /// A token that is not an FCM registration token (Google's example 2).
    public static let invalidRegistration = FCMError(
        .invalidArgument,
        "The registration token is not a valid FCM registration token",
        details: [.fcmError(.invalidArgument)]
    )

    /// A message with none of token, fid, topic and condition (observed).
    public static let noTarget = invalidField("message", "Recipient of the message is not set.")

    /// A message with more than one of token, fid, topic and condition, `fields` in the order
    /// they came (the body is undocumented: shaped as `noTarget`, our assumption).
    public static func moreThanOneTarget(_ fields: [String]) -> FCMError {
        invalidField(
            "message",
            "Exactly one of token, fid, topic or condition must be set; the message sets \(fields.joined(separator: ", "))."
        )
    }

    /// A value of a data map (`message.data`, or `message.android.data`) that is not a string,
    /// the `index`-th entry of the map (from 0) with `value` as it was written (Google's example
    /// 1: no FcmError detail).
    /// Any map of strings (`apns.headers`, …) refuses its values the same way.
    public static func dataValueNotString(in map: String = "message.data", index: Int, value: String) -> FCMError {
        invalidValue(at: "\(map)[\(index)].value", expected: "TYPE_STRING", value)
    }

    /// Any other field FCM refuses, named by its path (`message.android.ttl`), with why: a
    /// BadRequest violation and an FcmError (our assumption, as the invalid-token body).
    public static func invalidField(_ field: String, _ description: String) -> FCMError {
        FCMError(
            .invalidArgument,
            description,
            details: [.badRequest(field: field, description: description), .fcmError(.invalidArgument)]
        )
    }

    /// A message over 4,096 bytes (2,048 to a topic): no details at all (observed).
    public static let tooLarge = FCMError(.invalidArgument, invalidArgumentText)

    /// A token FCM no longer knows (observed).
    public static let unregistered = FCMError(
        .notFound,
        "Requested entity was not found.",
        details: [.fcmError(.unregistered)]
    )

    /// A token registered to another sender (the message from users' reports).
    public static let senderIDMismatch = FCMError(
        .permissionDenied,
        "SenderId mismatch",
        details: [.fcmError(.senderIDMismatch)]
    )

    /// A quota spent: the project's, one device's or one topic's, refilled in `retryAfter`
    /// seconds (the status, code and detail type Google's; the words our assumption).
    public static func quotaExceeded(_ quota: Quota, retryAfter: Int?) -> FCMError {
        FCMError(
            .resourceExhausted,
            "Quota exceeded for the \(quota.noun)'s send rate.",
            details: [
                .fcmError(.quotaExceeded),
                .quotaFailure(subject: quota.subject, description: quota.cause),
            ],
            retryAfter: retryAfter
        )
    }

    /// Which of FCM's three send rates a 429 is about (ErrorCode page: "message rate exceeded",
    /// "device message rate exceeded", "topic message rate exceeded").
    public enum Quota: Sendable, Hashable {
        /// The project's, named by its id.
        case project(String)
        /// One device's, named by its registration token.
        case device(String)
        /// One topic's, named by the topic.
        case topic(String)

        var noun: String {
            switch self {
            case .project: "project"
            case .device: "device"
            case .topic: "topic"
            }
        }

        /// The ErrorCode page's words for the cause.
        var cause: String {
            switch self {
            case .project: "message rate exceeded"
            case .device: "device message rate exceeded"
            case .topic: "topic message rate exceeded"
            }
        }

        var subject: String {
            switch self {
            case .project(let id): "projects/\(id)"
            case .device(let token): token
            case .topic(let name): "/topics/\(name)"
            }
        }
    }

    /// An internal error (observed).
    public static let `internal` = FCMError(.internal, "Internal error encountered.", details: [.fcmError(.internal)])

    /// The service unavailable for `retryAfter` seconds (canonical text, our assumption).
    public static func unavailable(retryAfter: Int?) -> FCMError {
        FCMError(
            .unavailable,
            "The service is currently unavailable.",
            details: [.fcmError(.unavailable)],
            retryAfter: retryAfter
        )
    }

    /// The app's APNs or web push credential bad: a 401 with the gateway's text.
    public static let thirdPartyAuth = FCMError(
        .unauthenticated,
        missingCredentialText,
        details: [.fcmError(.thirdPartyAuthError)]
    )

    /// No bearer: 401 with no FCM detail (observed).
    public static let missingCredential = FCMError(.unauthenticated, missingCredentialText)

    /// A bearer that is expired, revoked or not a token: 401 with no FCM detail.
    public static let invalidCredential = FCMError(.unauthenticated, invalidCredentialText)
}

// MARK: The refusals of a body FCM cannot read (FCMSendCheck)

extension FCMError {
    /// A body that is not JSON (our assumption for the words, after Google's JSON parser's).
    public static let malformedJSON = FCMError(.invalidArgument, "Invalid JSON payload received. Unexpected token.")

    /// A field FCM's messages do not have, at `path` ("" at the top).
    public static func unknownField(_ name: String, at path: String) -> FCMError {
        let said =
            path.isEmpty
            ? "Invalid JSON payload received. Unknown name \"\(name)\": Cannot find field."
            : "Invalid JSON payload received. Unknown name \"\(name)\" at '\(path)': Cannot find field."
        return FCMError(.invalidArgument, said, details: [.badRequest(field: path, description: said)])
    }

    /// A value of the wrong type or form at `path`, with the type expected and the value as
    /// written (the form of Google's data example).
    public static func invalidValue(at path: String, expected type: String, _ value: String) -> FCMError {
        let said = "Invalid value at '\(path)' (\(type)), \(value)"
        return FCMError(.invalidArgument, said, details: [.badRequest(field: path, description: said)])
    }
}

// MARK: Writing

extension FCMError {
    static let fcmErrorType = "type.googleapis.com/google.firebase.fcm.v1.FcmError"
    static let badRequestType = "type.googleapis.com/google.rpc.BadRequest"
    static let quotaFailureType = "type.googleapis.com/google.rpc.QuotaFailure"

    /// Writes the body, compact, after what `buffer` holds.
    public func write(into buffer: inout ByteBuffer) {
        buffer.writeStaticString(#"{"error":{"code":"#)
        buffer.writeString(String(httpStatus))
        buffer.writeStaticString(#","message":"#)
        JSONString.write(message, into: &buffer)
        buffer.writeStaticString(#","status":""#)
        buffer.writeString(status.rawValue)
        buffer.writeStaticString(#"""#)
        if !details.isEmpty {
            buffer.writeStaticString(#","details":["#)
            for (index, detail) in details.enumerated() {
                if index > 0 { buffer.writeStaticString(",") }
                detail.write(into: &buffer)
            }
            buffer.writeStaticString("]")
        }
        buffer.writeStaticString("}}")
    }
}

extension FCMError.Detail {
    func write(into buffer: inout ByteBuffer) {
        switch self {
        case .fcmError(let code):
            buffer.writeStaticString(#"{"@type":""#)
            buffer.writeString(FCMError.fcmErrorType)
            buffer.writeStaticString(#"","errorCode":""#)
            buffer.writeString(code.rawValue)
            buffer.writeStaticString(#""}"#)
        case .badRequest(let field, let description):
            buffer.writeStaticString(#"{"@type":""#)
            buffer.writeString(FCMError.badRequestType)
            buffer.writeStaticString(#"","fieldViolations":[{"field":"#)
            JSONString.write(field, into: &buffer)
            buffer.writeStaticString(#","description":"#)
            JSONString.write(description, into: &buffer)
            buffer.writeStaticString("}]}")
        case .quotaFailure(let subject, let description):
            buffer.writeStaticString(#"{"@type":""#)
            buffer.writeString(FCMError.quotaFailureType)
            buffer.writeStaticString(#"","violations":[{"subject":"#)
            JSONString.write(subject, into: &buffer)
            buffer.writeStaticString(#","description":"#)
            JSONString.write(description, into: &buffer)
            buffer.writeStaticString("}]}")
        }
    }
}
