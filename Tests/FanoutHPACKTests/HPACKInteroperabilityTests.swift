import FanoutHPACK
import FanoutTestSupport
import Foundation
import NIOCore
import Testing

/// Fanout's HPACK against an implementation nobody here wrote: Python's `hpack` (installed by
/// scripts/test.sh). Blocks go both ways through one encoder and one decoder each, so the
/// dynamic tables must stay in step over many blocks.
@Suite(.requires(.hpack)) struct HPACKInteroperabilityTests {
    typealias Block = [(name: [UInt8], value: [UInt8])]

    /// APNs-like requests: repeated headers, a fresh apns-id each time, a path per device, and
    /// now and then a custom header with arbitrary bytes.
    static func blocks(count: Int, seed: UInt64) -> [Block] {
        var state = seed
        func next() -> UInt64 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return state >> 33
        }
        func hex(_ length: Int) -> [UInt8] {
            (0..<length).map { _ in Array("0123456789abcdef".utf8)[Int(next() % 16)] }
        }
        return (0..<count).map { _ in
            var block: Block = [
                (Array(":method".utf8), Array("POST".utf8)),
                (Array(":scheme".utf8), Array("https".utf8)),
                (Array(":path".utf8), Array("/3/device/".utf8) + hex(64)),
                (Array(":authority".utf8), Array("api.push.apple.com".utf8)),
                (Array("apns-topic".utf8), Array("com.example.app".utf8)),
                (Array("apns-push-type".utf8), Array("alert".utf8)),
                (Array("apns-id".utf8), hex(36)),
                (Array("authorization".utf8), Array("bearer ".utf8) + hex(next() % 4 == 0 ? 120 : 100)),
            ]
            if next() % 3 == 0 {
                block.append(
                    (
                        Array("x-custom-\(next() % 5)".utf8),
                        (0..<Int(next() % 300)).map { _ in UInt8(32 + next() % 200) }
                    )
                )
            }
            return block
        }
    }

    func runPeer(_ mode: String, input: String) throws -> String {
        try PythonPeer.run("hpack_peer.py", [mode], input: input)
    }

    static func hex(_ bytes: some Sequence<UInt8>) -> String { bytes.map { String(format: "%02x", $0) }.joined() }
    static func bytes(_ hex: String) -> [UInt8] {
        let digits = Array(hex.utf8)
        return stride(from: 0, to: digits.count, by: 2).map {
            UInt8(String(decoding: digits[$0..<$0 + 2], as: UTF8.self), radix: 16)!
        }
    }

    @Test func pythonDecodesWhatFanoutEncodes() throws {
        let blocks = Self.blocks(count: 300, seed: 1)
        var encoder = HPACKEncoder()
        var lines: [String] = []
        for (number, block) in blocks.enumerated() {
            var buffer = OutputBuffer()
            encoder.beginBlock(into: &buffer)
            for (position, field) in block.enumerated() {
                // Every indexing mode gets used.
                let indexing: HPACKEncoder.Indexing =
                    field.name == Array("authorization".utf8) && number % 2 == 0
                    ? .neverIndexed : (position + number) % 7 == 0 ? .withoutIndexing : .incremental
                field.name.withUnsafeBytes { name in
                    field.value.withUnsafeBytes { value in
                        encoder.encode(name: name, value: value, indexing: indexing, into: &buffer)
                    }
                }
            }
            lines.append(Self.hex(buffer.bytes))
        }
        let output = try runPeer("decode", input: lines.joined(separator: "\n") + "\n")
        let decoded = try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [[[String]]]
        let expected = blocks.map { $0.map { [Self.hex($0.name), Self.hex($0.value)] } }
        #expect(decoded == expected)
    }

    @Test func fanoutDecodesWhatPythonEncodes() throws {
        let blocks = Self.blocks(count: 300, seed: 2)
        let json = try JSONSerialization.data(
            withJSONObject: blocks.map { $0.map { [Self.hex($0.name), Self.hex($0.value)] } }
        )
        let output = try runPeer("encode", input: String(decoding: json, as: UTF8.self))
        var decoder = HPACKDecoder()
        var decoded: [Block] = []
        for line in output.split(separator: "\n") {
            var block: Block = []
            try Self.bytes(String(line)).withUnsafeBytes { bytes in
                try decoder.decode(bytes) { name, value, _ in block.append((Array(name), Array(value))) }
            }
            decoded.append(block)
        }
        #expect(decoded.count == blocks.count)
        for (got, want) in zip(decoded, blocks) {
            #expect(got.map(\.name) == want.map(\.name))
            #expect(got.map(\.value) == want.map(\.value))
        }
    }
}
