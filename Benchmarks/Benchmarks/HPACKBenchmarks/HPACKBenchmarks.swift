import Benchmark
import FanoutHPACK
import Foundation
import NIOCore
import NIOHPACK

// HPACK for APNs requests: Fanout's encoder and decoder against swift-nio-http2's NIOHPACK in
// one run. Each iteration is one request's header block for the next of 1024 devices: the path
// differs per device and is sent without indexing (as a client should); everything else repeats
// and is indexed after the first request.

let deviceCount = 1024

/// The request headers of device `index`; names and values as bytes.
func requestHeaders(_ index: Int) -> [(name: [UInt8], value: [UInt8], indexed: Bool)] {
    let token = (0..<32).map { String(format: "%02x", ($0 &* 31 &+ index &* 7) & 0xFF) }.joined()
    return [
        (":method", "POST", true), (":scheme", "https", true), (":path", "/3/device/\(token)", false),
        (":authority", "api.push.apple.com", true), ("apns-topic", "com.example.app", true),
        ("apns-push-type", "alert", true), ("apns-priority", "10", true), ("apns-expiration", "0", true),
        (
            "authorization",
            "bearer eyJhbGciOiJFUzI1NiIsImtpZCI6IkFCQzEyM0RFRkcifQ.eyJpc3MiOiJERUYxMjNHSElKIiwiaWF0IjoxNzAwMDAwMDAwfQ.c2lnbmF0dXJl",
            true
        ),
    ].map { (Array($0.0.utf8), Array($0.1.utf8), $0.2) }
}

let fanoutRequests = (0..<deviceCount).map(requestHeaders)
let nioRequests: [HPACKHeaders] = fanoutRequests.map { fields in
    var headers = HPACKHeaders()
    for field in fields {
        headers.add(
            name: String(decoding: field.name, as: UTF8.self),
            value: String(decoding: field.value, as: UTF8.self),
            indexing: field.indexed ? .indexable : .nonIndexable
        )
    }
    return headers
}

/// The blocks a Fanout encoder writes for every device, in order, for the decoders to read.
let encodedBlocks: [[UInt8]] = {
    var encoder = FanoutHPACK.HPACKEncoder()
    return fanoutRequests.map { fields in
        var block = OutputBuffer()
        encode(fields, with: &encoder, into: &block)
        return Array(block.bytes)
    }
}()

@inline(__always)
func encode(
    _ fields: [(name: [UInt8], value: [UInt8], indexed: Bool)],
    with encoder: inout FanoutHPACK.HPACKEncoder,
    into block: inout OutputBuffer
) {
    encoder.beginBlock(into: &block)
    for field in fields {
        field.name.withUnsafeBytes { name in
            field.value.withUnsafeBytes { value in
                encoder.encode(
                    name: name,
                    value: value,
                    indexing: field.indexed ? .incremental : .withoutIndexing,
                    into: &block
                )
            }
        }
    }
}

/// One field as h2load sends a device's `:path`: the static table's name, the value
/// Huffman-coded (nghttp2 codes a value when that is shorter; a hex token is), without indexing:
/// what the sink decodes per request from such a client, the Huffman decoder's own cost.
let huffmanPathBlocks: [[UInt8]] = {
    var encoder = FanoutHPACK.HPACKEncoder(huffman: .always)
    return fanoutRequests.map { fields in
        var block = OutputBuffer()
        encoder.beginBlock(into: &block)
        let path = fields[2]
        path.name.withUnsafeBytes { name in
            path.value.withUnsafeBytes { value in
                encoder.encode(name: name, value: value, indexing: .withoutIndexing, into: &block)
            }
        }
        return Array(block.bytes)
    }
}()

let benchmarks: @Sendable () -> Void = {
    // CI gates Fanout's allocations only (FANOUT_BENCHMARK_METRICS=malloc); NIOHPACK is the peer.
    let mallocOnly = ProcessInfo.processInfo.environment["FANOUT_BENCHMARK_METRICS"] == "malloc"
    Benchmark.defaultConfiguration = .init(
        metrics: mallocOnly ? [.mallocCountTotal] : [.wallClock, .mallocCountTotal],
        scalingFactor: .kilo,
        maxDuration: .seconds(2),
        thresholds: [.mallocCountTotal: .init(absolute: [.p90: 0])]
    )

    Benchmark("FanoutHPACKEncode-APNsRequest") { benchmark in
        var encoder = FanoutHPACK.HPACKEncoder()
        var block = OutputBuffer()
        encode(fanoutRequests[0], with: &encoder, into: &block)
        benchmark.startMeasurement()
        var device = 0
        for _ in benchmark.scaledIterations {
            block.clear()
            encode(fanoutRequests[device], with: &encoder, into: &block)
            device = (device + 1) & (deviceCount - 1)
        }
        benchmark.stopMeasurement()
        blackHole(block.count)
    }

    Benchmark("NIOHPACKEncode-APNsRequest") { benchmark in
        var encoder = NIOHPACK.HPACKEncoder(allocator: ByteBufferAllocator())
        var buffer = ByteBufferAllocator().buffer(capacity: 1024)
        try encoder.encode(headers: nioRequests[0], to: &buffer)
        benchmark.startMeasurement()
        var device = 0
        for _ in benchmark.scaledIterations {
            buffer.clear()
            try encoder.encode(headers: nioRequests[device], to: &buffer)
            device = (device + 1) & (deviceCount - 1)
        }
        benchmark.stopMeasurement()
        blackHole(buffer)
    }

    // Decoding walks the blocks in the order they were encoded, so the dynamic table stays in
    // step; the first block (which fills the table) is decoded before measuring.
    Benchmark("FanoutHPACKDecode-APNsRequest") { benchmark in
        var decoder = FanoutHPACK.HPACKDecoder()
        var checksum = 0
        try encodedBlocks[0].withUnsafeBytes {
            try decoder.decode($0) { name, value, _ in checksum &+= name.count &+ value.count }
        }
        benchmark.startMeasurement()
        var device = 1
        for _ in benchmark.scaledIterations {
            try encodedBlocks[device].withUnsafeBytes {
                try decoder.decode($0) { name, value, _ in checksum &+= name.count &+ value.count }
            }
            device = device == deviceCount - 1 ? 1 : device + 1
        }
        benchmark.stopMeasurement()
        blackHole(checksum)
    }

    Benchmark("FanoutHPACKDecode-HuffmanPath") { benchmark in
        var decoder = FanoutHPACK.HPACKDecoder()
        var checksum = 0
        benchmark.startMeasurement()
        var device = 0
        for _ in benchmark.scaledIterations {
            try huffmanPathBlocks[device].withUnsafeBytes {
                try decoder.decode($0) { name, value, _ in checksum &+= name.count &+ Int(value[value.count - 1]) }
            }
            device = (device + 1) & (deviceCount - 1)
        }
        benchmark.stopMeasurement()
        blackHole(checksum)
    }

    Benchmark("NIOHPACKDecode-APNsRequest") { benchmark in
        var decoder = NIOHPACK.HPACKDecoder(allocator: ByteBufferAllocator())
        let blocks = encodedBlocks.map { ByteBuffer(bytes: $0) }
        var first = blocks[0]
        blackHole(try decoder.decodeHeaders(from: &first))
        benchmark.startMeasurement()
        var device = 1
        for _ in benchmark.scaledIterations {
            var block = blocks[device]
            blackHole(try decoder.decodeHeaders(from: &block))
            device = device == deviceCount - 1 ? 1 : device + 1
        }
        benchmark.stopMeasurement()
    }
}
