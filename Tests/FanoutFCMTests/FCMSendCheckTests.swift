import Testing

@testable import FanoutFCM

/// An FCM send's body checked as FCM checks it (docs/fcm.md, "Message" and "Validation"): what
/// it asks for when FCM takes it, and the refusal FCM gives when it does not.
@Suite struct FCMSendCheckTests {
    /// The send `body` asks for, with its target's text; or the refusal.
    static func check(_ body: String) -> (send: FCMSend?, target: String?, refusal: FCMError?) {
        Array(body.utf8).withUnsafeBytes { bytes in
            switch FCMSendCheck.check(bytes) {
            case .success(let send):
                let target = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[send.target]), as: UTF8.self)
                return (send, target, nil)
            case .failure(let refusal): return (nil, nil, refusal)
            }
        }
    }

    static let token = String(repeating: "a", count: 152)

    @Test func aTokensMessageIsTakenWithItsTarget() throws {
        let checked = Self.check(#"{"message":{"token":"\#(Self.token)"}}"#)
        let send = try #require(checked.send, "\(String(describing: checked.refusal))")
        #expect(checked.target == Self.token)
        #expect(send.targetKind == .token && !send.validateOnly)
        #expect(send.priority == nil && send.ttlSeconds == nil && send.collapseKey == nil && send.countedBytes == 0)
    }

    /// Every field a message has, in the SDKs' spellings: taken, and what matters to delivery
    /// read (android's data overrides the message's in the size).
    @Test func aFullMessageIsTakenAndItsDeliveryFieldsRead() throws {
        let body = """
            {
              "validate_only": true,
              "message": {
                "token": "t1",
                "data": {"score": "3:1", "collapse_key": "allowed"},
                "notification": {"title": "Goal", "body": "Spain 3:1", "image": "https://x/y.png"},
                "android": {
                  "collapse_key": "match-42", "priority": "high", "ttl": "3600s",
                  "restricted_package_name": "com.example.app", "data": {"k": "vv"},
                  "notification": {"icon": "ball", "color": "#ff0000", "vibrate_timings": ["0.5s"]},
                  "fcm_options": {"analytics_label": "goal_alert"}, "direct_boot_ok": false
                },
                "apns": {"headers": {"apns-priority": "10"}, "payload": {"aps": {"badge": 1}}},
                "webpush": {"headers": {"TTL": "60"}, "data": {"a": "b"}, "notification": {"title": "t"}},
                "fcm_options": {"analytics_label": "campaign-7"}
              }
            }
            """
        let checked = Self.check(body)
        let send = try #require(checked.send, "\(String(describing: checked.refusal))")
        #expect(send.validateOnly)
        #expect(checked.target == "t1")
        #expect(send.priority == .high && send.ttlSeconds == 3600)
        #expect(send.collapseKey?.count == "match-42".count)
        // android.data ("k": "vv", 3 bytes) replaces data; the notification's strings: 4 + 9 + 15.
        #expect(send.countedBytes == 3 + 4 + 9 + 15)
    }

    /// proto3's JSON mapping: the discovery document's lowerCamelCase is read as well.
    @Test func theCamelCaseSpellingsAreReadToo() throws {
        let body =
            #"{"validateOnly":true,"message":{"topic":"news","android":{"collapseKey":"c","priority":"NORMAL","ttl":"3.5s","directBootOk":true},"fcmOptions":{"analyticsLabel":"x"}}}"#
        let send = try #require(Self.check(body).send)
        #expect(send.validateOnly && send.targetKind == .topic && send.priority == .normal && send.ttlSeconds == 3)
    }

    @Test(arguments: [
        (#""0s""#, 0), (#""3.000000001s""#, 3), (#""2419200s""#, 2_419_200), (#""2419200.000000000s""#, 2_419_200),
    ])
    func aTTLWithinFourWeeksIsTakenRoundedDown(ttl: String, seconds: Int) {
        let send = Self.check(#"{"message":{"token":"t","android":{"ttl":\#(ttl)}}}"#).send
        #expect(send?.ttlSeconds == seconds)
    }

    @Test(arguments: ["news", "/topics/news", "/topics/private/a-b_c.d~e%f", "private/x"])
    func aTopicOfTheSDKsFormIsTaken(topic: String) {
        #expect(Self.check(#"{"message":{"topic":"\#(topic)"}}"#).send?.targetKind == .topic)
    }

    @Test func aConditionAndAnInstallationIDAreTargets() {
        #expect(
            Self.check(#"{"message":{"condition":"'a' in topics && 'b' in topics"}}"#).send?.targetKind == .condition
        )
        #expect(Self.check(#"{"message":{"fid":"f1"}}"#).send?.targetKind == .fid)
    }

    // MARK: Refused

    @Test func aMessageWithoutATargetIsRefusedAsObserved() {
        #expect(Self.check(#"{"message":{"data":{"a":"b"}}}"#).refusal == .noTarget)
        #expect(Self.check(#"{"message":{}}"#).refusal == .noTarget)
    }

    @Test func twoTargetsAreRefusedNamingBoth() {
        let refusal = Self.check(#"{"message":{"token":"t","topic":"news"}}"#).refusal
        #expect(refusal == .moreThanOneTarget(["token", "topic"]))
        #expect(refusal?.httpStatus == 400 && refusal?.errorCode == .invalidArgument)
    }

    /// Google's own example: `"data": {"k": 12}` is refused at `message.data[0].value`.
    @Test func aDataValueThatIsNotAStringIsRefusedAsGooglesExampleSays() {
        let refusal = Self.check(#"{"message":{"token":"t","data":{"k":12}}}"#).refusal
        #expect(refusal?.message == "Invalid value at 'message.data[0].value' (TYPE_STRING), 12")
        #expect(refusal?.errorCode == nil)
        #expect(
            Self.check(#"{"message":{"token":"t","data":{"a":"x","b":true}}}"#).refusal
                == .dataValueNotString(index: 1, value: "true")
        )
        #expect(
            Self.check(#"{"message":{"token":"t","android":{"data":{"a":{"b":1}}}}}"#).refusal
                == .dataValueNotString(in: "message.android.data", index: 0, value: #"{"b":1}"#)
        )
    }

    @Test(arguments: ["from", "message_type", "google.c.a.e", "gcm.notification.title", "gcm.n.e"])
    func aReservedDataKeyIsRefused(key: String) {
        let refusal = Self.check(#"{"message":{"token":"t","data":{"\#(key)":"v"}}}"#).refusal
        #expect(refusal == .invalidField("message.data", "Invalid data key \(key): it is reserved."))
    }

    @Test func theSizeLimitIsFourKilobytesAndTwoToATopic() {
        func data(_ bytes: Int) -> String { #"{"k":"\#(String(repeating: "v", count: bytes - 1))"}"# }
        #expect(Self.check(#"{"message":{"token":"t","data":\#(data(4096))}}"#).send?.countedBytes == 4096)
        #expect(Self.check(#"{"message":{"token":"t","data":\#(data(4097))}}"#).refusal == .tooLarge)
        #expect(Self.check(#"{"message":{"topic":"n","data":\#(data(2048))}}"#).send != nil)
        #expect(Self.check(#"{"message":{"topic":"n","data":\#(data(2049))}}"#).refusal == .tooLarge)
        #expect(Self.check(#"{"message":{"condition":"'n' in topics","data":\#(data(2049))}}"#).refusal == .tooLarge)
    }

    @Test func aTTLPastFourWeeksOrNotADurationIsRefused() {
        #expect(
            Self.check(#"{"message":{"token":"t","android":{"ttl":"100000000000000000000000s"}}}"#).refusal
                == .invalidField(
                    "message.android.ttl",
                    "The TTL is between 0 and 2419200s (4 weeks), not 100000000000000000000000s."
                )
        )
        let tooLong = Self.check(#"{"message":{"token":"t","android":{"ttl":"2419201s"}}}"#).refusal
        #expect(
            tooLong
                == .invalidField("message.android.ttl", "The TTL is between 0 and 2419200s (4 weeks), not 2419201s.")
        )
        #expect(
            Self.check(#"{"message":{"token":"t","android":{"ttl":"2419200.5s"}}}"#).refusal?.status == .invalidArgument
        )
        let duration = "type.googleapis.com/google.protobuf.Duration"
        for (ttl, shown) in [
            (#""-1s""#, #""-1s""#), (#""60""#, #""60""#), ("3600", "3600"), (#""1.0000000001s""#, #""1.0000000001s""#),
            (#""s""#, #""s""#),
        ] {
            #expect(
                Self.check(#"{"message":{"token":"t","android":{"ttl":\#(ttl)}}}"#).refusal
                    == .invalidValue(at: "message.android.ttl", expected: duration, shown),
                "\(ttl)"
            )
        }
    }

    @Test func aPriorityOtherThanNormalOrHighIsRefused() {
        #expect(
            Self.check(#"{"message":{"token":"t","android":{"priority":"urgent"}}}"#).refusal
                == .invalidValue(
                    at: "message.android.priority",
                    expected: "google.firebase.fcm.v1.AndroidMessagePriority",
                    #""urgent""#
                )
        )
    }

    @Test func anUnknownFieldIsRefusedWhereItIs() {
        #expect(Self.check(#"{"message":{"tokn":"t"}}"#).refusal == .unknownField("tokn", at: "message"))
        #expect(Self.check(#"{"message":{"token":"t"},"dry_run":true}"#).refusal == .unknownField("dry_run", at: ""))
        #expect(
            Self.check(#"{"message":{"token":"t","android":{"ttl":"1s","prio":"high"}}}"#).refusal
                == .unknownField("prio", at: "message.android")
        )
        #expect(
            Self.check(#"{"message":{"token":"t","notification":{"subtitle":"x"}}}"#).refusal
                == .unknownField("subtitle", at: "message.notification")
        )
    }

    @Test func aValueOfTheWrongTypeIsRefusedWithItsPath() {
        #expect(
            Self.check(#"{"validate_only":"yes","message":{"token":"t"}}"#).refusal
                == .invalidValue(at: "validate_only", expected: "TYPE_BOOL", #""yes""#)
        )
        #expect(
            Self.check(#"{"message":{"token":42}}"#).refusal
                == .invalidValue(at: "message.token", expected: "TYPE_STRING", "42")
        )
        #expect(
            Self.check(#"{"message":{"token":"t","notification":"hi"}}"#).refusal
                == .invalidValue(at: "message.notification", expected: "TYPE_MESSAGE", #""hi""#)
        )
        #expect(
            Self.check(#"{"message":{"token":"t","apns":{"payload":[1]}}}"#).refusal
                == .invalidValue(at: "message.apns.payload", expected: "TYPE_MESSAGE", "[1]")
        )
        #expect(
            Self.check(#"{"message":{"token":"t","webpush":{"headers":{"TTL":60}}}}"#).refusal
                == .invalidValue(at: "message.webpush.headers[0].value", expected: "TYPE_STRING", "60")
        )
        #expect(
            Self.check(#"{"message":"t"}"#).refusal == .invalidValue(at: "message", expected: "TYPE_MESSAGE", #""t""#)
        )
    }

    /// FCM's limit counts UTF-8 bytes, and SDKs write non-ASCII text as `\uXXXX` (Python's
    /// json does by default): the escapes are counted decoded, a surrogate pair as 4 bytes.
    @Test func theSizeIsCountedInDecodedUTF8() {
        let cjk = String(repeating: #"\u4e2d"#, count: 700)  // 700 × 3 bytes
        #expect(Self.check(#"{"message":{"token":"t","data":{"k":"\#(cjk)"}}}"#).send?.countedBytes == 1 + 2100)
        let over = String(repeating: #"\u4e2d"#, count: 1366)  // 4098 bytes and the key
        #expect(Self.check(#"{"message":{"token":"t","data":{"k":"\#(over)"}}}"#).refusal == .tooLarge)
        #expect(
            Self.check(#"{"message":{"token":"t","data":{"k":"\ud83d\ude00\n"}}}"#).send?.countedBytes == 1 + 4 + 1
        )
        #expect(
            Self.check(#"{"message":{"token":"t","notification":{"title":"\u00e9t\u00e9"}}}"#).send?.countedBytes == 5
        )
    }

    /// A key written with escapes is the key it decodes to: a field, or a reserved data key.
    @Test func anEscapedKeyIsReadDecoded() {
        #expect(Self.check(#"{"message":{"to\u006ben":"t"}}"#).send?.targetKind == .token)
        #expect(
            Self.check(#"{"message":{"token":"t","data":{"\u0066rom":"x"}}}"#).refusal
                == .invalidField("message.data", #"Invalid data key \u0066rom: it is reserved."#)
        )
    }

    /// "The last occurrence takes precedence" (docs/fcm.md): a field given twice is its last.
    @Test func aFieldGivenTwiceIsItsLastOccurrence() throws {
        #expect(Self.check(#"{"message":{"token":"a","token":"bb"}}"#).target == "bb")
        let message = try #require(
            Self.check(#"{"message":{"token":"a","topic":"x"},"message":{"topic":"news"}}"#).send
        )
        #expect(message.targetKind == .topic)
        let notification = Self.check(
            #"{"message":{"token":"t","notification":{"title":"long title"},"notification":{"title":"t"}}}"#
        )
        #expect(notification.send?.countedBytes == 1)
        let android = Self.check(#"{"message":{"token":"t","android":{"priority":"high"},"android":{"ttl":"1s"}}}"#)
        #expect(android.send?.priority == nil && android.send?.ttlSeconds == 1)
        #expect(Self.check(#"{"validate_only":true,"message":{"token":"t"}}"#).send?.validateOnly == true)
    }

    /// firebase-admin 7.7.0 sends `apns.live_activity_token` when a provider sets one.
    @Test func aLiveActivityTokenIsAnAPNsField() {
        #expect(Self.check(#"{"message":{"token":"t","apns":{"live_activity_token":"abc"}}}"#).send != nil)
    }

    @Test func aBodyWithoutAMessageIsRefused() {
        #expect(Self.check(#"{"validate_only":true}"#).refusal == .invalidField("message", "The message is not set."))
    }

    @Test func aTopicOrALabelOutOfForm() {
        #expect(
            Self.check(#"{"message":{"topic":"news!"}}"#).refusal
                == .invalidField("message.topic", "Invalid topic name news!.")
        )
        #expect(Self.check(#"{"message":{"topic":"/topics/"}}"#).refusal?.status == .invalidArgument)
        let label = String(repeating: "x", count: 51)
        #expect(
            Self.check(#"{"message":{"token":"t","fcm_options":{"analytics_label":"\#(label)"}}}"#).refusal
                == .invalidField("message.fcm_options.analytics_label", "Invalid analytics label \(label).")
        )
    }

    @Test(arguments: [
        "", "   ", "[]", #"{"message": }"#, #"{"message":{"token":"t"}"#, #"{"message":{"token":"t"}}x"#,
        #"{"message":{"token":"a\qb"}}"#, "{\"message\":{\"token\":\"a\u{01}b\"}}", #"{"message":{"token":"t",}}"#,
        #"{"message":{"token":"t","data":{"k":01}}}"#, #"{"message":{"token":"t","data":{"k":1.}}}"#,
        #"{"message":{"token":"t","apns":{"payload":{"a":[1,]}}}}"#, #"{"message":{"token":"t\u12"}}"#,
        String(repeating: #"{"message":{"token":"t","apns":{"payload":"#, count: 1) + String(repeating: "[", count: 70)
            + String(repeating: "]", count: 70) + "}}}",
    ])
    func malformedJSONIsRefusedWithoutACrash(body: String) {
        #expect(Self.check(body).refusal == .malformedJSON, "\(body)")
    }

    /// A refusal's detail names the field, and firebase-admin sees 400 INVALID_ARGUMENT.
    @Test func everyRefusalIsA400InvalidArgument() {
        for body in [#"{"message":{"tokn":"t"}}"#, #"{"message":{"token":"t","android":{"ttl":"x"}}}"#, "{"] {
            let refusal = Self.check(body).refusal
            #expect(refusal?.httpStatus == 400 && refusal?.status == .invalidArgument, "\(body)")
        }
    }
}
