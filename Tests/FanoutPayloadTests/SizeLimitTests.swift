import FanoutAPNs
import FanoutPayload
import NIOCore
import Testing

@Suite struct SizeLimitTests {
    /// A template whose payload is exactly `size` bytes when field 1 is `fill` characters long.
    /// `{"aps":{"alert":"` + fill + `"}}` is 20 bytes of frame around the fill.
    static let frame = #"{"aps":{"alert":""}}"#.utf8.count

    @Test(arguments: [(APNsPushType.alert, 4096), (.background, 4096), (.liveactivity, 4096), (.voip, 5120)])
    func exactlyAtTheLimitPassesOneByteOverFails(pushType: APNsPushType, limit: Int) throws {
        let t = try template(#"{"aps":{"alert":"{{field.1}}"}}"#, options: .init(pushType: pushType))
        #expect(t.sizeLimit == limit)
        let atLimit = String(repeating: "x", count: limit - Self.frame)
        #expect(try render(t, fields: [atLimit]).utf8.count == limit)
        #expect(throws: PayloadEncodingError.tooLarge(size: limit + 1, limit: limit)) {
            try render(t, fields: [atLimit + "x"])
        }
    }

    @Test func escapingCountsTowardsTheLimit() throws {
        let t = try template(#"{"aps":{"alert":"{{field.1}}"}}"#)
        // 4076 quotes escape to 8152 bytes.
        #expect(throws: PayloadEncodingError.tooLarge(size: Self.frame + 2 * 4076, limit: 4096)) {
            try render(t, fields: [String(repeating: "\"", count: 4076)])
        }
        let half = String(repeating: "\"", count: (4096 - Self.frame) / 2)
        #expect(try render(t, fields: [half]).utf8.count == 4096)
    }

    @Test func oversizeIsSentWhenAskedFor() throws {
        let t = try template(#"{"aps":{"alert":"{{field.1}}"}}"#)
        let over = String(repeating: "x", count: 5000)
        #expect(try render(t, fields: [over], oversize: .send).utf8.count == 5000 + Self.frame)
    }

    @Test func staticPartOverTheLimitIsRefusedAtLoad() {
        let alert = String(repeating: "x", count: 4096 - Self.frame)
        #expect(loadError(#"{"aps":{"alert":"\#(alert)"}}"#) == nil)
        let error = loadError(#"{"aps":{"alert":"\#(alert)x"}}"#)
        #expect(error?.code == .tooLarge)
        #expect(
            error?.message
                == "the template is 4097 bytes before any placeholder is filled in, over the 4096-byte limit for alert pushes"
        )
        #expect(loadError(#"{"aps":{"alert":"\#(alert)x"}}"#, options: .init(pushType: .voip)) == nil)
        #expect(loadError(#"{"aps":{"alert":"\#(alert)x"}}"#, options: .init(sizeLimit: 8192)) == nil)
    }

    @Test func configuredLimitOverridesThePushType() throws {
        let t = try template(#"{"aps":{"alert":"{{field.1}}"}}"#, options: .init(pushType: .voip, sizeLimit: 100))
        #expect(t.sizeLimit == 100)
        #expect(try render(t, fields: [String(repeating: "y", count: 80)]).utf8.count == 100)
        #expect(throws: PayloadEncodingError.tooLarge(size: 101, limit: 100)) {
            try render(t, fields: [String(repeating: "y", count: 81)])
        }
    }
}
