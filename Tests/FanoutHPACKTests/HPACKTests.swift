import NIOCore
import Testing

@testable import FanoutHPACK

@Suite struct HPACKExampleTests {
    typealias Fields = [(String, String)]

    static let requests: [Fields] = [
        [(":method", "GET"), (":scheme", "http"), (":path", "/"), (":authority", "www.example.com")],
        [
            (":method", "GET"), (":scheme", "http"), (":path", "/"), (":authority", "www.example.com"),
            ("cache-control", "no-cache"),
        ],
        [
            (":method", "GET"), (":scheme", "https"), (":path", "/index.html"), (":authority", "www.example.com"),
            ("custom-key", "custom-value"),
        ],
    ]
    static let responses: [Fields] = [
        [
            (":status", "302"), ("cache-control", "private"), ("date", "Mon, 21 Oct 2013 20:13:21 GMT"),
            ("location", "https://www.example.com"),
        ],
        [
            (":status", "307"), ("cache-control", "private"), ("date", "Mon, 21 Oct 2013 20:13:21 GMT"),
            ("location", "https://www.example.com"),
        ],
        [
            (":status", "200"), ("cache-control", "private"), ("date", "Mon, 21 Oct 2013 20:13:22 GMT"),
            ("location", "https://www.example.com"), ("content-encoding", "gzip"),
            ("set-cookie", "foo=ASDJKHQKBZXOQWEOPIUAXQWEOIU; max-age=3600; version=1"),
        ],
    ]

    struct Section: Sendable, CustomTestStringConvertible {
        let name: String
        let blocks: [[UInt8]]
        let requests: Bool
        let huffman: Bool
        let tableSize: Int
        let tableSizes: [Int]
        var testDescription: String { name }
    }

    static let sections = [
        Section(
            name: "C.3",
            blocks: RFC7541Examples.c3,
            requests: true,
            huffman: false,
            tableSize: 4096,
            tableSizes: [57, 110, 164]
        ),
        Section(
            name: "C.4",
            blocks: RFC7541Examples.c4,
            requests: true,
            huffman: true,
            tableSize: 4096,
            tableSizes: [57, 110, 164]
        ),
        Section(
            name: "C.5",
            blocks: RFC7541Examples.c5,
            requests: false,
            huffman: false,
            tableSize: 256,
            tableSizes: [222, 222, 215]
        ),
        Section(
            name: "C.6",
            blocks: RFC7541Examples.c6,
            requests: false,
            huffman: true,
            tableSize: 256,
            tableSizes: [222, 222, 215]
        ),
    ]

    @Test(arguments: sections)
    func decoderReadsTheRFCBlocks(_ section: Section) throws {
        var decoder = HPACKDecoder(maximumTableSize: section.tableSize)
        for (number, block) in section.blocks.enumerated() {
            var fields: [(String, String)] = []
            try block.withUnsafeBytes { bytes in
                try decoder.decode(bytes) { name, value, _ in
                    fields.append((String(decoding: name, as: UTF8.self), String(decoding: value, as: UTF8.self)))
                }
            }
            let expected = (section.requests ? Self.requests : Self.responses)[number]
            #expect(fields.map(\.0) == expected.map(\.0), "\(section.name).\(number + 1)")
            #expect(fields.map(\.1) == expected.map(\.1), "\(section.name).\(number + 1)")
            #expect(decoder.dynamicTableSize == section.tableSizes[number], "\(section.name).\(number + 1)")
        }
    }

