import NIOCore

/// What a sender reads of an FCM answer's body, in place: a success's message name, an
/// error's `status` and its `FcmError` detail's `errorCode` (docs/fcm.md, "Responses"), the
/// two an SDK classifies by. Spaces around `:` are tolerated; nothing else of JSON is parsed.
///
/// ```
///   200 {"name":"projects/P/messages/0:1700000000000000%31bd1c9631bd1c96"}
///   404 {"error":{"code":404,"message":"…","status":"NOT_FOUND","details":[
///         {"@type":"type.googleapis.com/google.firebase.fcm.v1.FcmError","errorCode":"UNREGISTERED"}]}}
/// ```
public enum FCMAnswerBody {
    /// Writes a success's body, `{"name":"projects/PROJECT/messages/ID"}`, after what `buffer`
    /// holds.
    public static func writeSuccess(project: String, messageID: String, into buffer: inout ByteBuffer) {
        buffer.writeStaticString(#"{"name":"#)
        JSONString.write("projects/\(project)/messages/\(messageID)", into: &buffer)
        buffer.writeStaticString("}")
    }

    /// The `name` of a success's body; `nil` when there is none (firebase-admin then counts
    /// the send as failed).
    public static func messageName(in body: UnsafeRawBufferPointer) -> Substring? {
        stringValue(of: nameKey, in: body).map { Substring(decoding: $0, as: UTF8.self) }
    }

    /// The error's `status`; `nil` when the body names none this module knows.
    public static func status(in body: UnsafeRawBufferPointer) -> GoogleStatus? {
        stringValue(of: statusKey, in: body).flatMap { GoogleStatus(rawValue: String(decoding: $0, as: UTF8.self)) }
    }

    /// The error's `FcmError` `errorCode`; `nil` when it has no FcmError detail. Only the
    /// FcmError detail has an `errorCode` key.
    public static func errorCode(in body: UnsafeRawBufferPointer) -> FCMErrorCode? {
        guard let type = valueStart(of: fcmErrorTypeValue, in: body) else { return nil }
        let rest = UnsafeRawBufferPointer(rebasing: body[type...])
        return stringValue(of: errorCodeKey, in: rest).flatMap {
            FCMErrorCode(wire: String(decoding: $0, as: UTF8.self))
        }
    }

    /// Whether a QUOTA_EXCEEDED answer is about the project's quota (its QuotaFailure
    /// violation's `subject` is `projects/…`), not one device's or topic's: the rate that binds
    /// every send, not one token's (**our assumption** of the subject's form, as the sink
    /// writes it; docs/fcm.md, "Not verified").
    public static func isProjectQuota(in body: UnsafeRawBufferPointer) -> Bool {
        guard let subject = stringValue(of: subjectKey, in: body) else { return false }
        return subject.starts(with: projectsPrefix)
    }

    private static let subjectKey = Array(#""subject""#.utf8)
    private static let projectsPrefix = Array("projects/".utf8)
    private static let nameKey = Array(#""name""#.utf8)
    private static let statusKey = Array(#""status""#.utf8)
    private static let errorCodeKey = Array(#""errorCode""#.utf8)
    /// The FcmError detail's `@type` value, quoted: the detail begins there.
    private static let fcmErrorTypeValue = Array("\"\(FCMError.fcmErrorType)\"".utf8)

    /// The bytes of the string value of `key` (quoted, as in the body), without its quotes.
    private static func stringValue(of key: [UInt8], in bytes: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer? {
        guard var index = valueStart(of: key, in: bytes) else { return nil }
        index = skipSpaces(bytes, from: index)
        guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { return nil }
        let start = index + 1
        guard let end = bytes[start...].firstIndex(of: UInt8(ascii: "\"")) else { return nil }
        return UnsafeRawBufferPointer(rebasing: bytes[start..<end])
    }

    /// Where the value after `key` and its colon starts, or where `key` ends when no colon
    /// follows (a value searched for as a key: the FcmError `@type`).
    private static func valueStart(of key: [UInt8], in bytes: UnsafeRawBufferPointer) -> Int? {
        guard bytes.count >= key.count else { return nil }
        var start = 0
        while start + key.count <= bytes.count {
            guard let first = bytes[start...].firstIndex(of: key[0]), first + key.count <= bytes.count else {
                return nil
            }
            if UnsafeRawBufferPointer(rebasing: bytes[first..<first + key.count]).elementsEqual(key) {
                let after = skipSpaces(bytes, from: first + key.count)
                return after < bytes.count && bytes[after] == UInt8(ascii: ":") ? after + 1 : first + key.count
            }
            start = first + 1
        }
        return nil
    }

    private static func skipSpaces(_ bytes: UnsafeRawBufferPointer, from index: Int) -> Int {
        var index = index
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: " "), UInt8(ascii: "\n"), UInt8(ascii: "\r"), UInt8(ascii: "\t"): index += 1
            default: return index
            }
        }
        return index
    }
}
