import FanoutAPNs
import Foundation
import Testing

@testable import FanoutSink

/// Channel management and broadcasts against an in-memory sink: each missing or wrong field
/// answered with its reason, in Apple's order (docs/apns.md, "Broadcast channels").
@Suite struct BroadcastChecksTests {
    static let app = "com.example.app"
    static let update = #"{"aps":{"timestamp":1732000000,"event":"update","content-state":{"score":"2-1"}}}"#
    static let requestID = "6E1F6F0E-3B8C-4C5A-9A0B-2D6C1F0E1A2B"
    static let unknownChannel = "AAAAAAAAAAAAAAAAAAAAAA=="

    /// A channel request: `:method`, `:path` and any other fields (a `nil` value removes one).
    static func fields(_ method: String, _ path: String, _ changes: [(String, String?)] = []) -> [(String, String)] {
        SinkHarness.changed(
            [(":method", method), (":scheme", "https"), (":path", path), (":authority", "api.push.apple.com")],
            changes
        )
    }

    static let channels = "/1/apps/\(app)/channels"
    static let broadcasts = "/4/broadcasts/apps/\(app)"

    static func broadcast(channel: String, _ changes: [(String, String?)] = []) -> [(String, String)] {
        fields(
            "POST",
            broadcasts,
            [("apns-channel-id", channel), ("apns-push-type", "liveactivity"), ("apns-priority", "10")] + changes
        )
    }

    /// Sends one request and returns its response and details.
    static func ask(
        _ sink: inout SinkHarness,
        _ fields: [(String, String)],
        body: String = ""
    ) throws -> (SinkHarness.Response, SinkHarness.Details) {
        let answer = sink.sendForDetails(fields, body: body)
        return try #require(answer)
    }

    /// Creates a channel with storage policy `policy` and returns its id.
    static func createChannel(_ sink: inout SinkHarness, policy: Int = 1) throws -> String {
        let body = #"{"message-storage-policy":\#(policy),"push-type":"LiveActivity"}"#
        let (created, details) = try ask(&sink, fields("POST", channels), body: body)
        #expect(created.status == 201)
        return try #require(details.channelID)
    }

    struct Case: CustomTestStringConvertible, Sendable {
        var name: String
        var changes: [(String, String?)]
        /// Fields added after the others (`CHANNEL`: the channel's id), for duplicates.
        var extra: [(String, String)] = []
        var body = update
        var status: Int
        var reason: String?
        var testDescription: String { name }
    }

