import FanoutAPNs
import Testing

@testable import FanoutPayload

/// An FCM HTTP v1 send request as a template (`PayloadTemplate(fcmSend:)`): the body a device's
/// request carries, its message given `"token": "{{token}}"` unless it names a target, every
/// value free to hold placeholders, and the mistakes named with their place.
@Suite struct FCMSendTemplateTests {
    static func render(_ json: String, token: String = "tok:APA91b", fields: String = "") throws -> String {
        let template = try PayloadTemplate(fcmSend: Array(json.utf8), fieldNames: ["name"])
        let encoder = PayloadEncoder(template: template)
        var buffer = PayloadBuffer(byteCount: template.sizeLimit + 64)
        let token = Array(token.utf8)
        let fields = Array(fields.utf8)
        return try token.withUnsafeBytes { token in
            try fields.withUnsafeBytes { fields in
                let body = try encoder.encode(
                    NotificationInput(token: token, sequence: 7, fields: fields),
                    into: &buffer
                )
                return String(decoding: body, as: UTF8.self)
            }
        }
    }

    @Test func aMessageWithoutATargetIsSentToEachToken() throws {
        #expect(
            try Self.render(#"{"message": {"notification": {"title": "Poll"}}}"#)
                == #"{"message":{"token":"tok:APA91b","notification":{"title":"Poll"}}}"#
        )
        // validate_only and the message keep the order given.
        #expect(
            try Self.render(#"{"validate_only": true, "message": {"data": {"seq": "{{seq}}"}}}"#)
                == #"{"validate_only":true,"message":{"token":"tok:APA91b","data":{"seq":"7"}}}"#
        )
    }

    @Test func aTargetGivenIsKeptAndPlaceholdersFillAnyValue() throws {
        #expect(
            try Self.render(
                #"{"message": {"token": "{{token}}", "data": {"who": "{{field.name}}"}, "android": {"ttl": "60s"}}}"#,
                fields: "\tAda"
            ) == #"{"message":{"token":"tok:APA91b","data":{"who":"Ada"},"android":{"ttl":"60s"}}}"#
        )
        // A topic send is the same body for every token.
        #expect(try Self.render(#"{"message": {"topic": "news"}}"#) == #"{"message":{"topic":"news"}}"#)
        let template = try PayloadTemplate(fcmSend: Array(#"{"message": {}}"#.utf8))
        #expect(template.payload == nil)
        #expect(template.sizeLimit == PayloadTemplate.fcmBodyLimit)
    }

    @Test(arguments: [
        (
            #"["message"]"#, PayloadTemplateError.Code.invalidPayload,
            #"an FCM send is a JSON object with a "message" object ({"message": {"notification": …}}), found an array"#
        ),
        (
            #"{"notification": {"title": "t"}}"#, .invalidPayload,
            #"the FCM send has no "message"; FCM requires one ({"message": {"notification": …}}): the request body, not the message alone"#
        ),
        (#"{"message": "hi"}"#, .invalidPayload, "message must be an object, found a string"),
        (#"{"message": {}, "message": {}}"#, .malformedJSON, #"duplicate key "message" (first at send.json:1:2)"#),
        (#"{"message": {"data": {"a": "{{nope}}"}}}"#, .invalidPlaceholder, ""),
    ])
    func mistakesAreNamedWithTheirFile(json: String, code: PayloadTemplateError.Code, message: String) {
        let error = #expect(throws: PayloadTemplateError.self) {
            _ = try PayloadTemplate(fcmSend: Array(json.utf8), file: "send.json")
        }
        #expect(error?.code == code)
        #expect(error?.location?.file == "send.json")
        // The placeholder's own words are PlaceholderSyntax's, tested there.
        if !message.isEmpty { #expect(error?.message == message) }
    }
}
