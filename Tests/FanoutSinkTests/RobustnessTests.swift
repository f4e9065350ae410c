import FanoutPayload
import FanoutRandom
import FanoutTestSupport
import Foundation
import Testing

/// Random and malformed payloads never crash the sink, and its JSON check agrees with
/// Foundation's parser on what is a JSON object.
@Suite struct SinkRobustnessTests {
    static let alphabet =
        Array(#"{}[]":,\ "aps"alert"x0123456789.eE+-truefalsenull\u00e9"#.utf8) + [0x00, 0x1F, 0xC3, 0xA9, 0xFF]

    static func randomText(_ random: inout SeededRandom) -> [UInt8] {
        (0..<Int(random.next() % 40)).map { _ in alphabet[Int(random.next() % UInt64(alphabet.count))] }
    }

    static let seeds: [[UInt8]] = [
        SinkHarness.poll, #"{"aps":{"alert":{"title":"é","body":"x\n"},"badge":-1.5e+3},"a":[true,false,null,{}]}"#,
        #"{}"#, #"{"a":[1,2.5,-0,"\u00e9\""]}"#,
    ].map { Array($0.utf8) }

    /// A seed with zero to two bytes replaced, inserted or removed.
    static func mutated(_ random: inout SeededRandom) -> [UInt8] {
        ByteMutation.mutated(seeds, alphabet: alphabet, edits: 3, cuts: false) { random.next() }
    }

    @Test func theJSONCheckAgreesWithFoundation() {
        var random = SeededRandom(seed: 11)
        var objects = 0
        var others = 0
        for round in 0..<50_000 {
            let bytes = round % 2 == 0 ? Self.mutated(&random) : Array(#"{"a":"#.utf8) + Self.randomText(&random)
            let ours = bytes.withUnsafeBytes { PayloadSyntax.problem(in: $0) == nil }
            // The oracle is JSONSerialization's parser itself (JSONDecoder's differs: it refuses
            // some bytes JSONSerialization takes), asked only whether it reads an object.
            let foundation = (try? JSONSerialization.jsonObject(with: Data(bytes))) is NSDictionary
            // Foundation also takes trailing commas, which RFC 8259 (and APNs) do not.
            let text = String(decoding: bytes, as: UTF8.self)
            let lenient = !ours && foundation && (text.contains(",}") || text.contains(",]"))
            #expect(ours == foundation || lenient, "\(text)")
            if ours { objects += 1 } else { others += 1 }
        }
        // Known-good and known-bad inputs, beyond the random ones.
        for (text, valid) in [
            (#"{"aps":{"alert":"é","badge":-1.5e+3,"a":[true,false,null,{}]}}"#, true), (#"{"a":01}"#, false),
            (#"{"a":1.}"#, false), (#"{"a":"\u12"}"#, false), ("{\"a\":\"\u{1}\"}", false), (#" {} "#, true),
            (#"{"a":[1,]}"#, false), (#"{"a" 1}"#, false), (String(repeating: "[", count: 100), false),
        ] {
            #expect(Array(text.utf8).withUnsafeBytes { PayloadSyntax.problem(in: $0) == nil } == valid, "\(text)")
        }
        // Both kinds are well represented.
        #expect(objects > 5000)
        #expect(others > 5000)
    }

    @Test func nestingIsBounded() {
        let deep = #"{"a":"# + String(repeating: "[", count: 10_000) + String(repeating: "]", count: 10_000) + "}"
        let problem = Array(deep.utf8).withUnsafeBytes { PayloadSyntax.problem(in: $0) }
        #expect(problem?.kind == .tooDeep)
    }

    @Test func randomPayloadsAndHeadersGetAnswersNotCrashes() {
        var random = SeededRandom(seed: 5)
        var harness = SinkHarness()
        for _ in 0..<2000 {
            let body = String(decoding: Self.randomText(&random), as: UTF8.self)
            let pick = { (values: [String]) in values[Int(random.next() % UInt64(values.count))] }
            let fields = SinkHarness.fields(
                token: pick(["", "ab", String(repeating: "ab", count: 32), "zz", String(repeating: "f", count: 401)]),
                [
                    ("apns-push-type", pick(["alert", "voip", "", "background", "x"])),
                    ("apns-priority", pick(["10", "5", "", "99999999999999999999", "-1"])),
                    ("apns-expiration", pick(["0", "1e9", "", "18446744073709551616"])),
                    ("apns-id", pick(["", "3F2504E0-4F89-41D3-9A0C-0305E82C3301", "3F2504E0_4F89"])),
                ]
            )
            let response = harness.send(fields, body: body)
            #expect(response.map { [200, 400, 404, 405, 413].contains($0.status) } == true)
        }
        harness.sink.connectionEnded(harness.server, error: nil)
        let summary = harness.statistics.summary
        #expect(summary.requests == 2000)
        #expect(summary.accepted + summary.rejected.values.reduce(0, +) == 2000)
    }
}
