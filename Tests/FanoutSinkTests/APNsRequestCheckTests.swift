import NIOCore
import Testing

@testable import FanoutSink

/// Every APNs validation rule, answered with APNs' status and reason, in the documented order.
@Suite struct APNsRequestCheckTests {
    struct Case: CustomTestStringConvertible, Sendable {
        let name: String
        let token: String
        let changes: [(String, String?)]
        let body: String
        let status: Int
        let reason: String?
        var testDescription: String { name }

        init(
            _ name: String,
            token: String = String(repeating: "ab", count: 32),
            _ changes: [(String, String?)] = [],
            body: String = SinkHarness.poll,
            status: Int,
            reason: String?
        ) {
            self.name = name
            self.token = token
            self.changes = changes
            self.body = body
            self.status = status
            self.reason = reason
        }
    }

    static let cases: [Case] = [
        Case("a good request", status: 200, reason: nil),
        Case("uppercase token", token: String(repeating: "AB", count: 32), status: 200, reason: nil),
        Case("a 200-digit token", token: String(repeating: "0f", count: 100), status: 200, reason: nil),
        Case("GET", [(":method", "GET")], status: 405, reason: "MethodNotAllowed"),
        Case("a path outside /3/device/", [(":path", "/3/devices/abcd")], status: 404, reason: "BadPath"),
        Case("an empty token", token: "", status: 400, reason: "MissingDeviceToken"),
        Case(
            "a token with a non-hex digit",
            token: String(repeating: "ab", count: 31) + "zz",
            status: 400,
            reason: "BadDeviceToken"
        ),
        Case("an odd-length token", token: String(repeating: "a", count: 63), status: 400, reason: "BadDeviceToken"),
        Case("a token too short", token: "abcd", status: 400, reason: "BadDeviceToken"),
        Case("unknown push type", [("apns-push-type", "banner")], status: 400, reason: "InvalidPushType"),
        Case("no push type means alert", [("apns-push-type", nil)], status: 200, reason: nil),
        Case("no topic", [("apns-topic", nil)], status: 400, reason: "MissingTopic"),
        Case("a topic with a space", [("apns-topic", "com.example app")], status: 400, reason: "BadTopic"),
        Case("voip without .voip", [("apns-push-type", "voip")], status: 400, reason: "DeviceTokenNotForTopic"),
        Case(
            "voip with .voip",
            [("apns-push-type", "voip"), ("apns-topic", "com.example.app.voip")],
            status: 200,
            reason: nil
        ),
        Case(
            "liveactivity with its suffix",
            [("apns-push-type", "liveactivity"), ("apns-topic", "com.example.app.push-type.liveactivity")],
            body: #"{"aps":{"timestamp":1732000000,"event":"update","content-state":{"score":"2-1"}}}"#,
            status: 200,
            reason: nil
        ),
        Case(
            "liveactivity with an alert's payload",
            [("apns-push-type", "liveactivity"), ("apns-topic", "com.example.app.push-type.liveactivity")],
            status: 400,
            reason: "BadPayload"
        ),
        Case("priority 7", [("apns-priority", "7")], status: 400, reason: "BadPriority"),
        Case("priority 5", [("apns-priority", "5")], status: 200, reason: nil),
        Case(
            "background with priority 10",
            [("apns-push-type", "background"), ("apns-priority", "10")],
            status: 400,
            reason: "BadPriority"
        ),
        Case("background without priority", [("apns-push-type", "background")], status: 400, reason: "BadPriority"),
        Case(
            "background with priority 5",
            [("apns-push-type", "background"), ("apns-priority", "5")],
            status: 200,
            reason: nil
        ),
        Case("an apns-id that is no UUID", [("apns-id", "123")], status: 400, reason: "BadMessageId"),
        Case(
            "an expiration that is no number",
            [("apns-expiration", "tomorrow")],
            status: 400,
            reason: "BadExpirationDate"
        ),
        Case("an expiration of 0", [("apns-expiration", "0")], status: 200, reason: nil),
        Case(
            "a collapse id of 65 bytes",
            [("apns-collapse-id", String(repeating: "c", count: 65))],
            status: 400,
            reason: "BadCollapseId"
        ),
        Case(
            "a collapse id of 64 bytes",
            [("apns-collapse-id", String(repeating: "c", count: 64))],
            status: 200,
            reason: nil
        ),
        Case("an empty payload", body: "", status: 400, reason: "PayloadEmpty"),
        Case("4096 bytes", body: payload(size: 4096), status: 200, reason: nil),
        Case("4097 bytes", body: payload(size: 4097), status: 413, reason: "PayloadTooLarge"),
        Case(
            "voip at 5120 bytes",
            [("apns-push-type", "voip"), ("apns-topic", "a.b.voip")],
            body: payload(size: 5120),
            status: 200,
            reason: nil
        ),
        Case(
            "voip at 5121 bytes",
            [("apns-push-type", "voip"), ("apns-topic", "a.b.voip")],
            body: payload(size: 5121),
            status: 413,
            reason: "PayloadTooLarge"
        ),
        Case("malformed JSON", body: #"{"aps":{"alert":"hi"}"#, status: 400, reason: "BadPayload"),
        Case("a JSON array", body: "[1,2]", status: 400, reason: "BadPayload"),
        Case("an unknown escape", body: #"{"aps":{"alert":"\x"}}"#, status: 400, reason: "BadPayload"),
        Case("text after the object", body: #"{"aps":{}} {}"#, status: 400, reason: "BadPayload"),
        // Order: the first failing rule answers.
        Case("GET to a bad path", [(":method", "GET"), (":path", "/x")], status: 405, reason: "MethodNotAllowed"),
        Case(
            "bad token and bad push type",
            token: "zz",
            [("apns-push-type", "x")],
            status: 400,
            reason: "BadDeviceToken"
        ),
        Case("bad priority and empty payload", [("apns-priority", "2")], body: "", status: 400, reason: "BadPriority"),
    ]

    /// A JSON object of exactly `size` bytes.
    static func payload(size: Int) -> String {
        let frame = #"{"aps":{"alert":""}}"#
        return #"{"aps":{"alert":""# + String(repeating: "x", count: size - frame.utf8.count) + #""}}"#
    }

    @Test(arguments: cases)
    func rule(_ testCase: Case) throws {
        var harness = SinkHarness()
        let responseSent = harness.send(
            SinkHarness.fields(token: testCase.token, testCase.changes),
            body: testCase.body
        )
        let response = try #require(responseSent)
        #expect(response.status == testCase.status)
        #expect(response.reason == testCase.reason)
        // Every response carries an apns-id.
        #expect(response.apnsID?.count == 36)
    }

    @Test func duplicateHeadersAreRefused() throws {
        var harness = SinkHarness()
        var fields = SinkHarness.fields()
        fields.append(("apns-priority", "10"))
        fields.append(("apns-priority", "5"))
        let responseSent = harness.send(fields)
        let response = try #require(responseSent)
        #expect(response == .init(status: 400, reason: "DuplicateHeaders", apnsID: response.apnsID))
    }

    @Test func theApnsIDIsEchoedOrGenerated() throws {
        var harness = SinkHarness()
        let id = "3F2504E0-4F89-41D3-9A0C-0305E82C3301"
        #expect(harness.send(SinkHarness.fields([("apns-id", id)]))?.apnsID == id)
        let first = harness.send(SinkHarness.fields())?.apnsID
        let second = harness.send(SinkHarness.fields())?.apnsID
        let generated = try #require(first)
        let another = try #require(second)
        #expect(generated != another)
        // Version 4, variant 10xx.
        #expect(Array(generated)[14] == "4")
        #expect("89AB".contains(Array(generated)[19]))
    }

    @Test func disallowedBundlesAreRefused() throws {
        var configuration = SinkConfiguration()
        configuration.allowedBundles = ["com.example.app"]
        var harness = SinkHarness(configuration)
        #expect(harness.send(SinkHarness.fields())?.status == 200)
        let other = harness.send(SinkHarness.fields([("apns-topic", "com.other.app")]))
        #expect(other?.reason == "TopicDisallowed")
        let voip = harness.send(
            SinkHarness.fields([("apns-push-type", "voip"), ("apns-topic", "com.example.app.voip")])
        )
        #expect(voip?.status == 200)
    }

    @Test func aConfiguredTokenLengthIsEnforced() throws {
        var configuration = SinkConfiguration()
        configuration.tokenFormat = .init(hexLengths: 64...64)
        var harness = SinkHarness(configuration)
        #expect(harness.send(SinkHarness.fields(token: String(repeating: "ab", count: 32)))?.status == 200)
        #expect(harness.send(SinkHarness.fields(token: String(repeating: "ab", count: 33)))?.reason == "BadDeviceToken")
    }
}
