import FanoutTestSupport
import Foundation
import NIOCore
import Testing

@testable import FanoutFCM

/// FCM's error codes and the statuses they travel with, as docs/fcm.md's table has them.
@Suite struct FCMErrorCodeTests {
    @Test func eachCodeTravelsWithItsStatusAndHTTPStatus() {
        let table: [(FCMErrorCode, GoogleStatus?, Int?)] = [
            (.unspecifiedError, nil, nil),
            (.invalidArgument, .invalidArgument, 400),
            (.unregistered, .notFound, 404),
            (.senderIDMismatch, .permissionDenied, 403),
            (.quotaExceeded, .resourceExhausted, 429),
            (.unavailable, .unavailable, 503),
            (.internal, .internal, 500),
            (.thirdPartyAuthError, .unauthenticated, 401),
        ]
        #expect(table.map(\.0) == FCMErrorCode.allCases)
        for (code, status, http) in table {
            #expect(code.status == status, "\(code)")
            #expect(code.status?.httpStatus == http, "\(code)")
        }
    }

    @Test func theWireNamesAreFCMsAndTheOlderAPNsNameIsRead() {
        #expect(
            FCMErrorCode.allCases.map(\.rawValue) == [
                "UNSPECIFIED_ERROR", "INVALID_ARGUMENT", "UNREGISTERED", "SENDER_ID_MISMATCH", "QUOTA_EXCEEDED",
                "UNAVAILABLE", "INTERNAL", "THIRD_PARTY_AUTH_ERROR",
            ]
        )
        for code in FCMErrorCode.allCases { #expect(FCMErrorCode(wire: code.rawValue) == code) }
        #expect(FCMErrorCode(wire: "APNS_AUTH_ERROR") == .thirdPartyAuthError)
        #expect(FCMErrorCode(wire: "unregistered") == nil)
        #expect(FCMErrorCode(wire: "") == nil)
    }

    /// Only what a later send can change is retried: a quota, an unavailable service, an
    /// internal error. The token's, the message's and the credentials' errors are permanent.
    @Test func onlyTheTransientCodesAreRetryable() {
        #expect(FCMErrorCode.allCases.filter(\.isRetryable) == [.quotaExceeded, .unavailable, .internal])
    }

    @Test func anHTTPStatusWithoutABodysStatusMapsAsFirebaseAdminMapsIt() {
        let mapped = [400, 401, 403, 404, 429, 500, 503].map { GoogleStatus(httpStatus: $0) }
        #expect(
            mapped == [
                .invalidArgument, .unauthenticated, .permissionDenied, .notFound, .resourceExhausted, .internal,
                .unavailable,
            ]
        )
        #expect(GoogleStatus(httpStatus: 200) == nil)
        #expect(GoogleStatus(httpStatus: 502) == nil)
    }
}

/// The error bodies, against the ones docs/fcm.md records (observed, or Google's examples), and
/// read back as a sender reads them.
@Suite struct FCMErrorBodyTests {
    static func text(_ error: FCMError) -> String {
        var buffer = ByteBuffer()
        error.write(into: &buffer)
        return String(buffer: buffer)
    }

    /// A JSON text as Foundation parses it, to compare two texts whatever their spacing.
    static func parsed(_ text: String) throws -> NSDictionary {
        try #require(JSONSerialization.jsonObject(with: Data(text.utf8)) as? NSDictionary)
    }

