import FanoutPayload
import FanoutRandom
import FanoutTestSupport
import Testing

/// No input crashes the template loader: random bytes, and fixtures with random bytes changed,
/// inserted or cut. Each either loads or throws a located error.
@Suite struct RobustnessTests {
    static let alphabet =
        Array(#"{}[]":,\ ""aps"alert"badge{{token}}{{field.1:int}}0123456789.eE+-tfn\u00"#.utf8)
        + [0x00, 0x0A, 0x09, 0x80, 0xC3, 0xA9, 0xF0, 0x9F, 0xFF]

    func check(_ bytes: [UInt8], seed: UInt64) {
        do {
            let t = try PayloadTemplate(json: bytes, file: "fuzz.json")
            // Whatever loaded must encode to something or fail cleanly.
            _ = try? render(t, fields: ["1", "x"])
        } catch {
            #expect(error.location != nil || error.code == .tooLarge, "seed \(seed): \(error)")
        }
    }

    @Test func randomBytesNeverCrash() {
        for seed in UInt64(0)..<3000 {
            var random = SeededRandom(seed: seed)
            let count = Int(random.next() % 200)
            let bytes = (0..<count).map { _ in
                random.next() % 3 == 0
                    ? UInt8(truncatingIfNeeded: random.next())
                    : Self.alphabet[Int(random.next() % UInt64(Self.alphabet.count))]
            }
            check(bytes, seed: seed)
        }
    }

    @Test(arguments: ["poll.json", "dynamic-category.json", "rich-actions.json", "poll-personalised.json"])
    func mutatedFixturesNeverCrash(name: String) throws {
        let original = try Array(String(contentsOfFile: fixturePath(name), encoding: .utf8).utf8)
        for seed in UInt64(0)..<1500 {
            var random = SeededRandom(seed: seed)
            var bytes = original
            for _ in 0..<(1 + random.next() % 4) {
                let position = Int(random.next() % UInt64(bytes.count))
                switch random.next() % 3 {
                case 0: bytes[position] = Self.alphabet[Int(random.next() % UInt64(Self.alphabet.count))]
                case 1: bytes.insert(UInt8(truncatingIfNeeded: random.next()), at: position)
                default: bytes.removeSubrange(position..<min(bytes.count, position + Int(random.next() % 8)))
                }
                if bytes.isEmpty { break }
            }
            check(bytes, seed: seed)
        }
    }

    @Test func deepNestingIsRefusedNotRecursed() {
        let deep =
            #"{"aps":{},"x":"# + String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000) + "}"
        #expect(loadError(deep)?.message == "nesting deeper than 64 levels is not accepted")
        let objects =
            #"{"aps":{},"x":"# + String(repeating: #"{"a":"#, count: 50_000) + "1"
            + String(repeating: "}", count: 50_001)
        #expect(loadError(objects)?.message == "nesting deeper than 64 levels is not accepted")
    }
}
