import FanoutAPNs
import FanoutFCM
import FanoutPush
import Foundation
import Testing

/// One vocabulary for what two services refuse: an index per reason with no gaps and no
/// collisions (the engine's counts are arrays by it), each service's own word read back to the
/// same case, and summary.json's objects keyed by those words, an APNs run's exactly as before.
@Suite struct PushReasonTests {
    @Test func everyReasonHasItsOwnIndexInOrder() {
        #expect(PushReason.all.count == PushReason.count)
        #expect(PushReason.all.map(\.index) == Array(0..<PushReason.count))
        #expect(PushReason.all.filter { if case .apns = $0 { true } else { false } }.count == APNsReason.all.count)
        #expect(PushReason.all.sorted() == PushReason.all)
    }

    @Test func eachWordReadsBackToItsServicesReason() {
        for reason in PushReason.all { #expect(PushReason(rawValue: reason.rawValue) == reason) }
        #expect(PushReason(rawValue: "Unregistered") == .apns(.unregistered))
        #expect(PushReason(rawValue: "UNREGISTERED") == .fcm(.unregistered))
        #expect(PushReason(rawValue: "unregistered") == nil)
        // The two vocabularies share no word.
        #expect(Set(PushReason.all.map(\.rawValue)).count == PushReason.count)
    }

    @Test func statusesRetriesAndGoneTokensAreEachServices() {
        #expect(PushReason.apns(.tooManyRequests).status == 429 && PushReason.apns(.tooManyRequests).isRetryable)
        #expect(PushReason.fcm(.quotaExceeded).status == 429 && PushReason.fcm(.quotaExceeded).isRetryable)
        #expect(PushReason.fcm(.unregistered).status == 404 && !PushReason.fcm(.unregistered).isRetryable)
        #expect(PushReason.fcm(.unspecifiedError).status == nil)
        #expect(
            PushReason.all.filter(\.isGoneToken) == [.apns(.expiredToken), .apns(.unregistered), .fcm(.unregistered)]
        )
    }

    @Test func documentsKeyCountsByTheServicesWord() throws {
        let counts: [PushReason: Int] = [.apns(.badDeviceToken): 2, .fcm(.quotaExceeded): 3]
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let text = String(decoding: try encoder.encode(counts), as: UTF8.self)
        #expect(text == #"{"BadDeviceToken":2,"QUOTA_EXCEEDED":3}"#)
        #expect(try JSONDecoder().decode([PushReason: Int].self, from: Data(text.utf8)) == counts)
        #expect(PushReason.counts([.unregistered: 4]) == [.apns(.unregistered): 4])
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(PushReason.self, from: Data(#""Nope""#.utf8)) }
    }
}