    @Test(arguments: sections)
    func encoderWritesTheRFCBlocks(_ section: Section) throws {
        var encoder = HPACKEncoder(maximumTableSize: section.tableSize, huffman: section.huffman ? .always : .never)
        for (number, fields) in (section.requests ? Self.requests : Self.responses).enumerated() {
            var block = OutputBuffer(capacity: 1)
            encoder.beginBlock(into: &block)
            for (name, value) in fields { encoder.encode(name: name, value: value, into: &block) }
            let bytes = Array(block.bytes)
            #expect(bytes == section.blocks[number], "\(section.name).\(number + 1)")
            #expect(encoder.dynamicTableSize == section.tableSizes[number], "\(section.name).\(number + 1)")
        }
    }
    /// A block far over the buffer's first capacity grows it and keeps every byte written.
    @Test func aOutputBufferGrowsWithoutLosingBytes() throws {
        var encoder = HPACKEncoder()
        var block = OutputBuffer(capacity: 16)
        var expected: [(String, String)] = []
        for field in 0..<200 {
            let (name, value) = (
                "x-field-\(field)", String(repeating: Character(UnicodeScalar(65 + field % 26)!), count: field)
            )
            expected.append((name, value))
            Array(name.utf8).withUnsafeBytes { name in
                Array(value.utf8).withUnsafeBytes { value in
                    encoder.encode(name: name, value: value, indexing: .withoutIndexing, into: &block)
                }
            }
        }
        var decoder = HPACKDecoder(maximumHeaderListSize: 1 << 20)
        var fields: [(String, String)] = []
        try decoder.decode(block.bytes) { name, value, _ in
            fields.append((String(decoding: name, as: UTF8.self), String(decoding: value, as: UTF8.self)))
        }
        #expect(fields.map(\.0) == expected.map(\.0))
        #expect(fields.map(\.1) == expected.map(\.1))
        block.clear()
        let count = block.count
        #expect(count == 0)
    }
}

@Suite struct HPACKPrimitiveTests {
    /// `value`'s bytes with a `prefixBits`-bit prefix, as the encoder stores integers.
    static func integer(_ value: Int, prefixBits: Int) -> [UInt8] {
        var block = OutputBuffer()
        block.writeRaw(maximum: HPACKInteger.maximumLength) {
            HPACKInteger.store(value, prefixBits: prefixBits, flags: 0, at: $0)
        }
        return Array(block.bytes)
    }

    @Test func integersOfRFCSectionC1() throws {
        for (value, prefix, bytes) in [(10, 5, [0x0A] as [UInt8]), (1337, 5, [0x1F, 0x9A, 0x0A]), (42, 8, [0x2A])] {
            let written = Self.integer(value, prefixBits: prefix)
            #expect(written == bytes)
            var offset = 0
            let read = try bytes.withUnsafeBytes { try HPACKInteger.read($0, at: &offset, prefixBits: prefix) }
            #expect(read == value)
            #expect(offset == bytes.count)
        }
    }

