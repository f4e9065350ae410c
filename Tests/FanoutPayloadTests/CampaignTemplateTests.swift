import FanoutAPNs
import Foundation
import Testing

@testable import FanoutPayload

/// A campaign's template (`CampaignTemplate`): both services' notifications in one file, each
/// half compiled as it is alone, and every mistake placed in the file.
@Suite struct CampaignTemplateTests {
    /// The fixture's halves render as poll.json and fcm-poll.json do, byte for byte.
    @Test func theFixturesHalvesAreTheTwoPollsFixtures() throws {
        let campaign = try CampaignTemplate(contentsOf: fixturePath("campaign-poll.json"))
        let apns = try PayloadTemplate(contentsOf: fixturePath("poll.json"))
        let fcm = try PayloadTemplate(fcmSendContentsOf: fixturePath("fcm-poll.json"))
        #expect(try render(campaign.apns) == render(apns))
        #expect(try render(campaign.fcm, token: "tok:APA91b") == render(fcm, token: "tok:APA91b"))
        #expect(campaign.fcm.sizeLimit == PayloadTemplate.fcmBodyLimit)
        #expect(campaign.apns.sizeLimit == apns.sizeLimit)
    }

    /// The fields name the token file's columns for both halves; the APNs options are the
    /// APNs half's alone.
    @Test func fieldsFillBothHalvesAndOptionsGoToAPNs() throws {
        let json = #"""
            {"fcm": {"message": {"data": {"who": "{{field.name}}"}}},
             "apns": {"aps": {"alert": "Hi {{field.name}}"}}}
            """#
        var options = PayloadTemplate.Options(fieldNames: ["name"])
        options.pushType = .alert
        let campaign = try CampaignTemplate(json: Array(json.utf8), file: "c.json", apnsOptions: options)
        #expect(try render(campaign.apns, fields: ["Ada"]) == #"{"aps":{"alert":"Hi Ada"}}"#)
        #expect(
            try render(campaign.fcm, token: "tok", fields: ["Ada"])
                == #"{"message":{"token":"tok","data":{"who":"Ada"}}}"#
        )
    }

    @Test(arguments: [
        (
            #"[1]"#, "c.json:1:1",
            #"a campaign template is an object, {"apns": {APNs payload}, "fcm": {"message": {…}}}, not an array"#
        ),
        (
            #"{"apns": {"aps": {}}}"#, "c.json:1:1",
            #"the campaign template has no "fcm": a campaign sends both services' notifications, "fcm": {"message": {…}}"#
        ),
        (
            "{\"apns\": {\"aps\": {}},\n \"gcm\": {}}", "c.json:2:2",
            #""gcm" is not a push service of a campaign template: its members are "apns" and "fcm" (FCM's half is "fcm": an HTTP v1 send request)"#
        ),
        (
            #"{"apns": "hi", "fcm": {"message": {}}}"#, "c.json:1:10",
            #""apns" is a string: it is the APNs payload, an object"#
        ),
        (
            // Each half's own mistakes keep their place in the campaign's file.
            "{\"apns\": {\"aps\": {}},\n \"fcm\": {\"notification\": {}}}", "c.json:2:9",
            #"the FCM send has no "message"; FCM requires one ({"message": {"notification": …}}): the request body, not the message alone"#
        ),
    ])
    func mistakesArePlacedInTheFile(json: String, place: String, message: String) {
        let error = #expect(throws: PayloadTemplateError.self) {
            try CampaignTemplate(json: Array(json.utf8), file: "c.json")
        }
        #expect(error?.message == message)
        #expect(error.flatMap(\.location).map { "\($0.file):\($0.line):\($0.column)" } == place)
    }

    /// An APNs half's error is placed where it stands in the file, not at the half's start.
    @Test func anAPNsHalfsErrorKeepsItsLine() {
        let json = "{\n \"fcm\": {\"message\": {}},\n \"apns\": {\"aps\": {\"badge\": \"one\"}}\n}"
        let error = #expect(throws: PayloadTemplateError.self) {
            try CampaignTemplate(json: Array(json.utf8), file: "c.json")
        }
        #expect(error?.location?.line == 3)
    }
}
