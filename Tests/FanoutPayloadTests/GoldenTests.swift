import FanoutPayload
import Foundation
import NIOCore
import Testing

/// The three real interactive notifications, compiled and encoded, compared byte for byte with
/// committed golden files. poll and dynamic-category are already in Fanout's key order, so their
/// goldens are the fixtures' own bytes.
@Suite struct GoldenTests {
    @Test(arguments: ["poll.json", "dynamic-category.json", "rich-actions.json"])
    func fixtureEncodesToGoldenBytes(name: String) throws {
        let template = try PayloadTemplate(contentsOf: fixturePath(name))
        let golden = try String(contentsOfFile: goldenPath(name), encoding: .utf8)
        #expect(try render(template) == golden)
    }

    @Test(arguments: ["poll.json", "dynamic-category.json"])
    func fixturesAlreadyInKeyOrderAreReproducedExactly(name: String) throws {
        let template = try PayloadTemplate(contentsOf: fixturePath(name))
        let fixture = try String(contentsOfFile: fixturePath(name), encoding: .utf8)
        #expect(try render(template) == fixture)
    }

    @Test func personalisedPollSplicesBadgeAndToken() throws {
        let template = try PayloadTemplate(
            contentsOf: fixturePath("poll-personalised.json"),
            options: .init(fieldNames: ["badge"])
        )
        let golden = try String(contentsOfFile: goldenPath("poll-personalised.json"), encoding: .utf8)
        #expect(try render(template, fields: ["7"]) == golden)
        #expect(template.placeholders == [.field(1), .token, .token])
        #expect(template.highestField == 1)
    }

    @Test func richActionsKeepsEveryValueAfterReordering() throws {
        let template = try PayloadTemplate(contentsOf: fixturePath("rich-actions.json"))
        let encoded = try JSONSerialization.jsonObject(with: Data(try render(template).utf8)) as? NSDictionary
        let original =
            try JSONSerialization.jsonObject(
                with: Data(contentsOf: URL(fileURLWithPath: fixturePath("rich-actions.json")))
            ) as? NSDictionary
        #expect(encoded != nil)
        #expect(encoded == original)
    }

    @Test func encodingAppendsAfterWhatTheBufferHolds() throws {
        let template = try PayloadTemplate(contentsOf: fixturePath("poll.json"))
        var buffer = ByteBuffer(string: "HEADER")
        let size = try PayloadEncoder(template: template).encode(token: sampleToken, into: &buffer)
        let fixture = try String(contentsOfFile: fixturePath("poll.json"), encoding: .utf8)
        #expect(size == fixture.utf8.count)
        #expect(String(buffer: buffer) == "HEADER" + fixture)
    }
}