    /// Broadcasts, each wrong in one or two ways: the first rule in Apple's order answers.
    static let cases: [Case] = [
        Case(name: "a good update", changes: [], status: 200),
        Case(
            name: "priority 5, expiration, a request id",
            changes: [
                ("apns-priority", "5"), ("apns-expiration", "1900000000"), ("apns-request-id", requestID),
            ],
            status: 200
        ),
        Case(
            name: "an end without content-state",
            changes: [],
            body: #"{"aps":{"event":"end","timestamp":2}}"#,
            status: 200
        ),
        Case(name: "GET on the broadcast path", changes: [(":method", "GET")], status: 405, reason: "MethodNotAllowed"),
        Case(
            name: "apns-channel-id twice",
            changes: [],
            extra: [("apns-channel-id", "CHANNEL")],
            status: 400,
            reason: "DuplicateHeaders"
        ),
        Case(
            name: "apns-request-id twice",
            changes: [("apns-request-id", requestID)],
            extra: [("apns-request-id", requestID)],
            status: 400,
            reason: "DuplicateHeaders"
        ),
        Case(
            name: "apns-priority twice",
            changes: [],
            extra: [("apns-priority", "10")],
            status: 400,
            reason: "DuplicateHeaders"
        ),
        Case(name: "no channel id", changes: [("apns-channel-id", nil)], status: 400, reason: "MissingChannelId"),
        Case(
            name: "no channel id and push type alert",
            changes: [("apns-channel-id", nil), ("apns-push-type", "alert")],
            status: 400,
            reason: "MissingChannelId"
        ),
        Case(
            name: "a channel id not base64",
            changes: [("apns-channel-id", "not base64!")],
            status: 400,
            reason: "BadChannelId"
        ),
        Case(
            name: "a channel id too long",
            changes: [("apns-channel-id", String(repeating: "A", count: 68))],
            status: 400,
            reason: "BadChannelId"
        ),
        Case(
            name: "a bad channel id and priority 7",
            changes: [("apns-channel-id", "%%"), ("apns-priority", "7")],
            status: 400,
            reason: "BadChannelId"
        ),
        Case(
            name: "an unknown channel",
            changes: [("apns-channel-id", unknownChannel)],
            status: 400,
            reason: "ChannelNotRegistered"
        ),
        Case(
            name: "an unknown channel and an empty payload",
            changes: [("apns-channel-id", unknownChannel)],
            body: "",
            status: 400,
            reason: "ChannelNotRegistered"
        ),
        Case(name: "no push type", changes: [("apns-push-type", nil)], status: 400, reason: "MissingPushType"),
        Case(name: "push type alert", changes: [("apns-push-type", "alert")], status: 400, reason: "InvalidPushType"),
        Case(
            name: "push type alert and priority 7",
            changes: [("apns-push-type", "alert"), ("apns-priority", "7")],
            status: 400,
            reason: "InvalidPushType"
        ),
        Case(name: "priority 7", changes: [("apns-priority", "7")], status: 400, reason: "BadPriority"),
        Case(
            name: "priority 7 and a bad request id",
            changes: [("apns-priority", "7"), ("apns-request-id", "nope")],
            status: 400,
            reason: "BadPriority"
        ),
        Case(name: "a bad request id", changes: [("apns-request-id", "nope")], status: 400, reason: "BadMessageId"),
        Case(
            name: "expiration not a number",
            changes: [("apns-expiration", "soon")],
            status: 400,
            reason: "BadExpirationDate"
        ),
        Case(name: "an empty payload", changes: [], body: "", status: 400, reason: "PayloadEmpty"),
        Case(
            name: "a payload over 5120 bytes",
            changes: [],
            body:
                #"{"aps":{"event":"update","timestamp":1,"content-state":{"x":"\#(String(repeating: "x", count: 5200))"}}}"#,
            status: 413,
            reason: "PayloadTooLarge"
        ),
        Case(
            name: "an alert payload",
            changes: [],
            body: #"{"aps":{"alert":"hi"}}"#,
            status: 400,
            reason: "BadPayload"
        ),
        Case(
            name: "an update without timestamp",
            changes: [],
            body: #"{"aps":{"event":"update","content-state":{}}}"#,
            status: 400,
            reason: "BadPayload"
        ),
        Case(name: "not JSON", changes: [], body: "{aps", status: 400, reason: "BadPayload"),
    ]

    @Test(arguments: cases)
    func eachBroadcastRuleAnswersWithItsReason(_ test: Case) throws {
        var sink = SinkHarness()
        let channel = try Self.createChannel(&sink)
        let request =
            Self.broadcast(channel: channel, test.changes)
            + test.extra.map { ($0.0, $0.1 == "CHANNEL" ? channel : $0.1) }
        let (response, details) = try Self.ask(&sink, request, body: test.body)
        #expect(response.status == test.status)
        #expect(response.reason == test.reason)
        #expect(details.requestID?.count == 36)
        if test.changes.contains(where: { $0.0 == "apns-request-id" && $0.1 == Self.requestID }) {
            #expect(details.requestID == Self.requestID)
        }
        let counts = sink.sink.state.channels.counts
        #expect(counts.broadcasts == (test.status == 200 ? 1 : 0))
    }

