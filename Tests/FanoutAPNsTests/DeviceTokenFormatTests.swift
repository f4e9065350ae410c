import FanoutAPNs
import Testing

@Suite struct DeviceTokenFormatTests {
    @Test(arguments: [
        String(repeating: "a", count: 64), String(repeating: "AbCdEf09", count: 8), String(repeating: "0", count: 32),
        String(repeating: "f", count: 200), String(repeating: "1", count: 400),
    ])
    func acceptsHexOfAcceptedEvenLength(token: String) {
        #expect(DeviceTokenFormat.default.problem(in: token) == nil)
    }

    @Test func namesWhatIsWrong() {
        let format = DeviceTokenFormat.default
        #expect(format.problem(in: "") == .empty)
        #expect(
            format.problem(in: String(repeating: "a", count: 63) + "g")
                == .invalidCharacter(offset: 63, byte: UInt8(ascii: "g"))
        )
        #expect(format.problem(in: String(repeating: "a", count: 65)) == .oddLength(65))
        #expect(format.problem(in: String(repeating: "a", count: 30)) == .lengthOutOfRange(30, accepted: 32...400))
        #expect(format.problem(in: String(repeating: "a", count: 402)) == .lengthOutOfRange(402, accepted: 32...400))
        #expect(format.problem(in: "zz")?.description == "character 1 of the device token is 'z', not a hex digit")
        #expect(
            format.problem(in: "a\u{0}")?.description == "character 2 of the device token is byte 0x00, not a hex digit"
        )
        #expect(
            format.problem(in: String(repeating: "a", count: 30))?.description
                == "the device token has 30 hex characters; accepted are 32 to 400"
        )
    }

    /// The hex run is read sixteen bytes a step: a bad byte is named wherever it falls, inside
    /// a step or in the tail, whichever byte it is (those beside the digits' and letters' ranges
    /// included), in tokens of every even length from 32 to 80 digits.
    @Test func aBadByteIsNamedWhereverItFalls() {
        for length in stride(from: 32, through: 80, by: 2) {
            for position in 0..<length {
                for bad in Array("/:@`Gg \u{7F}".utf8) + [0x00, 0x80, 0xFF] {
                    var token = Array(String(repeating: "aF09", count: 20).utf8.prefix(length))
                    token[position] = bad
                    let problem = token.withUnsafeBytes { DeviceTokenFormat.default.problem(in: $0) }
                    #expect(
                        problem == .invalidCharacter(offset: position, byte: bad),
                        "length \(length), at \(position)"
                    )
                }
            }
        }
    }

    @Test func customRange() {
        let format = DeviceTokenFormat(hexLengths: 2...4)
        #expect(format.hexLengths == 2...4)
        #expect(format.problem(in: "ab") == nil)
        #expect(format.problem(in: "abcdef") == .lengthOutOfRange(6, accepted: 2...4))
    }
}

@Suite struct PushTypeTests {
    @Test func suffixesAndLimitsFollowAPNs() {
        let expected: [APNsPushType: String] = [
            .alert: "", .background: "", .mdm: "", .voip: ".voip", .complication: ".complication",
            .fileprovider: ".pushkit.fileprovider", .liveactivity: ".push-type.liveactivity",
            .location: ".location-query", .pushtotalk: ".voip-ptt", .widgets: ".push-type.widgets",
            .controls: ".push-type.controls",
        ]
        #expect(Set(expected.keys) == Set(APNsPushType.allCases))
        for (type, suffix) in expected {
            #expect(type.topicSuffix.description == suffix)
            #expect(type.payloadSizeLimit == (type == .voip ? 5120 : 4096))
        }
    }

    /// FCM registration tokens: their own alphabet, odd lengths allowed, their own words.
    @Test func fcmRegistrationTokens() {
        let format = DeviceTokenFormat.fcm
        #expect(format.problem(in: "dXpLq3mT:APA91bHn-x_Y") == nil)
        #expect(format.problem(in: "abc") == nil)
        #expect(format.problem(in: "ab/c") == .notInFCMToken(offset: 2, byte: UInt8(ascii: "/")))
        #expect(
            format.problem(in: String(repeating: "a", count: 4097)) == .fcmLengthOutOfRange(4097, accepted: 1...4096)
        )
        #expect(format.problem(in: "") == .empty)
        #expect(
            DeviceTokenProblem.notInFCMToken(offset: 2, byte: UInt8(ascii: "/")).description
                == "character 3 of the registration token is '/', not in an FCM registration token (A-Z a-z 0-9 - _ :)"
        )
    }
}
