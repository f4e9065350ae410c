import FanoutAPNs
import FanoutPayload
import Foundation
import Testing

@Suite struct ModelTests {
    /// Every aps key Fanout models, written in reverse of the documented order.
    static let everyKey = """
        {"custom":{"n":null,"list":[true,false,1.25,-3,"s"]},
         "category-name":"content-extension",
         "notification-action":{"type":"url","value":"https://example.com","extra":1},
         "category-actions":[{"value":"https://a","type":"url","name":"A","handler":"x"}],
         "aps":{
           "content-changed":true,
           "input-push-channel":"chan",
           "input-push-token":1,
           "attributes":{"name":"match"},
           "attributes-type":"MatchAttributes",
           "dismissal-date":1700000300,
           "event":"update",
           "timestamp":1700000000,
           "content-state":{"score":[1,2]},
           "stale-date":1700000600,
           "filter-criteria":"work",
           "relevance-score":0.75,
           "interruption-level":"critical",
           "target-content-id":"window-1",
           "mutable-content":1,
           "content-available":1,
           "category":"poll",
           "thread-id":"t1",
           "sound":{"volume":0.5,"name":"alarm.caf","critical":1},
           "badge":9,
           "alert":{"loc-args":["a"],"loc-key":"LK","subtitle-loc-args":["b"],"subtitle-loc-key":"SLK",
                    "title-loc-args":["c"],"title-loc-key":"TLK","launch-image":"img.png","body":"B","subtitle":"S","title":"T"}
         }}
        """

    static let everyKeyInOrder =
        #"{"aps":{"alert":{"title":"T","subtitle":"S","body":"B","launch-image":"img.png","title-loc-key":"TLK","#
        + #""title-loc-args":["c"],"subtitle-loc-key":"SLK","subtitle-loc-args":["b"],"loc-key":"LK","loc-args":["a"]},"#
        + #""badge":9,"sound":{"critical":1,"name":"alarm.caf","volume":0.5},"thread-id":"t1","category":"poll","#
        + #""content-available":1,"mutable-content":1,"target-content-id":"window-1","interruption-level":"critical","#
        + #""relevance-score":0.75,"filter-criteria":"work","stale-date":1700000600,"content-state":{"score":[1,2]},"#
        + #""timestamp":1700000000,"event":"update","dismissal-date":1700000300,"attributes-type":"MatchAttributes","#
        + #""attributes":{"name":"match"},"input-push-token":1,"input-push-channel":"chan","content-changed":true},"#
        + #""category-actions":[{"name":"A","type":"url","value":"https://a","handler":"x"}],"#
        + #""notification-action":{"type":"url","value":"https://example.com","extra":1},"#
        + #""category-name":"content-extension","custom":{"n":null,"list":[true,false,1.25,-3,"s"]}}"#

    @Test func everyKeyIsWrittenInTheDocumentedOrder() throws {
        #expect(try render(template(Self.everyKey)) == Self.everyKeyInOrder)
    }

    @Test func everyKeyIsParsedIntoTheModel() throws {
        let aps = try #require(try template(Self.everyKey).payload).aps
        guard case .fields(let alert) = aps.alert else {
            Issue.record("alert should be a dictionary")
            return
        }
        #expect(alert.title == "T")
        #expect(alert.locArgs == ["a"])
        #expect(aps.badge == .literal(9))
        #expect(aps.sound == .critical(APNsPayload.CriticalSound(critical: 1, name: "alarm.caf", volume: 0.5)))
        #expect(aps.interruptionLevel == .critical)
        #expect(aps.relevanceScore == .literal(0.75))
        #expect(aps.event == .update)
        #expect(aps.contentState == [JSONMember("score", .array([.integer(1), .integer(2)]))])
        #expect(aps.contentChanged == true)
        #expect(aps.inputPushToken == 1)
    }

    @Test func modelBuiltInCodeMatchesTheParsedFile() throws {
        let payload = APNsPayload(
            aps: APNsPayload.APS(
                alert: .fields(APNsPayload.AlertFields(title: "Poll", body: "Do you like the new design?")),
                badge: 1,
                sound: .named("default"),
                category: "poll",
                mutableContent: 1
            ),
            dynamicActions: APNsPayload.DynamicActions(categoryActions: [
                APNsPayload.NotificationAction(name: "OK", type: "url", value: "https://example.com/ok"),
                APNsPayload.NotificationAction(name: "NOK", type: "url", value: "https://example.com/nok"),
            ])
        )
        let file = try PayloadTemplate(contentsOf: fixturePath("poll.json"))
        #expect(file.payload == payload)
        #expect(try render(PayloadTemplate(payload: payload)) == render(file))
    }

    @Test func placeholdersInTheModelBecomeSlots() throws {
        let payload = APNsPayload(
            aps: APNsPayload.APS(
                alert: .text(TemplateText([.text("Hi "), .placeholder(.field(2))])),
                badge: .placeholder(.field(1))
            ),
            customKeys: [
                JSONMember("device", .string(.placeholder(.token))), JSONMember("n", .placeholder(.sequence, .int)),
            ]
        )
        let t = try PayloadTemplate(payload: payload)
        #expect(t.placeholders == [.field(2), .field(1), .token, .sequence])
        #expect(
            try render(t, token: "ab", sequence: 5, fields: ["2", "Ann"])
                == #"{"aps":{"alert":"Hi Ann","badge":2},"device":"ab","n":5}"#
        )
    }

    @Test func customKeysMayNotRepeatModelledKeys() {
        for key in ["aps", "category-actions", "notification-action", "category-name"] {
            let payload = APNsPayload(aps: APNsPayload.APS(), customKeys: [JSONMember(key, .null)])
            #expect(throws: PayloadTemplateError.self) { try PayloadTemplate(payload: payload) }
        }
        let duplicate = APNsPayload(
            aps: APNsPayload.APS(),
            customKeys: [JSONMember("o", .object([JSONMember("a", .null), JSONMember("a", .null)]))]
        )
        #expect(throws: PayloadTemplateError.self) { try PayloadTemplate(payload: duplicate) }
    }

    @Test func optionsReachTheirProperties() {
        let options = PayloadTemplate.Options(
            pushType: .voip,
            sizeLimit: 1234,
            fieldNames: ["a", "b"],
            allowUnknownAPSKeys: true
        )
        #expect(options.pushType == .voip)
        #expect(options.sizeLimit == 1234)
        #expect(options.fieldNames == ["a", "b"])
        #expect(options.allowUnknownAPSKeys == true)
        #expect(options.effectiveSizeLimit == 1234)
        let defaults = PayloadTemplate.Options()
        #expect(defaults.pushType == .alert)
        #expect(defaults.sizeLimit == nil)
        #expect(defaults.fieldNames.isEmpty)
        #expect(defaults.allowUnknownAPSKeys == false)
        #expect(defaults.effectiveSizeLimit == 4096)
        #expect(PayloadTemplate.Options(pushType: .voip).effectiveSizeLimit == 5120)
    }

    @Test func encoderPolicyReachesItsProperty() throws {
        let t = try template(#"{"aps":{}}"#)
        #expect(PayloadEncoder(template: t).oversizePolicy == .reject)
        #expect(PayloadEncoder(template: t, oversizePolicy: .send).oversizePolicy == .send)
    }
}