    @Test func channelManagementRoundTrip() throws {
        var sink = SinkHarness()
        let channel = try Self.createChannel(&sink, policy: 0)
        #expect(Data(base64Encoded: channel)?.count == 16)
        let id = ("apns-channel-id", Optional(channel))
        let (read, readDetails) = try Self.ask(
            &sink,
            Self.fields("GET", Self.channels, [id, ("apns-request-id", Self.requestID)])
        )
        #expect(read.status == 200)
        #expect(readDetails.requestID == Self.requestID)
        #expect(readDetails.body == #"{"message-storage-policy":0,"push-type":"LiveActivity"}"#)
        let (list, listDetails) = try Self.ask(&sink, Self.fields("GET", "/1/apps/\(Self.app)/all-channels"))
        #expect(list.status == 200)
        #expect(listDetails.body == #"{"channels":["\#(channel)"]}"#)
        // A channel that stores nothing takes only apns-expiration 0.
        let expiring = Self.broadcast(channel: channel, [("apns-expiration", "1900000000")])
        #expect(sink.send(expiring, body: Self.update)?.reason == "BadExpirationDate")
        #expect(
            sink.send(Self.broadcast(channel: channel, [("apns-expiration", "0")]), body: Self.update)?.status == 200
        )
        #expect(sink.send(Self.fields("DELETE", Self.channels, [id]), body: "")?.status == 204)
        #expect(sink.send(Self.broadcast(channel: channel), body: Self.update)?.reason == "ChannelNotRegistered")
        #expect(sink.send(Self.fields("GET", Self.channels, [id]), body: "")?.reason == "ChannelNotRegistered")
        #expect(sink.send(Self.fields("DELETE", Self.channels, [id]), body: "")?.reason == "ChannelNotRegistered")
        let (empty, emptyDetails) = try Self.ask(&sink, Self.fields("GET", "/1/apps/\(Self.app)/all-channels"))
        #expect(empty.status == 200)
        #expect(emptyDetails.body == #"{"channels":[]}"#)
        #expect(
            sink.send(Self.fields("GET", Self.channels, [("apns-channel-id", nil)]), body: "")?.reason
                == "MissingChannelId"
        )
        #expect(sink.send(Self.fields("PUT", Self.channels), body: "")?.reason == "MethodNotAllowed")
        #expect(
            sink.send(Self.fields("POST", "/1/apps/\(Self.app)/all-channels"), body: "")?.reason == "MethodNotAllowed"
        )
        #expect(sink.send(Self.fields("POST", "/1/apps/\(Self.app)/elsewhere"), body: "")?.reason == "BadPath")
    }

    static let creations: [(String, String?)] = [
        (#"{"message-storage-policy":1,"push-type":"LiveActivity"}"#, nil),
        (#"{"message-storage-policy":0,"push-type":"liveactivity"}"#, nil),
        (#"{"message-storage-policy":1}"#, "MissingPushType"),
        (#"{"message-storage-policy":1,"push-type":"alert"}"#, "InvalidPushType"),
        (#"{"message-storage-policy":2,"push-type":"LiveActivity"}"#, "BadPayload"),
        (#"{"push-type":"LiveActivity"}"#, "BadPayload"),
        ("[1]", "BadPayload"),
        ("", "PayloadEmpty"),
    ]

    @Test(arguments: creations)
    func aCreationNeedsItsConfiguration(_ body: String, _ reason: String?) throws {
        var sink = SinkHarness()
        let (response, details) = try Self.ask(&sink, Self.fields("POST", Self.channels), body: body)
        #expect(response.status == (reason == nil ? 201 : 400))
        #expect(response.reason == reason)
        #expect((details.channelID != nil) == (reason == nil))
    }

    @Test func authenticationComesBeforeTheChannel() throws {
        let key = TestKey(keyID: "ABC123DEFG", teamID: "TEAM123456")
        var configuration = SinkConfiguration()
        let now = Int64(Date().timeIntervalSince1970)
        configuration.tokenAuthentication = TokenAuthentication(keys: [key.sinkKey], now: { now })
        configuration.allowedBundles = [Self.app]
        var sink = SinkHarness(configuration)
        let bearer = ("authorization", Optional("bearer " + key.token(issuedAt: now)))
        let noChannel = Self.broadcast(channel: "x", [("apns-channel-id", nil)])
        #expect(sink.send(noChannel, body: Self.update)?.reason == "MissingProviderToken")
        #expect(sink.send(Self.fields("POST", Self.channels), body: "")?.reason == "MissingProviderToken")
        let otherApp = Self.fields("POST", "/1/apps/com.example.other/channels", [bearer])
        #expect(sink.send(otherApp, body: "")?.reason == "TopicDisallowed")
        #expect(
            sink.send(Self.broadcast(channel: "x", [("apns-channel-id", nil), bearer]), body: Self.update)?.reason
                == "MissingChannelId"
        )
    }

    @Test func aLiveActivityToATokenNeedsALiveActivityPayload() {
        var sink = SinkHarness()
        let fields = SinkHarness.fields([
            ("apns-push-type", "liveactivity"), ("apns-topic", "com.example.app.push-type.liveactivity"),
        ])
        #expect(sink.send(fields, body: Self.update)?.status == 200)
        #expect(sink.send(fields, body: SinkHarness.poll)?.reason == "BadPayload")
    }

    @Test func broadcastsCountTheirSubscribers() throws {
        var configuration = SinkConfiguration()
        configuration.scenario.channelSubscribers = .fixed(10_000)
        var sink = SinkHarness(configuration)
        let channel = try Self.createChannel(&sink)
        for _ in 0..<3 { #expect(sink.send(Self.broadcast(channel: channel), body: Self.update)?.status == 200) }
        let counts = sink.sink.state.channels.counts
        #expect((counts.broadcasts, counts.delivered, counts.subscribers) == (3, 30_000, 30_000))
        let figures = sink.statistics.figures(broadcast: counts)
        #expect(figures.broadcast == counts)
    }
}
