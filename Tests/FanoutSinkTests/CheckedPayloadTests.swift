import FanoutPayload
import Testing

@testable import FanoutSink

/// `CheckedPayload`: the same bytes again are known to be one JSON object without being read
/// again, and its verdict is always `PayloadSyntax`'s.
@Suite struct CheckedPayloadTests {
    static let poll = Array(#"{"aps":{"alert":{"title":"Poll","body":"Do you like it?"},"badge":1}}"#.utf8)

    static func verdict(_ checked: CheckedPayload, _ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { checked.isJSONObject($0) }
    }

    static func truth(_ bytes: [UInt8]) -> Bool { bytes.withUnsafeBytes { PayloadSyntax.problem(in: $0) == nil } }

    @Test func theSameObjectAgainAndAnotherAndNotOne() {
        let storage = CheckedPayload.Storage()
        let checked = storage.payload
        #expect(Self.verdict(checked, Self.poll))
        #expect(Self.verdict(checked, Self.poll), "kept, then compared")
        // As long as the kept one, one byte different: not an object, and read to find out.
        var broken = Self.poll
        broken[broken.count - 1] = UInt8(ascii: "]")
        #expect(!Self.verdict(checked, broken))
        #expect(Self.verdict(checked, Self.poll), "what was kept stays")
        let other = Array(#"{"aps":{"badge":2}}"#.utf8)
        #expect(Self.verdict(checked, other))
        #expect(!Self.verdict(checked, []), "nothing: not an object, whatever was kept")
        #expect(!Self.verdict(checked, Array("[]".utf8)))
        // Longer than what is kept: read each time, and right each time.
        let long = Array(("{\"a\":\"" + String(repeating: "x", count: CheckedPayload.capacity) + "\"}").utf8)
        #expect(Self.verdict(checked, long))
        #expect(Self.verdict(checked, long))
        #expect(!Self.verdict(checked, long.dropLast() + Array("]".utf8)))
        #expect(Self.verdict(checked, other), "the one kept before the long one")
    }

    /// Payloads and their one-byte changes in a random order, each judged as `PayloadSyntax`
    /// judges it on its own: what is kept never changes a verdict.
    @Test func itsVerdictIsAlwaysTheSyntaxCheckers() {
        let storage = CheckedPayload.Storage()
        var random = SystemRandomNumberGenerator()
        let bases = [Self.poll, Array(#"{"aps":{"badge":2}}"#.utf8), Array(#"{"a":[1,2,{"b":null}]}"#.utf8)]
        let replacements = Array(#"{}[]",:\ 0a"#.utf8) + [0x00, 0xC3, 0xFF]
        var disagreements: [String] = []
        var refused = 0
        for _ in 0..<5_000 {
            var bytes = bases.randomElement(using: &random)!
            if Bool.random(using: &random) {
                let index = Int.random(in: 0..<bytes.count, using: &random)
                bytes[index] = replacements.randomElement(using: &random)!
            }
            let truth = Self.truth(bytes)
            if !truth { refused += 1 }
            if Self.verdict(storage.payload, bytes) != truth {
                disagreements.append(String(decoding: bytes, as: UTF8.self))
            }
        }
        #expect(disagreements.isEmpty, "\(disagreements.prefix(3))")
        #expect(refused > 500, "the changes made enough payloads that are not objects")
    }
}
