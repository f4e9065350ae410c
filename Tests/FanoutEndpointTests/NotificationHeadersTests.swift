import FanoutAPNs
import Testing

@testable import FanoutEndpoint

/// APNs's header rules live in the library (docs/apns.md, "Request headers"): headers APNs would
/// refuse cannot be built, and the error names the header and the rule.
@Suite struct NotificationHeadersTests {
    @Test(arguments: [
        (priority: 7, said: "apns-priority is 10, 5 or 1, not 7"),
        (priority: 0, said: "apns-priority is 10, 5 or 1, not 0"),
        (priority: 11, said: "apns-priority is 10, 5 or 1, not 11"),
    ])
    func aPriorityAPNsRefusesIsAnError(priority: Int, said: String) {
        #expect(throws: APNsHeaderError(header: "apns-priority", String(said.dropFirst("apns-priority ".count)))) {
            try NotificationHeaders(topic: "com.example.app", priority: priority)
        }
    }

    @Test func eachPriorityAPNsTakesIsKept() throws {
        for priority in [10, 5, 1] {
            #expect(
                try NotificationHeaders(topic: "com.example.app", priority: priority).priority?.rawValue == priority
            )
        }
        #expect(try NotificationHeaders(topic: "com.example.app").priority == nil)
    }

    @Test func aCollapseIDOf65BytesIsAnErrorAnd64AreKept() throws {
        let sixtyFour = String(repeating: "c", count: 64)
        #expect(try NotificationHeaders(topic: "com.example.app", collapseID: sixtyFour).collapseID?.text == sixtyFour)
        // Bytes, not characters: 33 two-byte characters are 66 bytes.
        for long in [String(repeating: "c", count: 65), String(repeating: "é", count: 33)] {
            let error = #expect(throws: APNsHeaderError.self) {
                try NotificationHeaders(topic: "com.example.app", collapseID: long)
            }
            #expect(error?.description == "apns-collapse-id holds at most 64 bytes, not \(long.utf8.count)")
        }
    }

    @Test func theTopicEndsWithThePushTypesSuffix() throws {
        #expect(try NotificationHeaders(topic: "com.example.app.voip", pushType: .voip).topic == "com.example.app.voip")
        #expect(
            try NotificationHeaders(topic: "com.example.app.push-type.liveactivity", pushType: .liveactivity).pushType
                == .liveactivity
        )
        let error = #expect(throws: APNsHeaderError.self) {
            try NotificationHeaders(topic: "com.example.app", pushType: .voip)
        }
        #expect(error?.description == "apns-topic of a voip push is the bundle id then .voip, not com.example.app")
        // The suffix alone names no bundle.
        #expect(throws: APNsHeaderError.self) { try NotificationHeaders(topic: ".voip", pushType: .voip) }
        for topic in ["", "com.example app", "com.exämple.app"] {
            #expect(throws: APNsHeaderError.self) { try NotificationHeaders(topic: topic) }
        }
    }

    @Test func aBackgroundPushTakesPriority5Only() throws {
        #expect(
            try NotificationHeaders(topic: "com.example.app", pushType: .background, priority: 5).priority
                == .powerConsidered
        )
        let error = #expect(throws: APNsHeaderError.self) {
            try NotificationHeaders(topic: "com.example.app", pushType: .background, priority: 10)
        }
        #expect(error?.description == "apns-priority of a background push is 5, not 10")
    }

    @Test func aNegativeExpirationIsAnError() throws {
        #expect(try NotificationHeaders(topic: "com.example.app", expiration: 0).expiration == 0)
        #expect(throws: APNsHeaderError.self) { try NotificationHeaders(topic: "com.example.app", expiration: -1) }
    }
}