    @Test func integersRoundTripAndOverflowIsRefused() throws {
        for prefix in 1...8 {
            for value in [
                0, 1, (1 << prefix) - 2, (1 << prefix) - 1, 1 << prefix, 127, 128, 16_383, 1 << 20, HPACKInteger.limit,
            ] {
                var offset = 0
                let bytes = Self.integer(value, prefixBits: prefix)
                #expect(
                    try bytes.withUnsafeBytes { try HPACKInteger.read($0, at: &offset, prefixBits: prefix) } == value
                )
            }
        }
        let huge: [UInt8] = [0x1F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F]
        var offset = 0
        #expect(throws: HPACKError.integerOverflow) {
            try huge.withUnsafeBytes { try HPACKInteger.read($0, at: &offset, prefixBits: 5) }
        }
        offset = 0
        #expect(throws: HPACKError.truncated) {
            try ([0x1F, 0x80] as [UInt8]).withUnsafeBytes { try HPACKInteger.read($0, at: &offset, prefixBits: 5) }
        }
    }

    @Test func huffmanRoundTripsEveryByte() throws {
        var all = (0...255).map(UInt8.init)
        all += all.reversed()
        var buffer = OutputBuffer()
        all.withUnsafeBytes { Huffman.encode($0, into: &buffer) }
        #expect(buffer.count == all.withUnsafeBytes { Huffman.encodedLength($0) })
        let coded = Array(buffer.bytes)
        var out = [UInt8](repeating: 0, count: coded.count * 8 / 5 + 1)
        let count = try coded.withUnsafeBytes { coded in
            try out.withUnsafeMutableBytes { try Huffman.decode(coded, into: $0.baseAddress!) }
        }
        #expect(Array(out[0..<count]) == all)
    }

    @Test func huffmanCodeIsCanonicalAndPrefixFree() {
        #expect(huffmanCodes.count == 257)
        #expect(huffmanCodes[256].code == 0x3FFF_FFFF && huffmanCodes[256].length == 30)
        let sorted = huffmanCodes.indices.sorted { (huffmanCodes[$0].length, $0) < (huffmanCodes[$1].length, $1) }
        var code: UInt32 = 0
        for (position, symbol) in sorted.enumerated() {
            if position > 0 {
                code = (code + 1) << UInt32(huffmanCodes[symbol].length - huffmanCodes[sorted[position - 1]].length)
            }
            #expect(huffmanCodes[symbol].code == code, "symbol \(symbol)")
        }
    }

    @Test func malformedHuffmanIsRefused() {
        let cases: [[UInt8]] = [
            [0xFF, 0xFF, 0xFF, 0xFF],  // EOS inside the string
            [0x00],  // '0' is 00000, then three zero bits of padding: padding must be ones
            [0x1F, 0xFF],  // a symbol then eight bits of padding
        ]
        for bytes in cases {
            var out = [UInt8](repeating: 0, count: 16)
            #expect(throws: HPACKError.invalidHuffman, "\(bytes)") {
                try bytes.withUnsafeBytes { coded in
                    try out.withUnsafeMutableBytes { try Huffman.decode(coded, into: $0.baseAddress!) }
                }
            }
        }
    }
}

@Suite struct HPACKDecoderLimitTests {
    func decode(_ bytes: [UInt8], decoder: inout HPACKDecoder) throws(HPACKError) {
        let result: Result<Void, HPACKError> = bytes.withUnsafeBytes { bytes in
            do throws(HPACKError) {
                try decoder.decode(bytes) { _, _, _ in }
                return .success(())
            } catch {
                return .failure(error)
            }
        }
        try result.get()
    }

    @Test func badBlocksAreRefused() {
        let cases: [([UInt8], HPACKError)] = [
            ([0x80], .invalidIndex(0)),
            ([0xBE], .invalidIndex(62)),
            ([0x41, 0x05, 0x61], .truncated),
            ([0x40, 0x85], .truncated),
            ([0x82, 0x3F, 0x01], .misplacedTableSizeUpdate),
            ([0x3F, 0xE2, 0x1F], .tableSizeTooLarge(4097, limit: 4096)),
        ]
        for (bytes, error) in cases {
            var decoder = HPACKDecoder()
            #expect(throws: error, "\(bytes)") { try decode(bytes, decoder: &decoder) }
        }
    }

    @Test func headerListOverTheLimitIsRefused() throws {
        var encoder = HPACKEncoder()
        var buffer = OutputBuffer()
        encoder.encode(
            name: "x-long",
            value: String(repeating: "v", count: 100),
            indexing: .withoutIndexing,
            into: &buffer
        )
        let block = Array(buffer.bytes)
        var small = HPACKDecoder(maximumHeaderListSize: 100)
        #expect(throws: HPACKError.headerListTooLarge(limit: 100)) { try decode(block, decoder: &small) }
        var large = HPACKDecoder(maximumHeaderListSize: 200)
        try decode(block, decoder: &large)
    }

