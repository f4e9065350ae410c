import FanoutAPNs
import Foundation
import NIOCore
import Testing

@Suite struct APNsErrorBodyTests {
    static func reason(in body: ByteBuffer) -> APNsReason? {
        body.withUnsafeReadableBytes { APNsErrorBody.reason(in: $0) }
    }
    static func timestamp(in body: ByteBuffer) -> Int64? {
        body.withUnsafeReadableBytes { APNsErrorBody.timestamp(in: $0) }
    }

    /// What the sink writes, the sender reads back: every reason, with and without a timestamp.
    @Test(arguments: APNsReason.allCases)
    func everyReasonRoundTrips(reason: APNsReason) {
        var body = ByteBuffer()
        APNsErrorBody.write(reason, into: &body)
        #expect(Self.reason(in: body) == reason)
        #expect(Self.timestamp(in: body) == nil)

        body.clear()
        APNsErrorBody.write(reason, timestamp: 1_700_000_000_123, into: &body)
        #expect(Self.reason(in: body) == reason)
        #expect(Self.timestamp(in: body) == 1_700_000_000_123)
    }

    /// The bytes are APNs' (docs/apns.md, "Response"), and valid JSON that Foundation reads the
    /// same way.
    @Test func theBytesAreAPNs() throws {
        var body = ByteBuffer()
        APNsErrorBody.write(.unregistered, timestamp: 1_700_000_000_123, into: &body)
        #expect(String(buffer: body) == #"{"reason":"Unregistered","timestamp":1700000000123}"#)
        struct Read: Decodable {
            var reason: String
            var timestamp: Int64
        }
        let read = try JSONDecoder().decode(Read.self, from: Data(body.readableBytesView))
        #expect(read.reason == "Unregistered")
        #expect(read.timestamp == 1_700_000_000_123)

        body.clear()
        APNsErrorBody.write(.badDeviceToken, into: &body)
        #expect(String(buffer: body) == #"{"reason":"BadDeviceToken"}"#)
    }

    /// Bodies written by other servers: spaces around the colon, other keys first, none at all.
    @Test func readsOtherSpellingsAndRefusesWhatIsNotAReason() {
        func reason(_ text: String) -> APNsReason? { Self.reason(in: ByteBuffer(string: text)) }
        #expect(reason(#"{"reason" : "TooManyRequests"}"#) == .tooManyRequests)
        #expect(reason(#"{"timestamp":1,"reason":"ExpiredToken"}"#) == .expiredToken)
        #expect(reason(#"{"reason":"NoSuchReason"}"#) == nil)
        #expect(reason(#"{"reason":"Unregistered"#) == nil)
        #expect(reason(#"{"other":"BadTopic"}"#) == nil)
        #expect(reason("") == nil)
    }

    /// The sender's `:path` and the sink's check spell the same names.
    @Test func requestNamesAreAPNs() {
        #expect(APNsRequest.devicePathPrefix.description == "/3/device/")
        let names = [
            APNsRequest.Header.authorization, APNsRequest.Header.topic, APNsRequest.Header.pushType,
            APNsRequest.Header.priority, APNsRequest.Header.expiration, APNsRequest.Header.collapseID,
            APNsRequest.Header.apnsID,
        ].map(\.description)
        #expect(
            names == [
                "authorization", "apns-topic", "apns-push-type", "apns-priority", "apns-expiration",
                "apns-collapse-id", "apns-id",
            ]
        )
    }
}