    /// Unregistered, as observed, byte for byte once the documented body's spaces are gone.
    @Test func anUnregisteredTokensBodyIsTheObservedOne() {
        #expect(
            Self.text(.unregistered)
                == #"{"error":{"code":404,"message":"Requested entity was not found.","status":"NOT_FOUND","#
                + #""details":[{"@type":"type.googleapis.com/google.firebase.fcm.v1.FcmError","#
                + #""errorCode":"UNREGISTERED"}]}}"#
        )
    }

    /// Each documented body and ours parse to the same JSON.
    @Test(arguments: [
        (
            FCMError.invalidRegistration,
            #"{"error":{"code":400,"message":"The registration token is not a valid FCM registration token","status":"INVALID_ARGUMENT","details":[{"@type":"type.googleapis.com/google.firebase.fcm.v1.FcmError","errorCode":"INVALID_ARGUMENT"}]}}"#
        ),
        (
            FCMError.dataValueNotString(index: 0, value: "12"),
            #"{"error":{"code":400,"message":"Invalid value at 'message.data[0].value' (TYPE_STRING), 12","status":"INVALID_ARGUMENT","details":[{"@type":"type.googleapis.com/google.rpc.BadRequest","fieldViolations":[{"field":"message.data[0].value","description":"Invalid value at 'message.data[0].value' (TYPE_STRING), 12"}]}]}}"#
        ),
        (
            FCMError.noTarget,
            #"{"error":{"code":400,"message":"Recipient of the message is not set.","status":"INVALID_ARGUMENT","details":[{"@type":"type.googleapis.com/google.rpc.BadRequest","fieldViolations":[{"field":"message","description":"Recipient of the message is not set."}]},{"@type":"type.googleapis.com/google.firebase.fcm.v1.FcmError","errorCode":"INVALID_ARGUMENT"}]}}"#
        ),
        (
            FCMError.tooLarge,
            #"{"error":{"code":400,"message":"Request contains an invalid argument.","status":"INVALID_ARGUMENT"}}"#
        ),
        (
            FCMError.internal,
            #"{"error":{"code":500,"message":"Internal error encountered.","status":"INTERNAL","details":[{"@type":"type.googleapis.com/google.firebase.fcm.v1.FcmError","errorCode":"INTERNAL"}]}}"#
        ),
        (
            FCMError.senderIDMismatch,
            #"{"error":{"code":403,"message":"SenderId mismatch","status":"PERMISSION_DENIED","details":[{"@type":"type.googleapis.com/google.firebase.fcm.v1.FcmError","errorCode":"SENDER_ID_MISMATCH"}]}}"#
        ),
        (
            FCMError.quotaExceeded(.project("fanout-test"), retryAfter: 30),
            #"{"error":{"code":429,"message":"Quota exceeded for the project's send rate.","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.firebase.fcm.v1.FcmError","errorCode":"QUOTA_EXCEEDED"},{"@type":"type.googleapis.com/google.rpc.QuotaFailure","violations":[{"subject":"projects/fanout-test","description":"message rate exceeded"}]}]}}"#
        ),
        (
            FCMError.unavailable(retryAfter: 5),
            #"{"error":{"code":503,"message":"The service is currently unavailable.","status":"UNAVAILABLE","details":[{"@type":"type.googleapis.com/google.firebase.fcm.v1.FcmError","errorCode":"UNAVAILABLE"}]}}"#
        ),
        (
            FCMError.thirdPartyAuth,
            #"{"error":{"code":401,"message":"Request is missing required authentication credential. Expected OAuth 2 access token, login cookie or other valid authentication credential. See https://developers.google.com/identity/sign-in/web/devconsole-project.","status":"UNAUTHENTICATED","details":[{"@type":"type.googleapis.com/google.firebase.fcm.v1.FcmError","errorCode":"THIRD_PARTY_AUTH_ERROR"}]}}"#
        ),
        (
            FCMError.invalidCredential,
            #"{"error":{"code":401,"message":"Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential. See https://developers.google.com/identity/sign-in/web/devconsole-project.","status":"UNAUTHENTICATED"}}"#
        ),
        (
            FCMError.missingCredential,
            #"{"error":{"code":401,"message":"Request is missing required authentication credential. Expected OAuth 2 access token, login cookie or other valid authentication credential. See https://developers.google.com/identity/sign-in/web/devconsole-project.","status":"UNAUTHENTICATED"}}"#
        ),
    ])
    func aBodyIsTheDocumentedOne(error: FCMError, documented: String) throws {
        #expect(try Self.parsed(Self.text(error)) == Self.parsed(documented), "\(Self.text(error))")
    }

    /// Every answer of the catalogue read back: the status and the FcmError code a sender reads
    /// are the ones written, and the HTTP status is the status's.
    @Test(arguments: FCMErrorBodyTests.catalogue)
    func aSenderReadsBackTheStatusAndTheCode(error: FCMError) {
        var buffer = ByteBuffer()
        error.write(into: &buffer)
        buffer.withUnsafeReadableBytes { body in
            #expect(FCMAnswerBody.status(in: body) == error.status)
            #expect(FCMAnswerBody.errorCode(in: body) == error.errorCode)
            #expect(FCMAnswerBody.messageName(in: body) == nil)
        }
    }

    /// An answer without an FcmError detail is counted by its status where that is a message's
    /// fate, as firebase-admin classifies it.
    @Test func aStatusWithoutACodeStandsForOneWhereAMessageCanMeetIt() {
        #expect(GoogleStatus.invalidArgument.errorCode == .invalidArgument)
        #expect(GoogleStatus.resourceExhausted.errorCode == .quotaExceeded)
        #expect(GoogleStatus.unavailable.errorCode == .unavailable && GoogleStatus.internal.errorCode == .internal)
        for status in [GoogleStatus.unauthenticated, .permissionDenied, .notFound] { #expect(status.errorCode == nil) }
        var buffer = ByteBuffer()
        FCMError.tooLarge.write(into: &buffer)
        buffer.withUnsafeReadableBytes { body in
            #expect(FCMAnswerBody.errorCode(in: body) == nil)
            #expect(FCMAnswerBody.status(in: body)?.errorCode == .invalidArgument)
        }
    }

    /// Only the project's quota binds every send: a device's or a topic's 429 is one token's.
    @Test func aSenderTellsTheProjectsQuotaFromADevicesOrATopics() {
        let answers: [(FCMError, Bool)] = [
            (.quotaExceeded(.project("fanout-test"), retryAfter: 25), true),
            (.quotaExceeded(.device("dXpL:APA91b-token"), retryAfter: 60), false),
            (.quotaExceeded(.topic("news"), retryAfter: 60), false),
            (.unavailable(retryAfter: 5), false),
        ]
        for (error, project) in answers {
            var buffer = ByteBuffer()
            error.write(into: &buffer)
            buffer.withUnsafeReadableBytes { #expect(FCMAnswerBody.isProjectQuota(in: $0) == project, "\(error)") }
        }
    }

    static let catalogue: [FCMError] = [
        .invalidRegistration, .noTarget, .moreThanOneTarget(["token", "topic"]),
        .dataValueNotString(index: 2, value: "true"), .invalidField("message.android.ttl", "ttl is at most 2419200s"),
        .tooLarge, .unregistered, .senderIDMismatch, .quotaExceeded(.project("p"), retryAfter: 1),
        .quotaExceeded(.device("abc"), retryAfter: nil), .quotaExceeded(.topic("news"), retryAfter: 60), .internal,
        .unavailable(retryAfter: 5), .thirdPartyAuth, .missingCredential, .invalidCredential,
    ]

    /// Google's bodies as they come, pretty-printed: the reader skips the spaces, and finds the
    /// code in the FcmError detail when a BadRequest comes first.
    @Test func aPrettyPrintedBodyIsReadToo() {
        let body = """
            {
              "error": {
                "code": 400,
                "message": "Request contains an invalid argument.",
                "status" : "INVALID_ARGUMENT",
                "details": [
                  {
                    "@type": "type.googleapis.com/google.rpc.BadRequest",
                    "fieldViolations": [ { "field": "message.token", "description": "Invalid registration token" } ]
                  },
                  {
                    "@type": "type.googleapis.com/google.firebase.fcm.v1.FcmError",
                    "errorCode": "APNS_AUTH_ERROR"
                  }
                ]
              }
            }
            """
        Array(body.utf8).withUnsafeBytes { bytes in
            #expect(FCMAnswerBody.status(in: bytes) == .invalidArgument)
            #expect(FCMAnswerBody.errorCode(in: bytes) == .thirdPartyAuthError)
        }
        // An errorCode outside an FcmError detail is not FCM's.
        Array(#"{"error":{"status":"INTERNAL","details":[{"@type":"x","errorCode":"UNREGISTERED"}]}}"#.utf8)
            .withUnsafeBytes { bytes in
                #expect(FCMAnswerBody.errorCode(in: bytes) == nil)
                #expect(FCMAnswerBody.status(in: bytes) == .internal)
            }
        // Not JSON at all (a front end's HTML page): nothing read.
        Array("<TITLE>Unauthorized</TITLE><H2>Error 401</H2>".utf8).withUnsafeBytes { bytes in
            #expect(FCMAnswerBody.status(in: bytes) == nil)
            #expect(FCMAnswerBody.errorCode(in: bytes) == nil)
        }
    }

    @Test func aSuccessNamesTheProjectsMessage() {
        var buffer = ByteBuffer()
        FCMAnswerBody.writeSuccess(project: "fanout-test", messageID: "0:1700000000000000%abc", into: &buffer)
        #expect(String(buffer: buffer) == #"{"name":"projects/fanout-test/messages/0:1700000000000000%abc"}"#)
        buffer.withUnsafeReadableBytes { body in
            #expect(FCMAnswerBody.messageName(in: body) == "projects/fanout-test/messages/0:1700000000000000%abc")
            #expect(FCMAnswerBody.status(in: body) == nil)
        }
    }

    /// Text that needs escaping (a device token or a field name is the sender's) stays JSON.
    @Test(arguments: ["a\"b", "back\\slash", "line\nbreak\ttab\r", "\u{01}\u{1f}", "é ☃ 𝄞", ""])
    func escapedTextParsesBackToItself(text: String) throws {
        let error = FCMError.invalidField(text, text)
        let parsed = try Self.parsed(Self.text(error))
        let body = try #require(parsed["error"] as? NSDictionary)
        #expect(body["message"] as? String == text)
        let details = try #require(body["details"] as? [NSDictionary])
        let violation = try #require((details.first?["fieldViolations"] as? [NSDictionary])?.first)
        #expect(violation["field"] as? String == text)
    }
}

/// The bodies through firebase-admin (PyPI), the SDK most providers' Python servers use: each
/// answer raises the exception the SDK's own classification gives it (docs/fcm.md, "How
/// firebase-admin classifies errors"), with our message as its text.
@Suite(.requires(.python3, .firebaseAdmin)) struct FirebaseAdminClassificationTests {
    @Test func firebaseAdminRaisesItsOwnExceptionForEachAnswer() throws {
        let expected: [(FCMError, String)] = [
            (.unregistered, "UnregisteredError"),
            (.quotaExceeded(.project("fanout-test"), retryAfter: 1), "QuotaExceededError"),
            (.quotaExceeded(.device("abc"), retryAfter: nil), "QuotaExceededError"),
            (.senderIDMismatch, "SenderIdMismatchError"),
            (.thirdPartyAuth, "ThirdPartyAuthError"),
            (.invalidRegistration, "InvalidArgumentError"),
            (.noTarget, "InvalidArgumentError"),
            (.moreThanOneTarget(["token", "topic"]), "InvalidArgumentError"),
            (.dataValueNotString(index: 0, value: "12"), "InvalidArgumentError"),
            (.tooLarge, "InvalidArgumentError"),
            (.internal, "InternalError"),
            (.unavailable(retryAfter: 5), "UnavailableError"),
            (.missingCredential, "UnauthenticatedError"),
            (.invalidCredential, "UnauthenticatedError"),
        ]
        let answers = expected.map { error, _ in
            ["status": error.httpStatus, "body": FCMErrorBodyTests.text(error)] as [String: Any]
        }
        let input = String(decoding: try JSONSerialization.data(withJSONObject: answers), as: UTF8.self)
        let lines = try PythonPeer.run("fcm_classify.py", [], input: input).split(separator: "\n")
        #expect(lines.count == expected.count)
        for ((error, exception), line) in zip(expected, lines) {
            let fields = line.split(separator: "\t", maxSplits: 1).map(String.init)
            #expect(fields.first == exception, "\(error.message)")
            #expect(fields.last == error.message)
        }
    }
}