    /// A literal with a new name written without a look-up is byte for byte what the full
    /// path writes for a name in neither table, and decodes to the field.
    @Test func aLiteralWithoutLookUpIsTheSameBytes() throws {
        let id = "6F4A1C2E-0B3D-4E5F-8A9B-0C1D2E3F4A5B"
        for name in ["apns-id", "apns-unique-id", String(repeating: "x", count: 200)] {
            var full = HPACKEncoder()
            var literal = HPACKEncoder()
            var fullBlock = OutputBuffer()
            var literalBlock = OutputBuffer()
            Array(name.utf8).withUnsafeBytes { name in
                Array(id.utf8).withUnsafeBytes { value in
                    full.encode(name: name, value: value, indexing: .withoutIndexing, huffman: .never, into: &fullBlock)
                    literal.encodeLiteral(name: name, value: value, into: &literalBlock)
                }
            }
            let (fullBytes, literalBytes) = (Array(fullBlock.bytes), Array(literalBlock.bytes))
            #expect(literalBytes == fullBytes, "\(name)")
            var decoder = HPACKDecoder()
            var fields: [String] = []
            try literalBytes.withUnsafeBytes { bytes in
                try decoder.decode(bytes) { name, value, _ in
                    fields.append(String(decoding: name, as: UTF8.self) + "=" + String(decoding: value, as: UTF8.self))
                }
            }
            #expect(fields == [name + "=" + id])
        }
    }

    @Test func repeatedFieldsCostOneByteAfterTheFirst() throws {
        var encoder = HPACKEncoder()
        var first = OutputBuffer()
        encoder.encode(name: "apns-topic", value: "com.example.app", into: &first)
        var second = OutputBuffer()
        encoder.encode(name: "apns-topic", value: "com.example.app", into: &second)
        let (firstCount, secondBytes) = (first.count, Array(second.bytes))
        #expect(firstCount > 10)
        #expect(secondBytes == [0xBE])
        var decoder = HPACKDecoder()
        var names: [String] = []
        for block in [Array(first.bytes), secondBytes] {
            try block.withUnsafeBytes { bytes in
                try decoder.decode(bytes) { name, value, _ in
                    names.append(String(decoding: name, as: UTF8.self) + "=" + String(decoding: value, as: UTF8.self))
                }
            }
        }
        #expect(names == ["apns-topic=com.example.app", "apns-topic=com.example.app"])
    }

    /// Random blocks never crash the decoder, and each ends one of the two ways a block can: its
    /// fields, within the header list limit (name + value + 32 each), or an `HPACKError`; the
    /// dynamic table stays within its limit either way. Both ways occur, and more than one error.
    @Test func randomBlocksEndInFieldsOrAnError() {
        var state: UInt64 = 0x1234_5678
        var decoded = 0
        var refused: [String: Int] = [:]
        for _ in 0..<20_000 {
            var bytes: [UInt8] = []
            let count = Int(state % 40)
            for _ in 0..<count {
                state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                bytes.append(UInt8(truncatingIfNeeded: state >> 56))
            }
            state = state &* 6_364_136_223_846_793_005 &+ 1
            var decoder = HPACKDecoder(maximumTableSize: 256, maximumHeaderListSize: 1024)
            var listSize = 0
            let outcome: Result<Void, HPACKError> = bytes.withUnsafeBytes { block in
                do throws(HPACKError) {
                    try decoder.decode(block) { name, value, _ in listSize += name.count + value.count + 32 }
                    return .success(())
                } catch {
                    return .failure(error)
                }
            }
            switch outcome {
            case .success:
                decoded += 1
                if listSize > 1024 { Issue.record("\(bytes): a header list of \(listSize) bytes, over 1024") }
            case .failure(let error):
                let kind =
                    switch error {
                    case .truncated: "truncated"
                    case .integerOverflow: "integerOverflow"
                    case .invalidIndex: "invalidIndex"
                    case .invalidHuffman: "invalidHuffman"
                    case .tableSizeTooLarge(_, let limit): limit == 256 ? "tableSizeTooLarge" : "a wrong limit"
                    case .misplacedTableSizeUpdate: "misplacedTableSizeUpdate"
                    case .headerListTooLarge(let limit): limit == 1024 ? "headerListTooLarge" : "a wrong limit"
                    }
                refused[kind, default: 0] += 1
            }
            if decoder.dynamicTableSize > 256 {
                Issue.record("\(bytes): a dynamic table of \(decoder.dynamicTableSize) bytes, over 256")
            }
        }
        #expect(decoded > 0)
        #expect(refused.count > 1 && refused["a wrong limit"] == nil, "\(refused)")
    }
}
