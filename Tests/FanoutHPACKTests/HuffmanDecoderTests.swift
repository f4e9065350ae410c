import FanoutRandom
import NIOCore
import Testing

@testable import FanoutHPACK

/// The table-driven Huffman decoder against the decoder it replaced, kept here as the
/// reference: a plain reading of RFC 7541's canonical code (per length, compare the next bits
/// with the length's first code), with the RFC's padding rules written out.
@Suite struct HuffmanDecoderTests {
    enum Reference {
        static let order = (0..<257).sorted { (huffmanCodes[$0].length, $0) < (huffmanCodes[$1].length, $1) }

        /// The decoded bytes, or `nil` where the RFC calls the input a decoding error.
        static func decode(_ bytes: [UInt8]) -> [UInt8]? {
            var out: [UInt8] = []
            var accumulator: UInt64 = 0
            var available = 0
            var index = 0
            while true {
                while available <= 56 && index < bytes.count {
                    accumulator = accumulator << 8 | UInt64(bytes[index])
                    available += 8
                    index += 1
                }
                if available == 0 { return out }
                var matched = false
                for symbol in order where Int(huffmanCodes[symbol].length) <= available {
                    let length = Int(huffmanCodes[symbol].length)
                    let code = (accumulator >> UInt64(available - length)) & ((1 << UInt64(length)) - 1)
                    guard code == UInt64(huffmanCodes[symbol].code) else { continue }
                    if symbol == 256 { return nil }  // EOS in the string
                    out.append(UInt8(symbol))
                    available -= length
                    matched = true
                    break
                }
                if !matched {
                    // What is left must be padding: fewer than eight bits, all ones.
                    let mask: UInt64 = (1 << UInt64(available)) - 1
                    guard index == bytes.count, available < 8, accumulator & mask == mask else { return nil }
                    return out
                }
            }
        }
    }

    static func decode(_ bytes: [UInt8]) -> [UInt8]? {
        var out = [UInt8](repeating: 0, count: bytes.count * 8 / 5 + 1)
        let count = try? bytes.withUnsafeBytes { coded in
            try out.withUnsafeMutableBytes { try Huffman.decode(coded, into: $0.baseAddress!) }
        }
        return count.map { Array(out[0..<$0]) }
    }

    /// RFC 7541 Appendix C.4.1–C.4.3 and C.6.1's Huffman-coded strings.
    @Test(arguments: [
        ("f1e3c2e5f23a6ba0ab90f4ff", "www.example.com"),
        ("a8eb10649cbf", "no-cache"),
        ("25a849e95ba97d7f", "custom-key"),
        ("25a849e95bb8e8b4bf", "custom-value"),
        ("6402", "302"),
        ("aec3771a4b", "private"),
        ("d07abe941054d444a8200595040b8166e082a62d1bff", "Mon, 21 Oct 2013 20:13:21 GMT"),
        ("9d29ad171863c78f0b97c8e9ae82ae43d3", "https://www.example.com"),
    ])
    func theRFCsExamplesDecode(hex: String, text: String) {
        let bytes = stride(from: 0, to: hex.count, by: 2).map {
            UInt8(hex.dropFirst($0).prefix(2), radix: 16)!
        }
        #expect(Self.decode(bytes) == Array(text.utf8))
        #expect(Reference.decode(bytes) == Array(text.utf8))
    }

    /// Arbitrary bytes, most of them no valid Huffman string: both decoders must agree on every
    /// one, on the bytes or on refusing it.
    @Test func randomBytesDecodeAsTheReferenceDecodesThem() {
        var random = SeededRandom(seed: 0x4AFF)
        var refused = 0
        for _ in 0..<20_000 {
            let count = Int(random.next() % 24)
            // Bias towards ones so that long codes, padding and EOS all come up.
            let bytes = (0..<count).map { _ in
                random.next() % 3 == 0 ? UInt8.max : UInt8(truncatingIfNeeded: random.next())
            }
            let expected = Reference.decode(bytes)
            #expect(Self.decode(bytes) == expected, "\(bytes)")
            if expected == nil { refused += 1 }
        }
        // Both kinds came up in quantity.
        #expect(refused > 2_000 && refused < 18_000)
    }

    /// Random text, encoded and decoded: every byte value, every padding length.
    @Test func encodedRandomBytesDecodeToThemselves() {
        var random = SeededRandom(seed: 0x11FF)
        for _ in 0..<5_000 {
            let text = (0..<Int(random.next() % 40)).map { _ in UInt8(truncatingIfNeeded: random.next()) }
            var buffer = OutputBuffer()
            text.withUnsafeBytes { Huffman.encode($0, into: &buffer) }
            let coded = Array(buffer.bytes)
            #expect(Self.decode(coded) == text)
            #expect(Reference.decode(coded) == text)
        }
    }
}
