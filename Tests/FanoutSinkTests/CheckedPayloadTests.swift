import FanoutPayload
import FanoutRandom
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
        withExtendedLifetime(storage) {
            let checked = storage.payload
            #expect(checked.keptCount == 0)
            #expect(Self.verdict(checked, Self.poll))
            #expect(checked.keptCount == Self.poll.count, "kept")
            #expect(Self.verdict(checked, Self.poll), "compared")
            // As long as the kept one, one byte different: read, refused, and nothing kept.
            var broken = Self.poll
            broken[broken.count - 1] = UInt8(ascii: "]")
            #expect(!Self.verdict(checked, broken))
            #expect(checked.keptCount == Self.poll.count, "what was kept stays")
            #expect(Self.verdict(checked, Self.poll))
            let other = Array(#"{"aps":{"badge":2}}"#.utf8)
            #expect(Self.verdict(checked, other))
            #expect(checked.keptCount == other.count, "another object replaces it")
            #expect(!Self.verdict(checked, []), "nothing: not an object, whatever was kept")
            #expect(!Self.verdict(checked, Array("[]".utf8)))
            // Longer than what is kept: read each time, right each time, and not kept.
            let long = Array(("{\"a\":\"" + String(repeating: "x", count: CheckedPayload.capacity) + "\"}").utf8)
            #expect(Self.verdict(checked, long))
            #expect(Self.verdict(checked, long))
            #expect(!Self.verdict(checked, long.dropLast() + Array("]".utf8)))
            #expect(checked.keptCount == other.count, "the one kept before the long one")
        }
    }

    /// Payloads and their one-byte changes in a random order, each judged as `PayloadSyntax`
    /// judges it on its own: what is kept never changes a verdict.
    @Test func itsVerdictIsAlwaysTheSyntaxCheckers() {
        let seed = UInt64.random(in: 0...UInt64.max)
        var random = SeededRandom(seed: seed)
        let storage = CheckedPayload.Storage()
        let bases = [Self.poll, Array(#"{"aps":{"badge":2}}"#.utf8), Array(#"{"a":[1,2,{"b":null}]}"#.utf8)]
        let replacements = Array(#"{}[]",:\ 0a"#.utf8) + [0x00, 0xC3, 0xFF]
        var disagreements: [String] = []
        var refused = 0
        var compared = 0
        withExtendedLifetime(storage) {
            for _ in 0..<5_000 {
                var bytes = bases[Int.random(in: 0..<bases.count, using: &random)]
                if Bool.random(using: &random) {
                    let index = Int.random(in: 0..<bytes.count, using: &random)
                    bytes[index] = replacements[Int.random(in: 0..<replacements.count, using: &random)]
                }
                let truth = Self.truth(bytes)
                if !truth { refused += 1 }
                if storage.payload.keptCount == bytes.count { compared += 1 }
                if Self.verdict(storage.payload, bytes) != truth {
                    disagreements.append(String(decoding: bytes, as: UTF8.self))
                }
            }
        }
        #expect(disagreements.isEmpty, "seed \(seed): \(disagreements.prefix(3))")
        #expect(refused > 500, "seed \(seed): the changes made enough payloads that are not objects")
        #expect(compared > 1_000, "seed \(seed): enough bodies met a kept payload of their length")
    }
}
