// The HPACK decoder fed arbitrary header blocks, with a round trip as its oracle.
//
//   input := table-size(1) list-size(1) block*
//   block := length(1) bytes(length)
//
// One decoder reads every block in turn (its dynamic table carries over, as on a connection)
// with a table of table-size × 32 bytes and a header list limit of list-size × 256 bytes. A
// decoding error ends the input, as it ends a connection. Every block that decodes is encoded
// again by `HPACKEncoder` and decoded by a second decoder: the fields must come back the same.
import FanoutHPACK
import FuzzSupport
import NIOCore

#if canImport(Glibc)
import Glibc

runFuzzer(seeds: seeds(), test)
#endif

func test(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    var input = FuzzInput(start, count)
    let tableSize = Int(input.byte()) * 32
    let listSize = max(1, Int(input.byte())) * 256
    var decoder = HPACKDecoder(maximumTableSize: tableSize, maximumHeaderListSize: listSize)
    var encoder = HPACKEncoder(maximumTableSize: 4096)
    var again = HPACKDecoder(maximumTableSize: 4096, maximumHeaderListSize: 65_536)
    var block = OutputBuffer()
    while !input.isEmpty {
        let bytes = input.take(Int(input.byte()))
        var fields: [([UInt8], [UInt8])] = []
        do {
            try decoder.decode(bytes) { name, value, _ in fields.append((Array(name), Array(value))) }
        } catch {
            return 0
        }
        precondition(decoder.dynamicTableSize <= tableSize, "the dynamic table outgrew its limit")
        block.clear()
        encoder.beginBlock(into: &block)
        for (name, value) in fields {
            name.withUnsafeBytes { name in
                value.withUnsafeBytes { value in encoder.encode(name: name, value: value, into: &block) }
            }
        }
        var decoded: [([UInt8], [UInt8])] = []
        do {
            try again.decode(block.bytes) { name, value, _ in decoded.append((Array(name), Array(value))) }
        } catch {
            fatalError("a block HPACKEncoder wrote does not decode: \(error)")
        }
        precondition(decoded.elementsEqual(fields, by: ==), "fields changed in a round trip")
    }
    return 0
}

/// An APNs request's header block twice over (the second mostly indexed), and a response's.
func seeds() -> [[UInt8]] {
    let request: [(String, String)] = [
        (":method", "POST"), (":scheme", "https"), (":path", "/3/device/" + String(repeating: "ab", count: 32)),
        (":authority", "api.push.apple.com"), ("apns-topic", "com.example.app"), ("apns-push-type", "alert"),
        ("apns-priority", "10"), ("authorization", "bearer eyJhbGciOiJFUzI1NiJ9.e30.c2ln"),
        ("content-length", "120"),
    ]
    let response: [(String, String)] = [
        (":status", "400"), ("apns-id", "8B9E4B2A-6C1F-4F9B-9D53-0F1E2D3C4B5A"), ("content-length", "30"),
    ]
    var seeds: [[UInt8]] = []
    for (lists, huffman) in [([request, request], HPACKEncoder.HuffmanPolicy.whenShorter), ([response], .never)] {
        var encoder = HPACKEncoder(huffman: huffman)
        var seed: [UInt8] = [128, 64]
        for list in lists {
            var block = OutputBuffer()
            encoder.beginBlock(into: &block)
            for (name, value) in list {
                Array(name.utf8).withUnsafeBytes { name in
                    Array(value.utf8).withUnsafeBytes { value in encoder.encode(name: name, value: value, into: &block)
                    }
                }
            }
            seed.append(UInt8(min(block.count, 255)))
            seed += block.bytes.prefix(255)
        }
        seeds.append(seed)
    }
    return seeds
}
