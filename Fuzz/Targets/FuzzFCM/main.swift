// FCM send bodies fed arbitrary bytes: FCMSendCheck reads any of them without a crash, past
// the end or into a loop.
//
// Oracles: a body it takes is one JSON value with nothing after it (JSONCursor skips it whole)
// whose target lies inside the body and whose counted bytes are within its target's limit; a body it
// refuses gets a 400 INVALID_ARGUMENT whose written body a sender reads back as written.
import FuzzSupport
import NIOCore

@testable import FanoutFCM

#if canImport(Glibc)
import Glibc

runFuzzer(
    seeds: textSeeds([
        #"{"message":{"token":"aaaa","data":{"k":"v"}}}"#,
        #"{"validate_only":true,"message":{"topic":"/topics/news","notification":{"title":"t","body":"b"}}}"#,
        #"{"message":{"token":"t","android":{"priority":"high","ttl":"3.5s","collapse_key":"c","data":{"a":"b"}}}}"#,
        #"{"message":{"condition":"'a' in topics","apns":{"headers":{"apns-priority":"5"},"payload":{"aps":{}}}}}"#,
        #"{"message":{"fid":"f","webpush":{"headers":{"TTL":"60"},"data":{"a":"b"}},"fcm_options":{"analytics_label":"x"}}}"#,
        #"{"message":{"token":"t","data":{"k":12}}}"#,
    ]),
    test
)
#endif

func test(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let body = FuzzInput(start, count).bytes
    switch FCMSendCheck.check(body) {
    case .success(let send):
        var cursor = JSONCursor(body)
        precondition(cursor.skipValue() && cursor.atEnd(), "a body taken is one JSON value")
        precondition(send.target.lowerBound >= 0 && send.target.upperBound <= body.count, "the target lies outside")
        let limit =
            send.targetKind == .token || send.targetKind == .fid
            ? FCMSendCheck.messageLimit : FCMSendCheck.topicMessageLimit
        precondition(send.countedBytes <= limit, "a body over the limit was taken")
    case .failure(let refusal):
        precondition(refusal.status == .invalidArgument, "a refusal other than INVALID_ARGUMENT: \(refusal)")
        var written = ByteBuffer()
        refusal.write(into: &written)
        written.withUnsafeReadableBytes { answer in
            precondition(FCMAnswerBody.status(in: answer) == refusal.status, "the status does not read back")
            precondition(FCMAnswerBody.errorCode(in: answer) == refusal.errorCode, "the code does not read back")
        }
    }
    return 0
}
